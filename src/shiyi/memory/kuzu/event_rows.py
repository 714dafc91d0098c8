"""Event records mirrored in SQLite, so recall loads its candidates in one indexed query.

Measured at 100k events: loading ~40 recall candidates from Kuzu costs one primary-key lookup
each (Kuzu scans the table for ``id IN $ids``), 12-20 ms of a 50 ms hybrid query; the same
rows come out of SQLite's primary-key index in well under a millisecond.  Events never change
once written (a repeated id is ignored, deletion removes them), so the mirror stays exact when
it is written with every insert and delete.  Kuzu stays the source of truth: ids missing here
(a crash between the two writes, a store from before the mirror) are read from the graph,
and :meth:`EventRows.backfill` copies what an older store lacks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, cast

from shiyi.index.sqlite_file import SqliteFile
from shiyi.memory.models import EventRecord, SegmentType
from shiyi.memory.text.echoes import MEMORY_TOOL, legacy_prefixes

_SCHEMA = """
CREATE TABLE IF NOT EXISTS ev_rows (
    id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL,
    run_id TEXT NOT NULL,
    ts REAL NOT NULL,
    role TEXT NOT NULL,
    content TEXT NOT NULL,
    summary TEXT NOT NULL,
    iteration INTEGER NOT NULL,
    segment INTEGER NOT NULL,
    segment_type TEXT NOT NULL,
    user_id TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    derived TEXT NOT NULL DEFAULT ''
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS ev_rows_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS ev_rows_session ON ev_rows(session_id);
CREATE INDEX IF NOT EXISTS ev_rows_run ON ev_rows(run_id);
CREATE INDEX IF NOT EXISTS ev_rows_owner_newest
    ON ev_rows(user_id, agent_id, ts, iteration, segment);
"""
_COLUMNS = (
    "id, session_id, run_id, ts, role, content, summary, iteration, segment, segment_type, "
    "user_id, agent_id, derived"
)
_INSERT = f"INSERT OR IGNORE INTO ev_rows({_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)"
_BATCH = 500  # ids per SELECT: far below SQLite's 32766 bound on parameters
_COMPLETE = "complete"
_SEPARATOR = "\x1f"  # ASCII's unit separator: no event id holds it


def _row(event: EventRecord) -> tuple[object, ...]:
    return (
        event.id,
        event.session_id,
        event.run_id,
        event.ts,
        event.role,
        event.content,
        event.summary,
        event.iteration,
        event.segment,
        event.segment_type,
        event.user_id,
        event.agent_id,
        event.derived,
    )


def _record(row: Sequence[object]) -> EventRecord:
    return EventRecord(
        id=str(row[0]),
        session_id=str(row[1]),
        run_id=str(row[2]),
        ts=float(cast(float, row[3])),
        role=str(row[4]),
        content=str(row[5]),
        summary=str(row[6]),
        iteration=int(cast(int, row[7])),
        segment=int(cast(int, row[8])),
        segment_type=cast(SegmentType, row[9]),
        user_id=str(row[10]),
        agent_id=str(row[11]),
        derived=str(row[12]),
    )


class EventRows:
    """The ``ev_rows`` table: event records by id, for reads that need no graph."""

    def __init__(self, file: SqliteFile) -> None:
        self._file = file
        with file.errors("create the event table"):
            file.conn().executescript(_SCHEMA)
        self._add_derived()

    def _add_derived(self) -> None:
        """A mirror from before echoes were marked gets the column, and the marks its rows'
        text tells (a memory tool's call or result: :func:`~shiyi.memory.text.echoes.legacy_mark`);
        the graph's migration marks the same rows the same way."""
        with self._file.errors("read the event table's columns"):
            columns = {str(r[1]) for r in self._file.conn().execute("PRAGMA table_info(ev_rows)")}
        if "derived" in columns:
            return
        with self._file.write("mark the memory tools' events") as conn:
            conn.execute("ALTER TABLE ev_rows ADD COLUMN derived TEXT NOT NULL DEFAULT ''")
            for segment_type in ("tool_call", "tool_result"):
                for prefix in legacy_prefixes(segment_type):
                    conn.execute(
                        "UPDATE ev_rows SET derived = ? WHERE segment_type = ?"
                        " AND substr(content, 1, ?) = ?",
                        (MEMORY_TOOL, segment_type, len(prefix), prefix),
                    )

    def add(self, events: Iterable[EventRecord]) -> None:
        rows = [_row(e) for e in events]
        if rows:
            with self._file.write("store event records") as conn:
                conn.executemany(_INSERT, rows)

    def delete(self, ids: Sequence[str]) -> None:
        if ids:
            with self._file.write("delete event records") as conn:
                conn.executemany("DELETE FROM ev_rows WHERE id = ?", [(i,) for i in ids])

    def get(self, ids: Sequence[str]) -> dict[str, EventRecord]:
        """The mirrored records among ``ids`` (absent ids are simply missing)."""
        rows = self._by_id(_COLUMNS, ids, "read event records")
        return {str(r[0]): _record(r) for r in rows}

    def who_owns(self, ids: Sequence[str]) -> dict[str, tuple[str, str]]:
        """(user_id, agent_id) of each mirrored event among ``ids``."""
        rows = self._by_id("id, user_id, agent_id", ids, "read event owners")
        return {str(i): (str(u), str(a)) for i, u, a in rows}

    def _by_id(self, columns: str, ids: Sequence[str], action: str) -> list[tuple[Any, ...]]:
        """``columns`` of the mirrored rows among ``ids``, in batches of :data:`_BATCH`."""
        wanted = list(dict.fromkeys(ids))
        rows: list[tuple[Any, ...]] = []
        with self._file.errors(action):
            conn = self._file.conn()
            for start in range(0, len(wanted), _BATCH):
                batch = wanted[start : start + _BATCH]
                marks = ",".join("?" * len(batch))
                sql = f"SELECT {columns} FROM ev_rows WHERE id IN ({marks})"
                rows += conn.execute(sql, batch)
        return rows

    def newest(self, limit: int, user_id: str, agent_id: str) -> list[EventRecord]:
        """The ``limit`` newest mirrored events of this user and agent, newest first (one
        index range, however many other owners' events are newer)."""
        with self._file.errors("read the newest events"):
            rows = self._file.conn().execute(
                f"SELECT {_COLUMNS} FROM ev_rows WHERE user_id = ? AND agent_id = ?"
                " ORDER BY ts DESC, iteration DESC, segment DESC LIMIT ?",
                (user_id, agent_id, max(limit, 0)),
            )
            return [_record(r) for r in rows]

    def owners(self, ids: Sequence[str], session_id: str) -> set[tuple[str, str]]:
        """(user_id, agent_id) of the mirrored events among ``ids`` or in ``session_id``."""
        owners = {(e.user_id, e.agent_id) for e in self.get(ids).values()}
        with self._file.errors("read event owners"):
            rows = self._file.conn().execute(
                "SELECT DISTINCT user_id, agent_id FROM ev_rows WHERE session_id = ?",
                (session_id,),
            )
            owners.update((str(user), str(agent)) for user, agent in rows)
        return owners

    def run_members(self, run_ids: Sequence[str]) -> dict[str, list[str]]:
        """The ids of each run's mirrored events (runs without any are missing)."""
        wanted = list(dict.fromkeys(run_ids))
        members: dict[str, list[str]] = {}
        with self._file.errors("read the events of runs"):
            conn = self._file.conn()
            for start in range(0, len(wanted), _BATCH):
                batch = wanted[start : start + _BATCH]
                marks = ",".join("?" * len(batch))
                # One row per run, its ids joined: a row per turn cost 2 ms at 3,500 turns.
                sql = (
                    f"SELECT run_id, group_concat(id, '{_SEPARATOR}') FROM ev_rows"
                    f" WHERE run_id IN ({marks}) GROUP BY run_id"
                )
                for run_id, joined in conn.execute(sql, batch):
                    members[str(run_id)] = str(joined).split(_SEPARATOR)
        return members

    def around(self, spots: Sequence[tuple[str, int]], reach: int) -> list[EventRecord]:
        """The mirrored events of each spot's run within ``reach`` iterations of it."""
        found: dict[str, EventRecord] = {}
        with self._file.errors("read the turns around recall hits"):
            conn = self._file.conn()
            sql = f"SELECT {_COLUMNS} FROM ev_rows WHERE run_id = ? AND iteration BETWEEN ? AND ?"
            for run_id, iteration in dict.fromkeys(spots):
                rows = conn.execute(sql, (run_id, iteration - reach, iteration + reach))
                found.update((str(r[0]), _record(r)) for r in rows)
        return list(found.values())

    def all(self, batch: int = 5000) -> Iterator[list[EventRecord]]:
        """Every mirrored event, oldest first, in batches (``shiyi doctor``'s rebuilds)."""
        with self._file.errors("read event records"):
            cursor = self._file.conn().execute(f"SELECT {_COLUMNS} FROM ev_rows ORDER BY ts")
            while rows := cursor.fetchmany(batch):
                yield [_record(r) for r in rows]

    def ids(self) -> set[str]:
        with self._file.errors("read event ids"):
            return {str(r[0]) for r in self._file.conn().execute("SELECT id FROM ev_rows")}

    @property
    def complete(self) -> bool:
        """True once every event the graph held when the mirror began has been copied."""
        return self._file.flag("ev_rows_meta", _COMPLETE)

    def backfill(self, batches: Callable[[], Iterable[Sequence[EventRecord]]]) -> int:
        """Copy the graph's events once (a store written before the mirror existed)."""
        if self.complete:
            return 0
        copied = 0
        for batch in batches():
            self.add(batch)
            copied += len(batch)
        self._file.set_flag("ev_rows_meta", _COMPLETE)
        return copied
