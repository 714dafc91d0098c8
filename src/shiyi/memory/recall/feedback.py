"""Feedback from the best runs, in a user's task memory: runs near what they are about gain.

A user's question rarely says all that a task is about ("How should I adjust the plan this
week?"), while the runs it finds best are about that task, and so are the task's other runs
that share few of the question's words.  So the query is moved towards what the best runs
are about together (Rocchio's pseudo-relevance feedback, with the run as the document): the
mean vector of the turns of the :data:`FEEDBACK_RUNS` best runs is added to the query's, at
:data:`FEEDBACK_MIX`, and each candidate run gains :data:`FEEDBACK_WEIGHT` times its z-score
of similarity to the moved query (:func:`~shiyi.memory.recall.boosts.run_similarity_bonus`),
beside what run similarity to the query alone gives.

Measured on RealMem dev (``realmem_bench.py``), session recall@5/10/20, same stores: off
0.604 / 0.717 / 0.831; with it 0.605 / 0.727 / 0.836, each of the three personas and each
category at or above off at k = 10.  Every setting tried helped at k = 10 and 20 (best runs
1, 3 or 5; mix 0.5, 1 or 2; weight 0.1, 0.2 or 0.3: +0.005 to +0.010 at k = 10), so the
mechanism carries the gain, not the constants.  Not between people: a day of talk is about
many things (see run similarity).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from shiyi.memory.models import EventRecord

FEEDBACK_RUNS = 3
"""How many of the best runs say what the question is about."""
FEEDBACK_MIX = 0.5
"""The best runs' mean vector's weight beside the query's (both of unit length)."""
FEEDBACK_WEIGHT = 0.3
"""A run's gain per z-score of similarity to the moved query."""


def best_runs(
    scores: Mapping[str, float], events: Mapping[str, EventRecord], count: int = FEEDBACK_RUNS
) -> list[str]:
    """The ``count`` runs holding the best scored candidate turns, best first."""
    best: dict[str, float] = {}
    for key, event in events.items():
        if key in scores and scores[key] > best.get(event.run_id, -math.inf):
            best[event.run_id] = scores[key]
    return sorted(best, key=lambda run: (-best[run], run))[:count]


def moved_query(query: Sequence[float], centroid: Sequence[float]) -> list[float]:
    """``query`` (made unit length) plus :data:`FEEDBACK_MIX` times ``centroid`` (a unit
    vector); the query alone when there is no centroid."""
    norm = math.sqrt(sum(x * x for x in query)) or 1.0
    if not centroid:
        return [x / norm for x in query]
    return [x / norm + FEEDBACK_MIX * c for x, c in zip(query, centroid, strict=True)]
