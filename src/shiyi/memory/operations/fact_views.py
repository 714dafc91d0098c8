"""Facts as the memory page shows them: where each came from (turns and sessions, counted from
the turns themselves), which fact replaced a superseded one, current versions first, and the
key prefix a typed value may repeat.

Blocking (store calls): the routes run :func:`shown` in a worker thread.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from shiyi.api.schemas import FactDetail, FactReplacement
from shiyi.memory.models import FactRecord, as_read_at
from shiyi.memory.operations.wire import fact_detail
from shiyi.memory.service import Memory

# Current versions first: what the memory holds now, then what waits, then its past.
STATUS_ORDER = {"active": 0, "pending": 1, "expired": 2, "superseded": 3}


def current_first(facts: Sequence[FactRecord]) -> list[FactRecord]:
    """Active, pending, expired, then superseded; newest statement first within each."""
    return sorted(
        facts,
        key=lambda f: (STATUS_ORDER.get(f.status, 9), -(f.valid_from or f.created_at)),
    )


def shown(memory: Memory, facts: Sequence[FactRecord]) -> list[FactDetail]:
    """``facts`` on the wire with their source counts and, when superseded, their successor."""
    sources = _source_counts(memory, facts)
    successors = _successors(memory, [f for f in facts if f.status == "superseded"])
    return [
        fact_detail(fact).model_copy(
            update={
                "source_turns": sources.get(fact.id, (0, 0))[0],
                "source_sessions": sources.get(fact.id, (0, 0))[1],
                "replaced_by": successors.get(fact.id),
            }
        )
        for fact in facts
    ]


def _source_counts(memory: Memory, facts: Sequence[FactRecord]) -> dict[str, tuple[int, int]]:
    """Fact id -> (turns, sessions) among its source turns the viewer may still read: not the
    evidence count, which counts observations (one turn read twice counted twice)."""
    wanted = list(dict.fromkeys(e for f in facts for e in f.source_events))
    if not wanted:
        return {}
    events = {e.id: e for e in memory.store.get_events(wanted) if memory.viewer.sees(e)}
    counts: dict[str, tuple[int, int]] = {}
    for fact in facts:
        found = [events[i] for i in dict.fromkeys(fact.source_events) if i in events]
        counts[fact.id] = (len(found), len({e.session_id for e in found}))
    return counts


def _successors(memory: Memory, superseded: Sequence[FactRecord]) -> dict[str, FactReplacement]:
    """Superseded fact id -> the (visible) fact that replaced it."""
    if not superseded:
        return {}
    newer = memory.store.superseded_by([f.id for f in superseded])
    now = time.time()
    found = {
        f.id: as_read_at(f, now)
        for f in memory.store.get_facts(list(dict.fromkeys(newer.values())))
        if memory.viewer.sees_fact(f)
    }
    return {
        old: FactReplacement(
            id=new.id, key=new.key, value=new.value, status=new.status, valid_from=new.valid_from
        )
        for old, new_id in newer.items()
        if (new := found.get(new_id)) is not None
    }


def strip_key_prefix(key: str, value: str) -> str:
    """``value`` without copies of its own ``key:`` prefix: the page shows a fact as
    "key: value", and a value typed as shown ("lives in: Paris") would be stored as
    "lives in: lives in: Paris"."""
    prefix = key.strip()
    text = value.strip()
    while prefix and text[: len(prefix)].casefold() == prefix.casefold():
        rest = text[len(prefix) :].lstrip()
        if not rest.startswith((":", "\uff1a")):  # ASCII or full-width colon
            break
        text = rest[1:].strip()
    return text
