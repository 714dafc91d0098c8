"""The knowledge base facade the CLI, the tool and the bench use: one object per file."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Literal

from shiyi.config.settings import KnowledgeSettings, Settings
from shiyi.index.types import Embedder
from shiyi.knowledge.ingest import IngestOptions, Ingestor, Progress
from shiyi.knowledge.models import DocumentInfo, IngestReport, Passage
from shiyi.knowledge.rewrite import ModelRewriter
from shiyi.knowledge.search import KnowledgeSearch, SearchOptions, SearchResult
from shiyi.knowledge.store import KnowledgeStore
from shiyi.knowledge.summaries import ExtractiveSummarizer, ModelSummarizer, Summarizer
from shiyi.llm.protocol import ChatModel

FILE_NAME = "knowledge.sqlite3"
UPLOADS = "uploads"
"""The folder of the knowledge dir holding documents uploaded through the API."""


class KnowledgeBase:
    def __init__(
        self,
        store: KnowledgeStore,
        embedder: Embedder | None,
        settings: KnowledgeSettings,
        *,
        fast: ChatModel | None = None,
        summary_model: ChatModel | None = None,
        owns_embedder: bool = False,
        refuse: Callable[[Path], str | None] | None = None,
    ) -> None:
        """``fast`` rewrites queries and writes HyDE passages; ``summary_model`` summarises
        documents as they are added (None: extractive summaries); ``refuse`` says why a file
        may not be added (the agent's protected files), or None."""
        self.refuse = refuse
        self.store = store
        self.embedder = embedder
        self.settings = settings
        self.fast = fast
        self.summary_model = summary_model if settings.summarize_with_model else None
        self._owns_embedder = owns_embedder
        helper = ModelRewriter(fast) if fast is not None else None
        self.searcher = KnowledgeSearch(store, embedder, rewriter=helper, hyde=helper)

    @staticmethod
    def path_for(settings: Settings) -> Path:
        return settings.knowledge_dir / FILE_NAME

    @classmethod
    def exists(cls, settings: Settings) -> bool:
        return cls.path_for(settings).is_file()

    @classmethod
    def open(
        cls,
        settings: Settings,
        *,
        embedder: Embedder | None,
        fast_model: ChatModel | None,
        summary_model: ChatModel | Literal["fast"] | None = "fast",
        owns_embedder: bool = False,
        refuse: Callable[[Path], str | None] | None = None,
    ) -> KnowledgeBase:
        """Open (creating if needed) the data dir's knowledge base, searching with
        ``embedder`` (None: keywords only) and ``fast_model`` (None: no rewriting, no HyDE),
        summarising with ``summary_model`` (default: the fast model; None: extractive).
        :func:`shiyi.app.open_knowledge` picks all three from the settings.
        ``owns_embedder``: :meth:`close` closes the embedder's cache; ``refuse``: why a file
        may not be added (see :class:`~shiyi.knowledge.ingest.IngestOptions`)."""
        try:
            store = KnowledgeStore(
                cls.path_for(settings),
                embed_model=embedder.model_id if embedder is not None else None,
                dimension=embedder.dimension if embedder is not None else None,
            )
        except BaseException:
            if owns_embedder:
                _close_cache(embedder)
            raise
        summaries = fast_model if summary_model == "fast" else summary_model
        return cls(
            store,
            embedder,
            settings.knowledge,
            fast=fast_model,
            summary_model=summaries,
            owns_embedder=owns_embedder,
            refuse=refuse,
        )

    # --- documents -------------------------------------------------------------------------

    async def add(
        self, paths: Sequence[Path], progress: Progress | None = None, *, force: bool = False
    ) -> IngestReport:
        summarizer: Summarizer = (
            ModelSummarizer(self.summary_model)
            if self.summary_model is not None
            else ExtractiveSummarizer()
        )
        options = IngestOptions(
            chunk_chars=self.settings.chunk_chars,
            max_file_bytes=int(self.settings.max_file_mb * 1024 * 1024),
            force=force,
            refuse=self.refuse,
        )
        return await Ingestor(self.store, self.embedder, summarizer, options).add(paths, progress)

    def remove(self, targets: Sequence[str]) -> tuple[list[DocumentInfo], list[str]]:
        """Remove documents by path (a directory removes everything below it, whether or
        not the files still exist) or by id; returns (removed, targets that matched none).
        An uploaded document's file goes too: the upload folder's copy is nobody else's
        (``shiyi kb remove`` had left it on disk, where no command could reach it)."""
        removed: list[DocumentInfo] = []
        unmatched: list[str] = []
        uploads = (self.store.path.parent / UPLOADS).resolve()
        for target in targets:
            matched = self._match(target)
            if not matched:
                unmatched.append(target)
            for document in matched:
                self.store.remove_document(document.id)
                removed.append(document)
                if Path(document.path).parent == uploads:
                    Path(document.path).unlink(missing_ok=True)
        return removed, unmatched

    def _match(self, target: str) -> list[DocumentInfo]:
        by_id = self.store.documents_by_id([target])
        if by_id:
            return list(by_id.values())
        absolute = os.path.abspath(os.path.expanduser(target))
        return self.store.documents(under=absolute)

    def documents(self) -> list[DocumentInfo]:
        return self.store.documents()

    def counts(self) -> dict[str, int]:
        return self.store.counts()

    # --- search ----------------------------------------------------------------------------

    def options(
        self,
        *,
        limit: int | None = None,
        rewrite: bool | None = None,
        hyde: bool | None = None,
        expand: bool | None = None,
        summaries: bool | None = None,
    ) -> SearchOptions:
        """Search options from the settings; a given argument overrides its setting."""
        s = self.settings
        return SearchOptions(
            limit=limit if limit is not None else 5,
            rewrite=s.rewrite if rewrite is None else rewrite,
            rewrite_queries=s.rewrite_queries,
            hyde=s.hyde if hyde is None else hyde,
            expand=s.expand if expand is None else expand,
            summaries=s.summary_routing if summaries is None else summaries,
            candidates=s.candidates,
            window=s.window,
            parent_max_chars=s.parent_max_chars,
        )

    async def search(self, query: str, options: SearchOptions | None = None) -> SearchResult:
        return await self.searcher.search(query, options or self.options())

    def close(self) -> None:
        self.store.close()
        if self._owns_embedder:
            _close_cache(self.embedder)


def _close_cache(embedder: Embedder | None) -> None:
    """Close the embedding cache of an embedder this module built (a CachedEmbedder)."""
    cache = getattr(embedder, "cache", None)
    if cache is not None:
        cache.close()


def format_passages(
    passages: Sequence[Passage], root: Path | None = None, max_chars: int = 8000
) -> str:
    """Passages for the model: numbered, with source, heading path and recall paths."""
    if not passages:
        return "No passages in the knowledge base matched."
    blocks: list[str] = []
    used = 0
    for number, passage in enumerate(passages, start=1):
        paths = ",".join(dict.fromkeys(p.split("~")[0] for p in passage.paths))
        head = f"[{number}] {display_path(passage.doc_path, root)} › {passage.heading_path}"
        block = f"{head}  ({paths}; {passage.expansion})\n{passage.text}"
        if used + len(block) > max_chars and blocks:
            blocks.append(f"… {len(passages) - number + 1} more passages cut to fit")
            break
        blocks.append(block)
        used += len(block)
    return "\n\n".join(blocks)


def display_path(path: str, root: Path | None) -> str:
    """``path`` relative to ``root`` when below it (shorter for people and models)."""
    if root is None:
        return path
    try:
        return str(Path(path).relative_to(root))
    except ValueError:
        return path
