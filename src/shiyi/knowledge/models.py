"""The knowledge base's data model: loaded blocks, sections, chunks, summaries and hits."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, TypeAlias

BlockKind: TypeAlias = Literal["heading", "text", "code"]
SummaryLevel: TypeAlias = Literal["document", "section"]
Expansion: TypeAlias = Literal["none", "neighbours", "section"]


@dataclass(slots=True, frozen=True)
class Block:
    """A unit a loader found: a heading (with its level), a paragraph or a code block."""

    kind: BlockKind
    text: str
    level: int = 0
    """Heading depth, 1 = top; 0 for text and code."""


@dataclass(slots=True, frozen=True)
class LoadedDocument:
    title: str
    format: str
    blocks: list[Block]


@dataclass(slots=True)
class SectionDraft:
    """A heading and what follows it until the next heading of the same or a higher level."""

    ordinal: int
    title: str
    level: int
    parent: int | None
    """Ordinal of the enclosing section, None for top-level sections."""
    heading_path: str
    """Titles from the document down to this section, joined by " › "."""
    text: str = ""
    """This section's own text (not its subsections'), for its summary."""


@dataclass(slots=True, frozen=True)
class ChunkDraft:
    ordinal: int
    section: int
    text: str


@dataclass(slots=True, frozen=True)
class SummaryDraft:
    level: SummaryLevel
    section: int | None
    text: str
    method: str
    """The model that wrote it, or "extractive"."""


@dataclass(slots=True, frozen=True)
class DocumentInfo:
    id: str
    path: str
    version: str
    content_hash: str
    format: str
    title: str
    bytes: int
    added_at: float
    chunks: int
    sections: int
    summary_method: str


@dataclass(slots=True, frozen=True)
class ChunkRecord:
    id: str
    doc_id: str
    section_id: str
    ordinal: int
    text: str
    prev_id: str | None
    next_id: str | None


@dataclass(slots=True, frozen=True)
class SectionRecord:
    id: str
    doc_id: str
    parent_id: str | None
    ordinal: int
    level: int
    title: str
    heading_path: str


@dataclass(slots=True, frozen=True)
class SummaryRecord:
    id: str
    doc_id: str
    section_id: str | None
    level: SummaryLevel
    text: str
    method: str


@dataclass(slots=True)
class Passage:
    """One search result: the chunk that matched, widened by its parent or neighbours."""

    chunk_id: str
    doc_path: str
    doc_title: str
    heading_path: str
    text: str
    score: float
    paths: dict[str, int] = field(default_factory=dict)
    """Recall path -> rank at which it found the matched chunk."""
    chunk_ids: list[str] = field(default_factory=list)
    """Every chunk the passage's text covers, in document order."""
    expansion: Expansion = "none"


@dataclass(slots=True)
class IngestReport:
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    """Files of unsupported types met while walking a directory."""
    protected: list[str] = field(default_factory=list)
    """Files met while walking a directory that are never read (config, secrets)."""
    failed: list[tuple[str, str]] = field(default_factory=list)
    """(path, reason) of files that could not be ingested; what was stored stays."""
    chunks: int = 0
    sections: int = 0
    embedded: int = 0
    """Texts embedded (chunks and summaries)."""
    seconds: float = 0.0
    embed_seconds: float = 0.0
