"""The belief benchmark's scoring: what a memory believes, against what was said.

The ground truth is a list of statements (anything with ``slot``, ``value``, ``ts`` and
``hedged``; see ``beliefs_model.Statement``): per slot, the newest plainly stated value is
the one that must be current.  A belief state is a list of :class:`Belief` (a stored fact
mapped back to its slot and canonical value, with its status) plus the supersessions the
memory made.  Plain data in, numbers out: a baseline that is not shiyi is scored the same way.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

LIVE = ("active", "pending")


class Said(Protocol):
    @property
    def slot(self) -> Hashable: ...
    @property
    def value(self) -> str: ...
    @property
    def ts(self) -> float: ...
    @property
    def hedged(self) -> bool: ...


@dataclass(slots=True, frozen=True)
class Belief:
    """One stored fact as the benchmark reads it (``slot`` None: not one of ours)."""

    id: str
    slot: Hashable | None
    value: str
    status: str


def canonical(value: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", value.lower()).split())


@dataclass(slots=True)
class Truth:
    """Per slot: the newest plain value, and when each value was last said."""

    newest: dict[Hashable, str] = field(default_factory=dict)
    values: dict[Hashable, set[str]] = field(default_factory=lambda: defaultdict(set))
    last_said: dict[tuple[Hashable, str], float] = field(default_factory=dict)
    single_hedges: set[tuple[Hashable, str]] = field(default_factory=set)

    @classmethod
    def of(cls, statements: Sequence[Said]) -> Truth:
        truth = cls()
        plain: dict[Hashable, tuple[float, str]] = {}
        hedge_turns: dict[tuple[Hashable, str], set[float]] = defaultdict(set)
        plainly: set[tuple[Hashable, str]] = set()
        for s in sorted(statements, key=lambda s: s.ts):
            value = canonical(s.value)
            pair = (s.slot, value)
            truth.last_said[pair] = max(s.ts, truth.last_said.get(pair, s.ts))
            if s.hedged:
                hedge_turns[pair].add(s.ts)
                continue
            plainly.add(pair)
            truth.values[s.slot].add(value)
            plain[s.slot] = (s.ts, value)
        truth.newest = {slot: value for slot, (_, value) in plain.items()}
        truth.single_hedges = {
            pair for pair, turns in hedge_turns.items() if pair not in plainly and len(turns) == 1
        }
        return truth

    @property
    def changed(self) -> set[Hashable]:
        return {slot for slot, values in self.values.items() if len(values) > 1}


@dataclass(slots=True)
class Scores:
    slots: int = 0
    changed: int = 0
    current: int = 0
    """Slots whose active values are exactly the newest stated one."""
    current_changed: int = 0
    stale_active: int = 0
    """Slots with an active value other than the newest stated one."""
    stale_overwrites: int = 0
    """Supersessions where the newer fact's value was said before the one it replaced."""
    single_hedges: int = 0
    hedges_promoted: int = 0
    """Values only ever said hedged, in one turn, that are active anyway."""
    live: int = 0
    duplicates: int = 0
    """Live facts repeating a value already live in the same slot."""
    unmapped: int = 0

    def add(self, other: Scores) -> None:
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def row(self) -> dict[str, Any]:
        def share(a: int, b: int) -> float | None:
            return round(a / b, 3) if b else None

        return {
            "slots": self.slots,
            "changed": self.changed,
            "current=newest": share(self.current, self.slots),
            "current=newest (changed)": share(self.current_changed, self.changed),
            "stale active slots": self.stale_active,
            "stale overwrites": self.stale_overwrites,
            "hedges promoted": f"{self.hedges_promoted}/{self.single_hedges}",
            "live facts/slot": share(self.live, self.slots),
            "duplicate live facts": self.duplicates,
        }


def score(
    truth: Truth, beliefs: Sequence[Belief], overwrites: Sequence[tuple[Belief, Belief]]
) -> Scores:
    """``overwrites``: (newer, older) pairs, each a supersession the memory made."""
    scores = Scores(slots=len(truth.newest), changed=len(truth.changed))
    by_slot: dict[Hashable, list[Belief]] = defaultdict(list)
    for belief in beliefs:
        if belief.slot is None:
            scores.unmapped += 1
        else:
            by_slot[belief.slot].append(belief)
    for slot, newest in truth.newest.items():
        held = by_slot.get(slot, [])
        active = {b.value for b in held if b.status == "active"}
        if active == {newest}:
            scores.current += 1
            scores.current_changed += slot in truth.changed
        scores.stale_active += bool(active - {newest})
        live = [b.value for b in held if b.status in LIVE]
        scores.live += len(live)
        scores.duplicates += len(live) - len(set(live))
    for newer, older in overwrites:
        said_new = truth.last_said.get((newer.slot, newer.value))
        said_old = truth.last_said.get((older.slot, older.value))
        if newer.slot == older.slot and None not in (said_new, said_old):
            scores.stale_overwrites += said_new < said_old  # type: ignore[operator]
    scores.single_hedges = len(truth.single_hedges)
    active_pairs = {(b.slot, b.value) for b in beliefs if b.status == "active"}
    scores.hedges_promoted = len(truth.single_hedges & active_pairs)
    return scores


# --- the trivial baseline --------------------------------------------------------------------


@dataclass(slots=True, frozen=True)
class Written:
    """One fact an extraction call returned, in the order the calls ran."""

    slot: Hashable
    value: str
    key: str
    about: tuple[str, ...]


def exact_key(w: Written) -> Hashable:
    """The exact (normalised key, about set) an extraction wrote."""
    return (" ".join(re.sub(r"[\W_]+", " ", w.key.lower()).split()), frozenset(w.about))


def true_slot(w: Written) -> Hashable:
    """The slot the statement was really about (perfect slot identity)."""
    return w.slot


def last_write_wins(
    written: Sequence[Written], key_of: Callable[[Written], Hashable] = exact_key
) -> tuple[list[Belief], list[tuple[Belief, Belief]]]:
    """A dictionary keyed by ``key_of`` (default: the exact key and ``about`` the extractor
    wrote), each write replacing the last in the order the extractions ran: what a store
    without any belief logic would hold."""
    current: dict[Hashable, Belief] = {}
    history: list[Belief] = []
    overwrites: list[tuple[Belief, Belief]] = []
    for index, w in enumerate(written):
        key = key_of(w)
        belief = Belief(f"lww{index}", w.slot, canonical(w.value), "active")
        old = current.get(key)
        if old is not None and old.value != belief.value:
            replaced = Belief(old.id, old.slot, old.value, "superseded")
            history.append(replaced)
            overwrites.append((belief, replaced))
        current[key] = belief
    return [*current.values(), *history], overwrites


# --- echoes ----------------------------------------------------------------------------------


@dataclass(slots=True)
class EchoScores:
    queries: int = 0
    hits: int = 0
    echo_hits: int = 0
    queries_with_echo: int = 0

    def add(self, other: EchoScores) -> None:
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def count(self, hit_is_echo: Sequence[bool]) -> None:
        self.queries += 1
        self.hits += len(hit_is_echo)
        self.echo_hits += sum(hit_is_echo)
        self.queries_with_echo += any(hit_is_echo)

    def row(self) -> dict[str, Any]:
        return {
            "echo share of top-10": round(self.echo_hits / self.hits, 3) if self.hits else None,
            "queries with an echo": f"{self.queries_with_echo}/{self.queries}",
        }
