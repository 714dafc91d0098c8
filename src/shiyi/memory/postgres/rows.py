"""Rows <-> records for the PostgreSQL store.

The column lists are the dataclass fields themselves, so a field added to a record without a
migration fails loudly (unknown column) instead of being dropped silently.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import fields
from typing import Any, cast

from shiyi.memory.models import (
    EntityRecord,
    EventRecord,
    FactKind,
    FactRecord,
    FactStatus,
    RelationRecord,
    Scope,
    SegmentType,
    Tier,
)

EVENT_COLUMNS: tuple[str, ...] = tuple(f.name for f in fields(EventRecord))
_FACT_LINKS = ("entities", "source_events")  # edges (about, derived_from), not columns
FACT_COLUMNS: tuple[str, ...] = tuple(
    f.name for f in fields(FactRecord) if f.name not in _FACT_LINKS
)
ENTITY_COLUMNS = ("name", "type", "display", "aliases")


def select_list(columns: Sequence[str], alias: str) -> str:
    # "trigger" and "key" are keywords in some positions: always quote.
    return ", ".join(f'{alias}."{c}"' for c in columns)


def column_list(columns: Sequence[str]) -> str:
    return ", ".join(f'"{c}"' for c in columns)


EVENT_SELECT = select_list(EVENT_COLUMNS, "e")
FACT_SELECT = select_list(FACT_COLUMNS, "f")


def event_values(event: EventRecord) -> tuple[Any, ...]:
    return tuple(getattr(event, column) for column in EVENT_COLUMNS)


def event_from_row(row: Sequence[Any]) -> EventRecord:
    values = dict(zip(EVENT_COLUMNS, row, strict=True))
    values["segment_type"] = cast(SegmentType, values["segment_type"])
    values["iteration"] = int(values["iteration"])
    values["segment"] = int(values["segment"])
    return EventRecord(**values)


def fact_values(fact: FactRecord) -> tuple[Any, ...]:
    return tuple(getattr(fact, column) for column in FACT_COLUMNS)


def fact_from_row(row: Sequence[Any], entities: list[str], sources: list[str]) -> FactRecord:
    values = dict(zip(FACT_COLUMNS, row, strict=True))
    values["kind"] = cast(FactKind, values["kind"])
    values["scope"] = cast(Scope, values["scope"])
    values["status"] = cast(FactStatus, values["status"])
    values["tier"] = cast(Tier, values["tier"])
    values["steps"] = list(values["steps"] or [])
    values["said_in"] = list(values["said_in"] or [])
    for counter in ("access_count", "usage_count", "evidence_count"):
        values[counter] = int(values[counter])
    return FactRecord(**values, entities=entities, source_events=sources)


def entity_from_row(row: Sequence[Any]) -> EntityRecord:
    return EntityRecord(name=str(row[0]), type=str(row[1]), display=row[2] or "",
                        aliases=list(row[3] or []))  # fmt: skip


def relation_from_row(row: Sequence[Any]) -> RelationRecord:
    owner = (str(row[6] or ""), str(row[7] or "")) if len(row) > 7 else ("", "")
    return RelationRecord(src=str(row[0]), dst=str(row[1]), type=str(row[2]),
                          weight=float(row[3]), valid_from=row[4], valid_to=row[5],
                          user_id=owner[0], agent_id=owner[1])  # fmt: skip


def merged_entity(old: EntityRecord | None, new: EntityRecord) -> EntityRecord:
    """Resolution keeps every alias ever seen and prefers a specific type over 'concept'
    (the embedded store's rule)."""
    if old is None:
        return EntityRecord(new.name, new.type, new.display, _uniq(new.aliases))
    kind = old.type if new.type == "concept" and old.type != "concept" else new.type
    return EntityRecord(
        new.name, kind, new.display or old.display, _uniq([*old.aliases, *new.aliases])
    )


def _uniq(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def vector_literal(vector: Sequence[float]) -> str:
    """pgvector's text form.  repr() round-trips the float exactly; pgvector stores float32
    like the embedded store does."""
    text = ",".join(map(repr, map(float, vector)))
    if "n" in text:  # nan, inf: pgvector would refuse them with a less clear message
        raise ValueError(f"vector has a component that is not a finite number: [{text[:80]}...]")
    return f"[{text}]"
