"""What the fact writer is given and reports, and the rules comparing an observation with a
stored fact that need no store.

An :class:`Observation` is one statement an extraction (or an explicit ``remember``) made; a
:class:`WriteReport` is what writing a batch of them did.  The comparisons here read values and
evidence alone: whether two values may say the same thing (:func:`alike`: never a negation of
the other, nor another number), whether an observation is new evidence for a fact
(:func:`independent`) and whether it was said before a fact's last statement
(:func:`said_before`).  Kept apart from :mod:`shiyi.memory.lifecycle.facts` (what a write does
to the store) and :mod:`shiyi.memory.lifecycle.fact_slots` (which stored facts it is compared
with), which both use them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from shiyi.memory.models import FactKind, FactRecord, Scope, said_time
from shiyi.memory.text.contrasts import contrasted
from shiyi.memory.text.counts import numbers_in


@dataclass(slots=True)
class Observation:
    key: str
    value: str
    confidence: float
    kind: FactKind = "semantic"
    scope: Scope = "user"
    about: list[str] = field(default_factory=list)
    valid_from: float | None = None
    trigger: str = ""
    steps: list[str] = field(default_factory=list)
    source: str = "extraction"
    anchor: str = ""
    source_events: list[str] = field(default_factory=list)
    long_term: bool = False
    """Confirmed by the user ("remember this"): long term at once, no expiry."""
    said_at: float | None = None
    """When the stating turn was said (None: now, e.g. an explicit ``remember``)."""
    said_in: list[str] = field(default_factory=list)
    """The stating turn(s); empty: no turn (explicit), always independent evidence."""
    speaker: str = ""
    """The stating turn's named speaker (an imported conversation between people), if not
    the user: a fact about "I" or "the user" in that turn is about the speaker."""


@dataclass(slots=True)
class WriteReport:
    created: list[str] = field(default_factory=list)
    confirmed: list[str] = field(default_factory=list)
    activated: list[str] = field(default_factory=list)
    superseded: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    repeated: list[str] = field(default_factory=list)
    """Facts observed again from turns already counted: no confirmation."""
    historical: list[str] = field(default_factory=list)
    """Created as superseded versions: said before the slot's current value."""
    dropped: int = 0
    downgraded: int = 0

    @property
    def written(self) -> list[str]:
        return [*self.created, *self.confirmed, *self.repeated]


def normalize_value(value: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", value.lower(), flags=re.UNICODE).split())


_NEGATIONS = re.compile(
    r"\b(not|no|never|don'?t|doesn'?t|isn'?t|won'?t|can'?t|hates?|dislikes?)\b|不|没|别|讨厌",
    re.IGNORECASE,
)


_UNINFORMATIVE = frozenset({"yes", "no", "true", "false", "none", "n a", "unknown", "0", "1"})


def linkable(value: str) -> bool:
    """A value distinctive enough that two wordings giving it in one turn are one attribute
    ("yes" for "has pets" and "owns a car" is not)."""
    return len(value) > 1 and value not in _UNINFORMATIVE


def negated(text: str) -> bool:
    return bool(_NEGATIONS.search(text))


def alike(a: str, b: str) -> bool:
    """Whether two values may say the same thing (then embeddings decide): not when one is
    negated and the other not, nor when they name different numbers, in digits or words
    (:func:`~shiyi.memory.text.counts.numbers_in`: "two cats" and "three cats" differ), nor
    other values of a closed set or other names (:func:`~shiyi.memory.text.contrasts.contrasted`:
    "on Mondays" and "on Tuesdays" differ)."""
    return negated(a) == negated(b) and numbers_in(a) == numbers_in(b) and not contrasted(a, b)


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


def combine_confidence(a: float, b: float) -> float:
    """Two independent observations: 1 - (1-a)(1-b), capped below certainty, and never below
    either one (a fact the user stated outright is 1.0; saying it again confirmed it down to
    0.99)."""
    return max(a, b, min(0.99, 1.0 - (1.0 - a) * (1.0 - b)))


def _counted(fact: FactRecord) -> set[str]:
    """Turns already counted for ``fact`` (facts stored before ``said_in``: their window)."""
    return set(fact.said_in) if fact.said_in else set(fact.source_events)


def independent(fact: FactRecord, obs: Observation) -> bool:
    """Whether ``obs`` is new evidence for ``fact``: it names a stating turn not counted yet."""
    return not obs.said_in or not set(obs.said_in) <= _counted(fact)


def said_before(obs: Observation, current: FactRecord, batch: Sequence[str]) -> bool:
    """Whether ``obs`` was said before ``current``'s last statement, or by a turn that
    already stated ``current`` in an earlier write (re-read, it cannot replace what that
    turn said).  Within one write (``batch``: the ids it created), values one turn gives
    one attribute follow each other in the order the extraction listed them."""
    assert obs.said_at is not None
    last = said_time(current)
    if obs.said_at != last:
        return obs.said_at < last
    repeated = bool(obs.said_in) and set(obs.said_in) <= _counted(current)
    return repeated and current.id not in batch
