"""Facts and their SUPERSEDES links kept in SQLite too, so a damaged graph loses no belief.

``shiyi doctor --rebuild-graph`` builds a new graph from ``memory.sqlite3``.  Before this
copy the turns came back and every fact did not: what the user told memory to remember,
which statement replaced which, what was confirmed.  Each fact is kept as its whole record
(JSON of :class:`~shiyi.memory.models.FactRecord`, its ABOUT entities and DERIVED_FROM turns
included), written after the graph on every upsert and removed before it on every delete,
as the event mirror is (:mod:`shiyi.memory.kuzu.event_rows`): a crash in between leaves the
copy short, never holding what was forgotten.  Kuzu stays the source of truth and the reads
stay there; only the access counts (``touch``) are not copied, as recall statistics that a
rebuild may lose.  :meth:`FactRows.backfill` copies what a store from before the copy holds.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from shiyi.index.sqlite_file import SqliteFile
from shiyi.memory.models import FactRecord

_SCHEMA = """
CREATE TABLE IF NOT EXISTS fact_rows (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL,
    record TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS fact_supersedes (
    newer TEXT NOT NULL,
    older TEXT NOT NULL,
    PRIMARY KEY (newer, older)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS fact_supersedes_older ON fact_supersedes(older);
CREATE TABLE IF NOT EXISTS fact_rows_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""
_UPSERT = (
    "INSERT INTO fact_rows(id, user_id, record) VALUES (?,?,?)"
    " ON CONFLICT(id) DO UPDATE SET user_id = excluded.user_id, record = excluded.record"
)
_COMPLETE = "complete"
_FIELDS = frozenset(f.name for f in dataclasses.fields(FactRecord))


def encode(fact: FactRecord) -> str:
    return json.dumps(dataclasses.asdict(fact), ensure_ascii=False)


def decode(text: str) -> FactRecord:
    """A stored record; fields a later version added are dropped, missing ones default."""
    values: dict[str, Any] = json.loads(text)
    return FactRecord(**{k: v for k, v in values.items() if k in _FIELDS})


class FactRows:
    """The ``fact_rows`` and ``fact_supersedes`` tables of ``memory.sqlite3``."""

    def __init__(self, file: SqliteFile) -> None:
        self._file = file
        with file.errors("create the fact tables"):
            file.conn().executescript(_SCHEMA)

    def put(self, facts: Iterable[FactRecord]) -> None:
        rows = [(f.id, f.user_id, encode(f)) for f in facts]
        if rows:
            with self._file.write("copy facts") as conn:
                conn.executemany(_UPSERT, rows)

    def supersede(self, pairs: Iterable[tuple[str, str]]) -> None:
        """(newer fact id, older fact id) pairs, as the graph's SUPERSEDES edges."""
        rows = list(dict.fromkeys(pairs))
        if rows:
            with self._file.write("copy which fact replaced which") as conn:
                conn.executemany("INSERT OR IGNORE INTO fact_supersedes VALUES (?,?)", rows)

    def delete(self, ids: Sequence[str]) -> None:
        """Facts with every SUPERSEDES pair they are in (unknown ids are no error)."""
        keys = [(key,) for key in dict.fromkeys(ids)]
        if keys:
            with self._file.write("delete copied facts") as conn:
                conn.executemany("DELETE FROM fact_rows WHERE id = ?", keys)
                conn.executemany("DELETE FROM fact_supersedes WHERE newer = ?", keys)
                conn.executemany("DELETE FROM fact_supersedes WHERE older = ?", keys)

    def all(self, batch: int = 2000) -> Iterator[list[FactRecord]]:
        """Every copied fact, in batches."""
        with self._file.errors("read copied facts"):
            cursor = self._file.conn().execute("SELECT record FROM fact_rows ORDER BY id")
            while rows := cursor.fetchmany(batch):
                yield [decode(str(r[0])) for r in rows]

    def supersedes(self) -> list[tuple[str, str]]:
        """Every (newer, older) pair."""
        with self._file.errors("read which fact replaced which"):
            rows = self._file.conn().execute("SELECT newer, older FROM fact_supersedes")
            return [(str(n), str(o)) for n, o in rows]

    def ids(self) -> set[str]:
        with self._file.errors("read copied fact ids"):
            return {str(r[0]) for r in self._file.conn().execute("SELECT id FROM fact_rows")}

    def count(self) -> int:
        with self._file.errors("count copied facts"):
            row = self._file.conn().execute("SELECT count(*) FROM fact_rows").fetchone()
            return int(row[0])

    @property
    def complete(self) -> bool:
        """True once every fact the graph held when the copy began has been copied."""
        return self._file.flag("fact_rows_meta", _COMPLETE)

    def backfill(
        self,
        facts: Callable[[], Iterable[Sequence[FactRecord]]],
        supersedes: Callable[[], Iterable[tuple[str, str]]],
    ) -> int:
        """Copy the graph's facts and SUPERSEDES pairs once (a store from before the copy)."""
        if self.complete:
            return 0
        copied = 0
        for batch in facts():
            self.put(batch)
            copied += len(batch)
        self.supersede(supersedes())
        self._file.set_flag("fact_rows_meta", _COMPLETE)
        return copied
