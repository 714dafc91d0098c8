"""Entities (their types and aliases) and RELATED_TO edges kept in SQLite too.

The other half of what a graph rebuild (``shiyi doctor --rebuild-graph``) used to lose, beside
the facts (:mod:`shiyi.memory.kuzu.fact_rows`): that "Ana" is a person also called "Annie",
and that she is the user's sister.  Written after the graph with the graph's own merge rules
(:func:`~shiyi.memory.kuzu.queries.merged_entity`: aliases add up, a specific type beats
"concept"; an edge's weight is replaced and its validity kept unless given), removed before
it.  Kuzu stays the source of truth and the reads stay there.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from shiyi.index.sqlite_file import SqliteFile
from shiyi.memory.kuzu.queries import merged_entity
from shiyi.memory.models import EntityRecord, RelationRecord

_SCHEMA = """
CREATE TABLE IF NOT EXISTS entity_rows (
    name TEXT PRIMARY KEY,
    type TEXT NOT NULL,
    display TEXT NOT NULL,
    aliases TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS relation_rows (
    src TEXT NOT NULL,
    dst TEXT NOT NULL,
    type TEXT NOT NULL,
    user_id TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    weight REAL NOT NULL,
    valid_from REAL,
    valid_to REAL,
    PRIMARY KEY (src, dst, type, user_id, agent_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS relation_rows_dst ON relation_rows(dst);
CREATE TABLE IF NOT EXISTS entity_rows_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""
_ENTITY_COLUMNS = "name, type, display, aliases"
_UPSERT_ENTITY = f"INSERT OR REPLACE INTO entity_rows({_ENTITY_COLUMNS}) VALUES (?,?,?,?)"
_UPSERT_RELATION = (
    "INSERT INTO relation_rows VALUES (?,?,?,?,?,?,?,?)"
    " ON CONFLICT(src, dst, type, user_id, agent_id) DO UPDATE SET weight = excluded.weight,"
    " valid_from = coalesce(excluded.valid_from, valid_from),"
    " valid_to = coalesce(excluded.valid_to, valid_to)"
)
_BATCH = 500
_COMPLETE = "complete"


def _entity(row: Sequence[Any]) -> EntityRecord:
    return EntityRecord(str(row[0]), str(row[1]), str(row[2]), list(json.loads(str(row[3]))))


class EntityRows:
    """The ``entity_rows`` and ``relation_rows`` tables of ``memory.sqlite3``."""

    def __init__(self, file: SqliteFile) -> None:
        self._file = file
        with file.errors("create the entity tables"):
            file.conn().executescript(_SCHEMA)

    def upsert(self, entities: Sequence[EntityRecord]) -> None:
        """Merged into what is held, as the graph merges them."""
        if not entities:
            return
        merged: dict[str, dict[str, Any]] = {}
        held = self.get([e.name for e in entities])
        for entity in entities:
            previous = merged.get(entity.name)
            base = EntityRecord(**previous) if previous else held.get(entity.name)
            merged[entity.name] = merged_entity(base, entity)
        self._put([EntityRecord(**m) for m in merged.values()])

    def _put(self, entities: Sequence[EntityRecord]) -> None:
        """Store these records as they are (already merged)."""
        rows = [
            (e.name, e.type, e.display, json.dumps(e.aliases, ensure_ascii=False)) for e in entities
        ]
        if rows:
            with self._file.write("copy entities") as conn:
                conn.executemany(_UPSERT_ENTITY, rows)

    def relate(self, relations: Iterable[RelationRecord]) -> None:
        rows = [
            (r.src, r.dst, r.type, r.user_id, r.agent_id, float(r.weight), r.valid_from,
             r.valid_to)
            for r in relations
        ]  # fmt: skip
        if rows:
            with self._file.write("copy relations") as conn:
                conn.executemany(_UPSERT_RELATION, rows)

    def delete(self, names: Sequence[str]) -> None:
        """Entities with every relation they are an end of."""
        keys = [(name,) for name in dict.fromkeys(names)]
        if keys:
            with self._file.write("delete copied entities") as conn:
                conn.executemany("DELETE FROM entity_rows WHERE name = ?", keys)
                conn.executemany("DELETE FROM relation_rows WHERE src = ?", keys)
                conn.executemany("DELETE FROM relation_rows WHERE dst = ?", keys)

    def get(self, names: Sequence[str]) -> dict[str, EntityRecord]:
        wanted = list(dict.fromkeys(names))
        found: dict[str, EntityRecord] = {}
        with self._file.errors("read copied entities"):
            conn = self._file.conn()
            for start in range(0, len(wanted), _BATCH):
                batch = wanted[start : start + _BATCH]
                marks = ",".join("?" * len(batch))
                sql = f"SELECT {_ENTITY_COLUMNS} FROM entity_rows WHERE name IN ({marks})"
                found.update((str(r[0]), _entity(r)) for r in conn.execute(sql, batch))
        return found

    def entities(self) -> list[EntityRecord]:
        with self._file.errors("read copied entities"):
            rows = self._file.conn().execute(f"SELECT {_ENTITY_COLUMNS} FROM entity_rows")
            return [_entity(r) for r in rows]

    def relations(self) -> list[RelationRecord]:
        with self._file.errors("read copied relations"):
            rows = self._file.conn().execute(
                "SELECT src, dst, type, weight, valid_from, valid_to, user_id, agent_id"
                " FROM relation_rows"
            )
            return [
                RelationRecord(str(s), str(d), str(t), float(w), vf, vt, str(u), str(a))
                for s, d, t, w, vf, vt, u, a in rows
            ]

    @property
    def complete(self) -> bool:
        return self._file.flag("entity_rows_meta", _COMPLETE)

    def backfill(
        self,
        entities: Callable[[], Sequence[EntityRecord]],
        relations: Callable[[], Iterable[RelationRecord]],
    ) -> int:
        """Copy the graph's entities and relations once (a store from before the copy)."""
        if self.complete:
            return 0
        held = list(entities())
        self._put(held)
        self.relate(relations())
        self._file.set_flag("entity_rows_meta", _COMPLETE)
        return len(held)
