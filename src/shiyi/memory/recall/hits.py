"""From fused ids to the hits a search returns: the one place every recall path passes
through, so no path can leak another user's memories (:func:`materialize`), and the order
rules that read a hit's kind (run archives after the facts they repeat)."""

from __future__ import annotations

from collections.abc import Sequence

from shiyi.memory.models import Anchor, History, MemoryHit, shown_statuses
from shiyi.memory.recall.paths import Records
from shiyi.memory.scopes import Viewer
from shiyi.memory.text.contextual import speaker_name

SUPERSEDED_WEIGHT = 0.8
"""History questions still prefer what is current, by a little."""
ARCHIVE_WEIGHT = 0.1
"""A run archive ("run ...: goal -> answer") repeats its run's turns: below what they and
the facts say, unless the question is about earlier runs (issue 30).  Fused scores are
exp(z): at 0.3 the archive of "where do I live?" still led the fact it repeated (1.11 vs
0.98); at 0.1 it fell below it (0.37) and, past the facts, archives are also put after every
fact found (:func:`archives_after_facts`)."""


def materialize(
    scores: dict[str, float],
    ranks: dict[str, dict[str, int]],
    viewer: Viewer,
    history: History,
    records: Records,
    archives: float = 1.0,
) -> list[MemoryHit]:
    """Records for the fused ids, keeping only what ``viewer`` may see: the one place
    every recall path passes through, so no path can leak another user's memories.
    Echoes (derived turns) are no memories of their own; run archives weigh
    ``archives``."""
    ids = list(scores)
    hits: list[MemoryHit] = []
    for event in records.events_in(ids):
        if not viewer.sees(event) or event.derived:
            continue
        hits.append(
            MemoryHit(
                id=event.id,
                node="event",
                text=f"{speaker_name(event.role)}: {event.content}",
                ts=event.ts,
                score=scores[event.id],
                anchor=event.anchor,
                paths=ranks[event.id],
            )
        )
    shown = shown_statuses(history)
    for fact in records.facts_in(ids):
        if fact.status not in shown or not viewer.sees_fact(fact):
            continue
        weight = SUPERSEDED_WEIGHT if fact.status == "superseded" else 1.0
        weight *= archives if fact.source == "archive" else 1.0
        hits.append(
            MemoryHit(
                id=fact.id,
                node="fact",
                text=fact.text,
                ts=fact.updated_at or fact.created_at,
                score=scores[fact.id] * weight,
                fact_kind=fact.kind,
                confidence=fact.confidence,
                access_count=fact.access_count,
                paths=ranks[fact.id],
                entities=list(fact.entities),
                status=fact.status,
                tier=fact.tier,
                scope=fact.scope,
                valid_to=fact.valid_to,
                anchor=fact_anchor(fact.anchor, fact.created_at),
                source=fact.source,
            )
        )
    return hits


def archives_after_facts(hits: list[MemoryHit]) -> list[MemoryHit]:
    """``hits`` with no run archive ahead of another fact: an archive repeats what its run
    said, the facts are what is known (other orders kept)."""
    facts = [i for i, h in enumerate(hits) if h.node == "fact" and h.source != "archive"]
    if not facts:
        return hits
    head = hits[: facts[-1] + 1]
    moved = [h for h in head if h.source == "archive"]
    return [h for h in head if h.source != "archive"] + moved + hits[facts[-1] + 1 :]


def fact_anchor(key: str, ts: float) -> Anchor | None:
    """The anchor a fact was learned at (``run:iteration:segment``), if it has one."""
    run_id, _, rest = key.rpartition(":")
    run_id, _, iteration = run_id.rpartition(":")
    if not run_id or not iteration.isdigit() or not rest.isdigit():
        return None
    return Anchor("", run_id, int(iteration), int(rest), "response", ts)


def kind_matches(hit: MemoryHit, kinds: Sequence[str] | None) -> bool:
    if not kinds:
        return True
    kind = hit.fact_kind if hit.node == "fact" else "episodic"
    return kind in kinds or (hit.node == "event" and "event" in kinds)
