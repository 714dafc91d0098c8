"""Knowledge search: multi-query, HyDE and summary-first recall paths, fused, then widened.

Recall paths over chunks, each a ranked list fused by the memory's reciprocal-rank fusion
(:func:`shiyi.index.fusion.rrf`, the one implementation for memory and documents):

* ``vector`` / ``keyword``: the question against chunk vectors and BM25 terms (an
  English-only embedder votes by the share of the question in English:
  :func:`~shiyi.index.english.embedding_vote`);
* ``vector~i`` / ``keyword~i``: the same for each rewritten query (5.2.1), weighted lower so a
  loose rewrite cannot outvote the question;
* ``hyde``: chunk vectors against a hypothetical answer's vector (5.2.2);
* ``summary``: summary-first routing (5.2.4): the question is matched against document and
  section summaries, and the best chunks *under* the best summaries form the path; this is
  how a chunk that never names the subject of the question is found through its section.

The fused chunks are then widened (5.2.3): a hit in a short section returns the whole
section; otherwise its neighbours within the section come with it, and always its heading
path.  Passages never repeat a chunk another passage already shows.

The memory's :func:`~shiyi.memory.recall.scoring.rerank` is not applied: it weighs recency, kind,
confidence and use, which document chunks do not have; the fused order stands.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from shiyi.index.english import embedding_vote
from shiyi.index.fusion import rrf
from shiyi.index.spelling import read_as
from shiyi.index.types import Embedder, Scored
from shiyi.index.vector_cache import Matrix
from shiyi.knowledge.models import ChunkRecord, DocumentInfo, Expansion, Passage, SummaryRecord
from shiyi.knowledge.rewrite import HypotheticalWriter, QueryRewriter
from shiyi.knowledge.store import KnowledgeStore

T = TypeVar("T")


@dataclass(slots=True, frozen=True)
class SearchOptions:
    limit: int = 5
    rewrite: bool = True
    rewrite_queries: int = 3
    hyde: bool = False
    expand: bool = True
    summaries: bool = True
    candidates: int = 20
    window: int = 1
    """Neighbours on each side of a hit when its section is too long to return whole."""
    parent_max_chars: int = 1600
    """A hit's whole section is returned when its text is at most this long."""
    summary_scopes: int = 4
    """Summaries (documents or sections) whose chunks the summary path looks into."""
    per_scope: int = 3
    rrf_k: int = 60
    rewrite_weight: float = 0.6
    summary_weight: float = 1.0
    """The summary path's vote.  2.0 found more summary-only answers on the bench's generated
    pages (R@5 0.92 -> 1.00); 1.0 is kept so as not to tune to a generated set."""


@dataclass(slots=True)
class SearchResult:
    passages: list[Passage]
    queries: list[str]
    """The question, then the rewrites that were searched."""
    hypothetical: str = ""
    paths: list[str] = field(default_factory=list)
    read_as: dict[str, str] = field(default_factory=dict)
    """The question's typing slips and the words they were searched as."""


class KnowledgeSearch:
    def __init__(
        self,
        store: KnowledgeStore,
        embedder: Embedder | None,
        *,
        rewriter: QueryRewriter | None = None,
        hyde: HypotheticalWriter | None = None,
    ) -> None:
        self.store = store
        self.embedder = embedder if store.vectors else None
        self.rewriter = rewriter
        self.hyde = hyde

    async def search(self, query: str, options: SearchOptions | None = None) -> SearchResult:
        """Ask the ``fast`` model for rewrites and a hypothetical answer (side by side, when
        enabled and available), then retrieve in a worker thread."""
        options = options or SearchOptions()
        rewriting = options.rewrite and self.rewriter is not None and options.rewrite_queries
        rewrites, hypothetical = await asyncio.gather(
            self._rewrites(query, options.rewrite_queries) if rewriting else _nothing([]),
            self._hypothetical(query) if options.hyde and self.hyde is not None else _nothing(""),
        )
        return await asyncio.to_thread(self.retrieve, query, rewrites, hypothetical, options)

    async def _rewrites(self, query: str, count: int) -> list[str]:
        assert self.rewriter is not None
        return await self.rewriter.rewrite(query, count)

    async def _hypothetical(self, query: str) -> str:
        assert self.hyde is not None
        return await self.hyde.hypothetical(query)

    def retrieve(
        self,
        query: str,
        rewrites: Sequence[str] = (),
        hypothetical: str = "",
        options: SearchOptions | None = None,
    ) -> SearchResult:
        """The deterministic part: recall paths, fusion, expansion (blocking)."""
        options = options or SearchOptions()
        slips = self.store.slips(query)
        queries = [read_as(query, slips), *rewrites]
        vectors = self._embed([*queries, hypothetical] if hypothetical else queries)
        paths: dict[str, list[Scored]] = {}
        weights: dict[str, float] = {}
        for i, text in enumerate(queries):
            suffix, weight = ("", 1.0) if i == 0 else (f"~{i}", options.rewrite_weight)
            if vectors:
                paths["vector" + suffix] = self.store.vector_search(
                    "chunk", vectors[i], options.candidates
                )
            paths["keyword" + suffix] = self.store.keyword_search("chunk", text, options.candidates)
            weights["keyword" + suffix] = weight
            weights["vector" + suffix] = weight * embedding_vote(text, self._model)
        if hypothetical and vectors:
            paths["hyde"] = self.store.vector_search("chunk", vectors[-1], options.candidates)
        if options.summaries:
            paths["summary"] = self._summary_path(queries, vectors, options)
            weights["summary"] = options.summary_weight
        scores, ranks = rrf(paths, options.rrf_k, weights)
        order = sorted(scores, key=lambda key: (-scores[key], key))
        passages = self._passages(order, scores, ranks, options)
        found = [p for p in paths if paths[p]]
        return SearchResult(passages, queries, hypothetical, found, read_as=slips)

    @property
    def _model(self) -> str | None:
        return self.embedder.model_id if self.embedder is not None else None

    def _embed(self, texts: list[str]) -> list[list[float]]:
        if self.embedder is None or not any(t.strip() for t in texts):
            return []
        return self.embedder.embed(texts)

    # --- summary-first routing ----------------------------------------------------------

    def _summary_path(
        self, queries: list[str], vectors: list[list[float]], options: SearchOptions
    ) -> list[Scored]:
        """Chunks under the best-matching summaries, best scopes first, ``per_scope`` each."""
        found: dict[str, list[Scored]] = {}
        for i, text in enumerate(queries):
            if vectors:
                found[f"vector{i}"] = self.store.vector_search(
                    "summary", vectors[i], options.candidates
                )
            found[f"keyword{i}"] = self.store.keyword_search("summary", text, options.candidates)
        scores, _ = rrf(found, options.rrf_k)
        best = sorted(scores, key=lambda key: (-scores[key], key))
        summaries = self.store.summaries(best[: options.summary_scopes * 2])
        scopes = [summaries[key] for key in best if key in summaries][: options.summary_scopes]
        ranked: list[Scored] = []
        seen: set[str] = set()
        for summary in scopes:
            in_scope = self._rank_in_scope(self._chunks_under(summary), queries, vectors, options)
            for chunk_id in in_scope[: options.per_scope]:
                if chunk_id not in seen:
                    seen.add(chunk_id)
                    ranked.append(Scored(chunk_id, 1.0 / (len(ranked) + 1)))
        return ranked

    def _chunks_under(self, summary: SummaryRecord) -> list[ChunkRecord]:
        """The chunks of a summarised document, or of a section and its subsections."""
        if summary.section_id is None:
            return self.store.chunks_of_documents([summary.doc_id])
        sections = self.store.sections_of_documents([summary.doc_id])
        children: dict[str | None, list[str]] = {}
        for section in sections:
            children.setdefault(section.parent_id, []).append(section.id)
        scope, stack = [], [summary.section_id]
        while stack:
            current = stack.pop()
            scope.append(current)
            stack.extend(children.get(current, []))
        return self.store.chunks_in_sections(scope)

    def _rank_in_scope(
        self,
        chunks: list[ChunkRecord],
        queries: list[str],
        vectors: list[list[float]],
        options: SearchOptions,
    ) -> list[str]:
        """Chunk ids of one scope by their best cosine to any query (or, with no vectors,
        by BM25 order and then document order)."""
        ids = [c.id for c in chunks]
        if vectors:
            found, matrix = self.store.chunk_matrix(ids)
            if matrix is not None and len(found):
                return _by_cosine(found, matrix, vectors[: len(queries)])
        wanted = set(ids)
        hits = [
            s.id
            for text in queries
            for s in self.store.keyword_search("chunk", text, options.candidates * 5)
            if s.id in wanted
        ]
        return list(dict.fromkeys([*hits, *ids]))

    # --- parent / neighbour expansion ---------------------------------------------------

    def _passages(
        self,
        order: list[str],
        scores: dict[str, float],
        ranks: dict[str, dict[str, int]],
        options: SearchOptions,
    ) -> list[Passage]:
        # Index entries without a row (see store) are skipped; extra ids cover merged hits.
        records = self.store.chunks(order[: options.limit * 4])
        documents = self.store.documents_by_id([r.doc_id for r in records.values()])
        sections = self.store.sections([r.section_id for r in records.values()])
        passages: list[Passage] = []
        covered: set[str] = set()
        for chunk_id in order:
            if len(passages) >= options.limit:
                break
            chunk = records.get(chunk_id)
            if chunk is None or chunk.id in covered or chunk.doc_id not in documents:
                continue
            members, expansion = (
                self._widen(chunk, covered, options) if options.expand else ([chunk], "none")
            )
            covered.update(c.id for c in members)
            document: DocumentInfo = documents[chunk.doc_id]
            section = sections.get(chunk.section_id)
            passages.append(
                Passage(
                    chunk_id=chunk.id,
                    doc_path=document.path,
                    doc_title=document.title,
                    heading_path=section.heading_path if section else document.title,
                    text="\n\n".join(c.text for c in members),
                    score=scores[chunk.id],
                    paths=dict(ranks[chunk.id]),
                    chunk_ids=[c.id for c in members],
                    expansion=expansion,
                )
            )
        return passages

    def _widen(
        self, chunk: ChunkRecord, covered: set[str], options: SearchOptions
    ) -> tuple[list[ChunkRecord], Expansion]:
        """The whole section if short enough, else the hit and its neighbours in the section
        (minus chunks another passage already shows)."""
        section = self.store.chunks_in_sections([chunk.section_id])
        free = [c for c in section if c.id not in covered or c.id == chunk.id]
        if sum(len(c.text) for c in section) <= options.parent_max_chars and len(section) > 1:
            return free, "section"
        position = next(i for i, c in enumerate(section) if c.id == chunk.id)
        lo, hi = max(0, position - options.window), position + options.window + 1
        window = [c for c in section[lo:hi] if c.id not in covered or c.id == chunk.id]
        return window, "neighbours" if len(window) > 1 else "none"


async def _nothing(value: T) -> T:
    return value


def _by_cosine(ids: list[str], matrix: Matrix, vectors: list[list[float]]) -> list[str]:
    import numpy as np

    rows = matrix / np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
    queries = np.asarray(vectors, dtype=np.float32)
    queries /= np.maximum(np.linalg.norm(queries, axis=1, keepdims=True), 1e-12)
    best = (rows @ queries.T).max(axis=1)
    return [ids[i] for i in np.argsort(-best, kind="stable").tolist()]
