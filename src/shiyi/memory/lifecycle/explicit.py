"""An explicit ``remember``: a statement the user asked to keep, written long term at once,
and what writing it did (new, a confirmation, or a replacement of the slot's older values).

The caller sees the outcome: ``shiyi memory add "My favourite colour is green"`` answers
that it replaced "My favourite colour is blue" (kept in history), and a second identical
``add`` that it confirmed the fact already held, so a user never has to list memory to learn
what it now believes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from shiyi.errors import ShiyiError
from shiyi.memory.lifecycle.facts import FactWriter
from shiyi.memory.lifecycle.observations import Observation
from shiyi.memory.lifecycle.resolution import Mention
from shiyi.memory.lifecycle.slot_reading import StatedSlot
from shiyi.memory.lifecycle.slots import normalize_key
from shiyi.memory.lifecycle.stated_slots import restates, stated_slot, still_at
from shiyi.memory.lifecycle.taken_back import taken_back
from shiyi.memory.models import FactKind, FactRecord, Scope, said_time
from shiyi.memory.scopes import Viewer
from shiyi.memory.text.chat_clauses import clauses

Outcome = Literal["new", "confirmed", "replaced"]
# Kinds whose statements set an attribute; a todo or a procedure names no slot.
_SLOTTED_KINDS: frozenset[FactKind] = frozenset({"semantic", "preference"})
# Keys that name no attribute: the tool's and its arguments' names and words for "a memory".
# SmolLM2-135M called remember with key "remember" or "text" for anything; as slots they made
# every such memory replace the last one ("Arena now" superseded "My sister lives in Porto").
_NO_ATTRIBUTE = frozenset(
    {"remember", "text", "key", "kind", "scope", "value", "content", "memory", "memories",
     "fact", "facts", "info", "information", "data", "note", "notes", "thing", "sentence",
     "statement", "message", "user", "semantic", "preference", "episodic", "procedural",
     "decision", "convention", "todo", "none", "null", "string", "example"}
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Statement:
    """What the caller asked to remember."""

    text: str
    kind: FactKind = "semantic"
    key: str = ""
    """The slot it sets; empty: the statement's own wording may name one."""
    confidence: float = 1.0
    scope: Scope = "user"
    about: Sequence[str] = ()
    source_events: Sequence[str] = ()
    trigger: str = ""
    steps: Sequence[str] = ()


@dataclass(frozen=True, slots=True)
class Remembered:
    """The fact now holding the statement, and what the write did."""

    fact: FactRecord
    outcome: Outcome
    replaced: tuple[FactRecord, ...] = ()
    """The versions it superseded (kept in the slot's history), oldest first."""
    created: tuple[str, ...] = ()
    """Facts the write created (to embed)."""


def write_statement(writer: FactWriter, statement: Statement, viewer: Viewer) -> Remembered:
    key, about = statement.key, list(statement.about)
    if normalize_key(key) in _NO_ATTRIBUTE:
        key = ""
    value, taken = statement.text, None
    if not key and _stated_kind(statement):
        taken = taken_back(writer.store, writer.embedder, value, statement.scope, viewer)
    if taken is not None:  # "Sorry, I meant 4pm": the earlier statement, corrected
        value, key = taken.value, taken.earlier.key
        about = [*about, *taken.earlier.entities]
    elif not key and (stated := _stated(statement)):
        key, about = stated.key, [*about, *stated.about]
    elif not key and _stated_kind(statement) and still_at(statement.text):
        key = _confirmed_place(writer, viewer, statement.text)
    resolver = writer.resolver
    names = resolver.resolve([Mention(a) for a in about]) if about and resolver else {}
    observation = Observation(
        key=key,
        value=value,
        confidence=statement.confidence,
        kind=statement.kind,
        scope=statement.scope,
        about=[names.get(a, a) for a in about],
        source="explicit",
        source_events=list(statement.source_events),
        long_term=True,
        trigger=statement.trigger,
        steps=list(statement.steps),
    )
    report = writer.write([observation], viewer)
    fact_id = report.written[0] if report.written else ""
    facts = writer.store.get_facts([fact_id])
    if not facts:
        raise ShiyiError(
            f"could not store the memory (confidence {statement.confidence} is below "
            f"memory.lifecycle.pending_threshold)"
        )
    if taken is not None and fact_id != taken.earlier.id:
        still = [f for f in writer.store.get_facts([taken.earlier.id]) if f.status == "active"]
        writer.supersede(facts[0], still, report)
    replaced = tuple(sorted(writer.store.get_facts(report.superseded), key=said_time))
    outcome: Outcome = "confirmed" if fact_id in report.confirmed else "new"
    if replaced:
        outcome = "replaced"
    return Remembered(facts[0], outcome, replaced, tuple(report.created))


def _stated(statement: Statement) -> StatedSlot | None:
    """The slot a user's keyless statement of an attribute sets: the whole statement's, or
    else the one slot its clauses name ("Tom left the company, so I report to Priya these
    days": manager); none when clauses name different slots."""
    if not _stated_kind(statement):
        return None
    if (whole := stated_slot(statement.text)) is not None:
        return whole
    parts = clauses(statement.text)
    named = [slot for slot in map(stated_slot, parts) if slot] if len(parts) > 1 else []
    return named[0] if named and all(s.key == named[0].key for s in named) else None


def _stated_kind(statement: Statement) -> bool:
    return statement.kind in _SLOTTED_KINDS and statement.scope == "user"


_PLACES = ("works at", "studies at", "lives in")


def _confirmed_place(writer: FactWriter, viewer: Viewer, text: str) -> str:
    """The slot "I'm still at Bosch" confirms: the user's active "works at" (or "studies
    at", or "lives in": "Yep, still in Berlin") fact naming it; "" when none does, and the
    statement keeps no slot."""
    for fact in writer.store.slot_candidates([], _PLACES, ["active"], viewer.user_id):
        if viewer.sees_fact(fact) and restates(text, fact.value):
            return fact.key
    return ""
