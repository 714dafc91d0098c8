"""Which earlier statement a correction or a change of mind takes back, and what it now says.

The words are :mod:`shiyi.memory.text.corrections`'s.  The earlier statement is one of the
user's latest (:data:`LATEST`), newest first: a correction ("Sorry, I meant 4pm") takes back
the newest one it corrects, read with the new value in its place ("The meeting with Priya
is at 4pm"); a change of mind ("We changed our plans, we're going to Greece instead") takes
back the plan nearest it by meaning, if near enough (:data:`PLAN_SIMILARITY`).
"""

from __future__ import annotations

from dataclasses import dataclass

from shiyi.memory.lifecycle.observations import cosine
from shiyi.memory.models import FactRecord, Scope, said_time
from shiyi.memory.protocol import Embedder, MemoryStore
from shiyi.memory.scopes import Viewer
from shiyi.memory.text.corrections import corrected, plan, taking_back

LATEST = 5
"""How many of the user's newest statements a correction may mean: one corrects what one
just said."""
PLAN_SIMILARITY = 0.3
"""Cosine (all-MiniLM-L6-v2) from which a change of mind takes back a plan.  On pairs
written for it, the plans it changes scored 0.35-0.44 ("I'm planning to buy a Tesla" /
"Changed my mind, getting a Hyundai Ioniq instead": 0.42) and unrelated ones 0.01-0.13
("... buy a Tesla" / "Change of plans, we're staying home this summer")."""
_STATED = ("semantic", "preference")


@dataclass(frozen=True, slots=True)
class TakenBack:
    earlier: FactRecord
    value: str
    """What the statement says is so: the earlier one corrected, or the statement itself."""


def taken_back(
    store: MemoryStore, embedder: Embedder | None, text: str, scope: Scope, viewer: Viewer
) -> TakenBack | None:
    """The earlier statement ``text`` takes back, if it takes one back."""
    how = taking_back(text)
    if how is None:
        return None
    latest = sorted(
        (
            f
            for f in store.get_facts(store.latest_facts(viewer.user_id, LATEST))
            if f.status == "active"
            and f.kind in _STATED
            and f.scope == scope
            and f.user_id == viewer.user_id
            and viewer.sees_fact(f)
        ),
        key=said_time,
        reverse=True,
    )
    if how.how == "correction":
        for earlier in latest:
            if value := corrected(how.rest, earlier.value):
                return TakenBack(earlier, value)
        return None
    plans = [f for f in latest if plan(f.value)]
    if not plans or embedder is None:
        return None
    new, *olds = embedder.embed([text, *(f.value for f in plans)])
    score, nearest = max(
        ((cosine(new, old), f) for old, f in zip(olds, plans, strict=True)), key=lambda p: p[0]
    )
    return TakenBack(nearest, text) if score >= PLAN_SIMILARITY else None
