"""Knowledge-base passages for the hint of a bug fix (seed 001, 3.3: similar problems from
episodic memory, documentation from the knowledge base).

Keywords only: a prefetch never embeds or calls a model, so the lookup costs an FTS query.
The knowledge base opens on the first bug-fix message, not before.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from shiyi.knowledge import KnowledgeBase

WIDTH = 240
"""Characters of a passage in the hint: its opening says what it is; search_knowledge
gives the rest."""


class DocumentHints:
    def __init__(self, open_kb: Callable[[], KnowledgeBase], limit: int = 1) -> None:
        self._open = open_kb
        self._kb: KnowledgeBase | None = None
        self._lock = threading.Lock()
        self.limit = limit

    def _base(self) -> KnowledgeBase:
        with self._lock:
            if self._kb is None:
                self._kb = self._open()
            return self._kb

    def lookup(self, query: str) -> str:
        """The best-matching passages as a ``<documents>`` block, or "" when none match."""
        store = self._base().store
        ids = [s.id for s in store.keyword_search("chunk", query, self.limit * 4)]
        chunks = store.chunks(ids)
        found = [chunks[i] for i in ids if i in chunks][: self.limit]
        if not found:
            return ""
        documents = store.documents_by_id([c.doc_id for c in found])
        lines = ["<documents>"]
        for chunk in found:
            where = documents[chunk.doc_id].path if chunk.doc_id in documents else chunk.doc_id
            text = " ".join(chunk.text.split())
            text = text if len(text) <= WIDTH else text[: WIDTH - 1] + "…"
            lines.append(f"  - [{where}] {text}")
        lines.append("</documents>")
        return "\n".join(lines)

    def close(self) -> None:
        with self._lock:
            if self._kb is not None:
                self._kb.close()
                self._kb = None
