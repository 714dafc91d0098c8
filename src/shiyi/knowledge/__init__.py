"""The document knowledge base (seed 001, section 5): ingestion and enhanced RAG.

Files become sections and chunks (with parent and neighbour links) plus a summary index;
search fuses vector, keyword, rewritten-query, HyDE and summary-first recall paths with the
memory's reciprocal-rank fusion and widens hits to their section or neighbours.  Nothing
here imports the agent or the interfaces.
"""

from __future__ import annotations

from shiyi.errors import IngestError
from shiyi.knowledge.base import KnowledgeBase, format_passages
from shiyi.knowledge.models import DocumentInfo, IngestReport, Passage
from shiyi.knowledge.search import SearchOptions, SearchResult

__all__ = [
    "DocumentInfo",
    "IngestError",
    "IngestReport",
    "KnowledgeBase",
    "Passage",
    "SearchOptions",
    "SearchResult",
    "format_passages",
]
