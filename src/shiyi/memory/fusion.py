"""Reciprocal-rank fusion and reranking of memories found by several recall paths."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from shiyi.memory.models import MemoryHit, Scored

# Procedures beat general knowledge, which beats what merely happened (seed 001, 3.1).
DEFAULT_KIND_WEIGHTS: dict[str, float] = {
    "procedural": 1.3,
    "preference": 1.15,
    "convention": 1.15,
    "decision": 1.15,
    "semantic": 1.1,
    "todo": 1.05,
    "episodic": 1.0,
    "event": 1.0,
}


# How much each recall path's vote counts in the fusion.  The graph and recency paths
# return whatever touches an entity or is new, so they vote with less weight.
DEFAULT_PATH_WEIGHTS: dict[str, float] = {
    "vector": 1.0,
    "keyword": 1.0,
    "graph": 0.5,
    "recent": 0.25,
}


@dataclass(slots=True, frozen=True)
class RerankWeights:
    rrf_k: int = 60
    path_weights: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_PATH_WEIGHTS))
    recency_half_life_days: float = 30.0
    recency_weight: float = 0.3
    frequency_weight: float = 0.05
    """Small: every retrieval counts as a use, so a larger boost lets often-shown memories
    crowd out better matches (lifecycle bench: 0.1 ranked the current value first in 92%
    of queries, 0.05 in 98%)."""
    kind_weights: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_KIND_WEIGHTS))


def rrf(
    paths: Mapping[str, Sequence[Scored]],
    k: int,
    weights: Mapping[str, float] | None = None,
) -> tuple[dict[str, float], dict[str, dict[str, int]]]:
    """Fuse ranked lists: each path adds weight / (k + rank) for every id it found.

    Returns the fused score per id and, per id, the rank at which each path found it.
    """
    scores: dict[str, float] = {}
    ranks: dict[str, dict[str, int]] = {}
    for name, found in paths.items():
        weight = 1.0 if weights is None else weights.get(name, 1.0)
        for rank, item in enumerate(found, start=1):
            scores[item.id] = scores.get(item.id, 0.0) + weight / (k + rank)
            ranks.setdefault(item.id, {})[name] = rank
    return scores, ranks


def rerank(hits: Sequence[MemoryHit], weights: RerankWeights) -> list[MemoryHit]:
    """Order hits by fused relevance adjusted for recency, kind, confidence and use.

    Recency decays from the newest memory among the candidates, not from the wall clock, so
    an imported old history still ranks its latest turns first.
    """
    if not hits:
        return []
    newest = max(hit.ts for hit in hits)
    half_life = weights.recency_half_life_days * 86400.0
    for hit in hits:
        age = max(0.0, newest - hit.ts)
        decay = 0.5 ** (age / half_life) if half_life > 0 else 1.0
        kind = weights.kind_weights.get(hit.fact_kind or "event", 1.0)
        use = 1.0 + weights.frequency_weight * math.log1p(hit.access_count)
        confidence = 0.5 + 0.5 * max(0.0, min(1.0, hit.confidence))
        hit.score *= (1.0 + weights.recency_weight * decay) * kind * use * confidence
    return sorted(hits, key=lambda h: h.score, reverse=True)
