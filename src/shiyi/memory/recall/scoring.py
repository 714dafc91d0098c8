"""Fusing what several recall paths found, and reranking the fused memories.

Two fusions:

* :func:`score_fusion` (hybrid's default): each path's scores become z-scores over what that
  path returned, and an id is scored by the weighted mean of its paths' z-scores; an id a path
  did not return gets that path's lowest z-score (its true score is at most that).  A match
  that stands far above the rest of its path (a rare exact keyword) keeps that lead; RRF sees
  only ranks, so a path's first and second place count nearly alike however far apart their
  scores are.  On the LoCoMo dev conversations (BM25 + MiniLM, recall@10) score fusion gave
  0.683, RRF 0.629 and BM25 alone 0.652: RRF fell below its best input.
* :func:`~shiyi.index.fusion.rrf`, reciprocal-rank fusion, kept for the ``fusion="rrf"``
  comparison.

The graph path votes at half weight: its entities now include a turn's topics, weighted by
how few turns mention them (:mod:`shiyi.memory.text.topics`), so its score says how much a memory
shares with the query.  Recency only says "new": it adds a small tie-breaking bonus
(:data:`TIE_BREAKERS`) that can never lift a weak match over a strong one.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace

from shiyi.index.english import embedding_vote
from shiyi.memory.models import MemoryHit, Scored
from shiyi.memory.recall.config import RerankWeights

SCORED_PATHS = ("vector", "keyword", "graph")
"""Paths whose scores measure how well a memory matches the query."""
TIE_BREAKERS: dict[str, float] = {"recent": 0.05}
"""Bonus (in z-score units, 1/rank of the path's list) for being found by these paths."""


def _z_scores(found: Sequence[Scored]) -> tuple[dict[str, float], float]:
    """Each found id's z-score, and the score of an id the path did not find.

    A missed id scores at most the path's lowest, so it gets the lowest z-score.  When the
    path found one id (or several, all equal) there is no spread: the found count as 1.0 and
    the missed as -1.0, the gap of a two-item list.  Giving the missed the found ids' score
    would silence the path: a keyword path that found only the fact naming "Bluefinch" would
    rank it no higher than every turn it missed.
    """
    values = [item.score for item in found]
    mean = sum(values) / len(values)
    spread = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
    if spread < 1e-9:
        return {item.id: 1.0 for item in found}, -1.0
    z = {item.id: (item.score - mean) / spread for item in found}
    return z, min(z.values())


def score_fusion(
    paths: Mapping[str, Sequence[Scored]],
    weights: Mapping[str, float] | None = None,
    *,
    abstain: Mapping[str, Collection[str]] | None = None,
) -> tuple[dict[str, float], dict[str, dict[str, int]]]:
    """Fuse by z-scores (see the module doc); returns the fused score and the ranks per id.

    Only :data:`SCORED_PATHS` vote; :data:`TIE_BREAKERS` paths add their small bonus.
    ``abstain``: per path, ids it could not score at all (a memory written a moment ago has
    no vector yet); that path's vote is left out of their mean instead of counting as its
    worst, so a fresh fact the keyword path finds is not buried under old turns.
    """
    ranks: dict[str, dict[str, int]] = {}
    for name, found in paths.items():
        for rank, item in enumerate(found, start=1):
            ranks.setdefault(item.id, {}).setdefault(name, rank)
    voters = {n: f for n, f in paths.items() if n not in TIE_BREAKERS and f}
    sums = dict.fromkeys(ranks, 0.0)
    totals = dict.fromkeys(ranks, 0.0)
    for name, found in voters.items():
        weight = 1.0 if weights is None else weights.get(name, 1.0)
        silent = (abstain or {}).get(name, ())
        z, floor = _z_scores(found)
        for key in sums:
            if key in z or key not in silent:
                sums[key] += weight * z.get(key, floor)
                totals[key] += weight
    scores = {key: sums[key] / totals[key] if totals[key] else 0.0 for key in sums}
    for name, bonus in TIE_BREAKERS.items():
        for rank, item in enumerate(paths.get(name, ()), start=1):
            scores[item.id] += bonus / rank
    return scores, ranks


def votes_for(
    query: str, weights: Mapping[str, float], embedder_model: str | None
) -> Mapping[str, float]:
    """The paths' votes for ``query``: an English-only embedder's (``embedder_model``,
    :func:`~shiyi.index.english.reads_english_only`) counts by the share of the query's
    words English knows (:func:`~shiyi.index.english.english_share`); its vector of an
    Indonesian or Spanish question says little, and the keyword path reads any language.
    RealMem dev, the 37 queries mostly in Indonesian, R@10: 0.505 -> 0.518 (the 351 others
    0.750 -> 0.751); LoCoMo dev is English and unchanged."""
    vote = embedding_vote(query, embedder_model)
    if vote >= 1.0:
        return weights
    return {**weights, "vector": weights.get("vector", 1.0) * vote}


def rerank(
    hits: Sequence[MemoryHit],
    weights: RerankWeights,
    *,
    recent: bool = True,
    prefer: Sequence[str] = (),
) -> list[MemoryHit]:
    """Order hits by fused relevance adjusted for recency, kind, confidence and use.

    Recency decays from the newest memory among the candidates, not from the wall clock, so
    an imported old history still ranks its latest turns first; unless ``recent`` (the query
    asks for what is new) it only breaks ties.  ``prefer``: fact kinds the query's intent
    favours (a procedure for "how do I ..."; "event" for a turn), boosted by 1.2.
    """
    if not hits:
        return []
    newest = max(hit.ts for hit in hits)
    half_life = weights.recency_half_life_days * 86400.0
    recency = weights.recency_weight if recent else weights.recency_tie_weight
    for hit in hits:
        age = max(0.0, newest - hit.ts)
        decay = 0.5 ** (age / half_life) if half_life > 0 else 1.0
        kind = weights.kind_weights.get(hit.fact_kind or "event", 1.0)
        if (hit.fact_kind or "event") in prefer:
            kind *= 1.2
        use = 1.0 + weights.frequency_weight * math.log1p(hit.access_count)
        confidence = 0.5 + 0.5 * max(0.0, min(1.0, hit.confidence))
        hit.score *= (1.0 + recency * decay) * kind * use * confidence
    return sorted(hits, key=lambda h: h.score, reverse=True)


def one_per_run(hits: Sequence[MemoryHit]) -> list[MemoryHit]:
    """``hits`` (best first) reordered so that every run enters once before any enters twice:
    each run's best hit in score order, then each run's second best, and so on.  Facts
    without an anchor are no run's and keep their place among the first.  Only the order
    changes; the memory's search then hands the scores out by place (:func:`placed_scores`).

    Meant for a user–assistant memory, where a run is one task or thread of work and its
    turns repeat each other's subject: there the top k names k runs, and a run's other turns
    are one ``expand`` away (:meth:`~shiyi.memory.service.Memory.expand`).  A softer rule, a
    run's n-th hit counting at ``decay ** n`` of its score while ordering, was measured first:
    RealMem dev recall@10 0.621 at decay 0.85, 0.642 at 0.7, 0.655 at 0.5, 0.676 at 0.3 and
    0.706 here (decay 0), rising in every category and for each of the three personas.
    """
    seen: dict[str, int] = {}
    tiers: list[int] = []
    for hit in hits:
        run = _run_of(hit)
        tiers.append(seen.get(run, 0) if run else 0)
        if run:
            seen[run] = seen.get(run, 0) + 1
    order = sorted(range(len(hits)), key=tiers.__getitem__)  # stable: score order per tier
    return [hits[i] for i in order]


def turn_about(hits: Sequence[MemoryHit], speaker_of: Mapping[str, str]) -> list[MemoryHit]:
    """``hits`` (best first) reordered so that each speaker in ``speaker_of`` (hit id ->
    one of the people a question asks about together) takes a place in turn: each one's
    best hit in score order, then each one's second, and so on; hits of no such speaker (a
    fact, a third person) take turns as one more.  Only the order changes (as in
    :func:`one_per_run`).

    For a question about what several people both or each did ("How do Jon and Gina both
    destress?"): the answer is in each one's turns, while the words of the question may
    match one of them far better, whose turns then filled the top k."""
    seen: dict[str, int] = {}
    tiers: list[int] = []
    for hit in hits:
        who = speaker_of.get(hit.id, "")
        tiers.append(seen.get(who, 0))
        seen[who] = seen.get(who, 0) + 1
    order = sorted(range(len(hits)), key=tiers.__getitem__)  # stable: score order per tier
    return [hits[i] for i in order]


def _run_of(hit: MemoryHit) -> str:
    return hit.anchor.run_id if hit.anchor is not None else ""


def newest_of_equals(
    hits: Sequence[MemoryHit], matched: Mapping[str, frozenset[str]]
) -> list[MemoryHit]:
    """``hits`` with the turns that match the same words of the question put newest first,
    in the places they held.  ``matched``: the question's words each turn holds (a turn left
    out holds too few of them to count as an answer).

    Meant for a user–assistant memory, where a plan or a value is stated and later changed
    ("a budget of 2,000 euros" ... "my budget is now 2,500 euros"): when the question's words
    cannot tell two answers apart, the newer one is the current one, and what decided their
    scores (length, a closer embedding) says nothing about which is current.  Questions about
    the past keep the scored order (the caller does not reorder them).  Only the order
    changes, and the caller passes the hits it shows, so recall does not move (RealMem dev
    R@5 / R@10 / R@20 0.600 / 0.722 / 0.826 before and after; over every candidate, a newer
    turn from below the cut took an older session's place: 0.597 / 0.718 / 0.822)."""
    groups: dict[frozenset[str], list[int]] = {}
    for position, hit in enumerate(hits):
        words = matched.get(hit.id)
        if hit.node == "event" and words:
            groups.setdefault(words, []).append(position)
    order = list(hits)
    for positions in groups.values():
        newest = sorted((hits[p] for p in positions), key=lambda h: h.ts, reverse=True)
        for position, hit in zip(positions, newest, strict=True):
            order[position] = hit
    return order


def placed_scores(hits: Sequence[MemoryHit]) -> list[MemoryHit]:
    """``hits`` in their order, each with its place's score: the scores sorted best first
    and handed out by place.

    The reorders after scoring (one hit per run first, the newest of equal answers, the
    user's own facts first) move hits without rescoring them, so a hit put ahead could show
    a lower score than one after it; whoever reads the scores (a ``threshold``, a client
    sorting by them) would then undo the order, putting an older value before the current
    one.  Handed out by place, the scores fall with the order and a threshold keeps as many
    hits as it would have kept before the reorder.  :meth:`shiyi.memory.service.Memory.search`
    (every interface's search) returns these; the retriever's own hits keep their fused
    scores, which the tests of its boosts compare."""
    scores = sorted((hit.score for hit in hits), reverse=True)
    return [
        hit if hit.score == score else replace(hit, score=score)
        for hit, score in zip(hits, scores, strict=True)
    ]
