"""Reciprocal-rank fusion of ranked lists (the knowledge base's hybrid search, and memory's
``fusion="rrf"`` comparison; memory's default score fusion is
:mod:`shiyi.memory.recall.scoring`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from shiyi.index.types import Scored


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
