"""Multi-path recall: vector, keyword, graph and recency paths, fused and reranked.

Each path is a separate store query (one combined Cypher query was measured 50x slower).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Literal, TypeAlias

from shiyi.memory.entities import extract_entities, normalize_name
from shiyi.memory.fusion import RerankWeights, rerank, rrf
from shiyi.memory.models import MemoryHit, Scored
from shiyi.memory.protocol import Embedder, MemoryStore
from shiyi.memory.text import query_terms

Mode: TypeAlias = Literal["hybrid", "semantic", "graph", "recent", "keyword"]
MODES: tuple[Mode, ...] = ("hybrid", "semantic", "graph", "recent", "keyword")
_PATHS: dict[Mode, tuple[str, ...]] = {
    "hybrid": ("vector", "keyword", "graph", "recent"),
    "semantic": ("vector",),
    "keyword": ("keyword",),
    "graph": ("graph",),
    "recent": ("recent",),
}
RECENT_DEPTH = 5  # the recency path only nudges: a handful of the newest turns


class Retriever:
    def __init__(
        self,
        store: MemoryStore,
        embedder: Embedder | None,
        weights: RerankWeights | None = None,
        candidates: int = 20,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.weights = weights or RerankWeights()
        self.candidates = candidates

    def search(
        self,
        query: str,
        *,
        mode: Mode = "hybrid",
        kinds: Sequence[str] | None = None,
        limit: int = 5,
        touch: bool = True,
    ) -> list[MemoryHit]:
        if mode not in _PATHS:
            raise ValueError(f"unknown mode {mode!r}; use one of {', '.join(MODES)}")
        found = {name: self._path(name, query) for name in _PATHS[mode]}
        scores, ranks = rrf(found, self.weights.rrf_k, self.weights.path_weights)
        hits = [h for h in self._materialize(scores, ranks) if _kind_matches(h, kinds)]
        best = rerank(hits, self.weights)[:limit]
        if touch and best:
            self.store.touch([h.id for h in best], at=time.time())
        return best

    # --- recall paths ------------------------------------------------------------------

    def _path(self, name: str, query: str) -> list[Scored]:
        if name == "vector":
            return self._vector(query)
        if name == "keyword":
            return self.store.keyword_search(query, self.candidates)
        if name == "graph":
            return self._graph(query)
        return [Scored(e.id, e.ts) for e in self.store.recent_events(RECENT_DEPTH)]

    def _vector(self, query: str) -> list[Scored]:
        if self.embedder is None or not query.strip():
            return []
        vector = self.embedder.embed([query])[0]
        merged = self.store.vector_search("event", vector, self.candidates)
        merged += self.store.vector_search("fact", vector, self.candidates)
        return sorted(merged, key=lambda s: s.score, reverse=True)[: self.candidates]

    def query_entities(self, query: str) -> list[str]:
        """Known entities named in the query: extracted names plus plain terms that match."""
        names = {e.name for e in extract_entities(query)}
        names |= {normalize_name(term) for term in query_terms(query)}
        known = self.store.find_entities(sorted(n for n in names if n))
        return [entity.name for entity in known]

    def _graph(self, query: str) -> list[Scored]:
        names = self.query_entities(query)
        if not names:
            return []
        around = self.store.neighbourhood(names, hops=2, limit=self.candidates)
        merged = [*around.event_ids, *around.fact_ids]
        return sorted(merged, key=lambda s: s.score, reverse=True)[: self.candidates]

    # --- from ids to hits ----------------------------------------------------------------

    def _materialize(
        self, scores: dict[str, float], ranks: dict[str, dict[str, int]]
    ) -> list[MemoryHit]:
        ids = list(scores)
        hits: list[MemoryHit] = []
        for event in self.store.get_events(ids):
            hits.append(
                MemoryHit(
                    id=event.id,
                    node="event",
                    text=f"{event.role}: {event.content}",
                    ts=event.ts,
                    score=scores[event.id],
                    anchor=event.anchor,
                    paths=ranks[event.id],
                )
            )
        for fact in self.store.get_facts(ids):
            if fact.status not in ("active", "pending"):
                continue
            hits.append(
                MemoryHit(
                    id=fact.id,
                    node="fact",
                    text=fact.text,
                    ts=fact.updated_at or fact.created_at,
                    score=scores[fact.id],
                    fact_kind=fact.kind,
                    confidence=fact.confidence,
                    access_count=fact.access_count,
                    paths=ranks[fact.id],
                    entities=list(fact.entities),
                )
            )
        return hits


def _kind_matches(hit: MemoryHit, kinds: Sequence[str] | None) -> bool:
    if not kinds:
        return True
    kind = hit.fact_kind if hit.node == "fact" else "episodic"
    return kind in kinds or (hit.node == "event" and "event" in kinds)
