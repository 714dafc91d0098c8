"""MENTIONS edges mirrored in SQLite, for the graph path's two hot reads.

The graph path asks, for the entities a query names, how many turns mention each (to weigh
and budget them, :mod:`shiyi.memory.text.topics`) and which turns those are.  Measured on 100k
turns of real conversation (``bench/graph_scale_bench.py``'s store), Kuzu answered the
second in p50 21 ms / p95 33 ms of a 38 ms graph search: it reads each mentioning event node
to return its id and time.  Here both come out of one index range: ``(entity, event_id)``
rows carrying the event's time, and a per-entity count kept by triggers.

Kuzu stays the source of truth.  The mirror is written after the graph on every link and
before it on every delete (so it is never stale, at worst short after a crash), and
:meth:`MentionRows.backfill` copies what a store from before the mirror holds.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from shiyi.index.sqlite_file import SqliteFile
from shiyi.memory.kuzu.graph import Owner

log = logging.getLogger(__name__)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS mentions (
    entity TEXT NOT NULL,
    event_id TEXT NOT NULL,
    ts REAL NOT NULL,
    user_id TEXT NOT NULL DEFAULT '',
    agent_id TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (entity, event_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS mentions_by_event ON mentions(event_id);
CREATE TABLE IF NOT EXISTS mention_counts (
    entity TEXT PRIMARY KEY,
    n INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TRIGGER IF NOT EXISTS mention_added AFTER INSERT ON mentions BEGIN
    INSERT INTO mention_counts(entity, n) VALUES (new.entity, 1)
    ON CONFLICT(entity) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER IF NOT EXISTS mention_removed AFTER DELETE ON mentions BEGIN
    UPDATE mention_counts SET n = n - 1 WHERE entity = old.entity;
END;
CREATE TABLE IF NOT EXISTS mentions_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""
# Whose turn mentions the entity: one owner's mentions of an entity are one index range, so
# an entity another user mentions 100,000 times is no hub for a user who mentions it twice.
_OWNER_COLUMNS = ("user_id", "agent_id")
_OWNER_INDEX = "CREATE INDEX IF NOT EXISTS mentions_by_owner ON mentions(entity, user_id, agent_id)"
_FILL_OWNERS = (
    "UPDATE mentions SET (user_id, agent_id) = (SELECT e.user_id, e.agent_id FROM ev_rows AS e"
    " WHERE e.id = mentions.event_id) WHERE EXISTS (SELECT 1 FROM ev_rows AS e"
    " WHERE e.id = mentions.event_id)"
)
_OWNED = "owners"
# The event's time comes from the event mirror in the same file; a pair whose event is not
# there is skipped, as Kuzu's MATCH skips a pair whose event does not exist.
_INSERT = "INSERT OR IGNORE INTO mentions(entity, event_id, ts, user_id, agent_id)"
_LINK = f"{_INSERT} SELECT ?, id, ts, user_id, agent_id FROM ev_rows WHERE id = ?"
_COPY = "INSERT OR IGNORE INTO mentions(entity, event_id, ts) VALUES (?, ?, ?)"
_OWNER_COUNT = (
    "SELECT count(*) FROM (SELECT 1 FROM mentions WHERE entity = ? AND user_id = ?"
    " AND agent_id = ? LIMIT ?)"
)
_BATCH = 500  # names or ids per statement: far below SQLite's bound on parameters

_COMPLETE = "complete"


class MentionRows:
    """The ``mentions`` table: which events mention which entity, and how many do."""

    def __init__(self, file: SqliteFile) -> None:
        self._file = file
        with file.errors("create the mention table"):
            conn = file.conn()
            conn.executescript(_SCHEMA)
            held = {str(row[1]) for row in conn.execute("PRAGMA table_info(mentions)")}
            with conn:
                for column in _OWNER_COLUMNS:
                    if column not in held:  # a mirror from before owners: fill_owners
                        conn.execute(
                            f"ALTER TABLE mentions ADD COLUMN {column} TEXT NOT NULL DEFAULT ''"
                        )
            if file.flag("mentions_meta", _OWNED):
                conn.execute(_OWNER_INDEX)  # else built once the owners are filled in

    def link(self, pairs: Sequence[tuple[str, str]]) -> None:
        """(event id, entity name) pairs, as :meth:`MemoryStore.link_mentions` takes them."""
        if pairs:
            with self._file.write("store mentions") as conn:
                conn.executemany(_LINK, [(name, event_id) for event_id, name in pairs])

    def delete_events(self, ids: Sequence[str]) -> None:
        self._delete("event_id", ids, "delete the mentions of events")

    def delete_entities(self, names: Sequence[str]) -> None:
        self._delete("entity", names, "delete the mentions of entities")
        with self._file.write("delete mention counts") as conn:
            conn.executemany("DELETE FROM mention_counts WHERE entity = ?", [(n,) for n in names])

    def _delete(self, column: str, keys: Sequence[str], action: str) -> None:
        if keys:
            with self._file.write(action) as conn:
                sql = f"DELETE FROM mentions WHERE {column} = ?"
                conn.executemany(sql, [(key,) for key in dict.fromkeys(keys)])

    def degree(
        self, names: Sequence[str], owner: Owner | None = None, hub: int = 0
    ) -> dict[str, int]:
        """How many events mention each of ``names`` (absent names are missing); ``owner``:
        how many of that (user_id, agent_id)'s, counted up to ``hub`` + 1 (past that, the
        entity is a hub for them too and weighs by everyone's count)."""
        total = {
            str(row[0]): int(row[1])
            for row in self._select("SELECT entity, n FROM mention_counts WHERE entity IN", names)
            if int(row[1]) > 0
        }
        if owner is None:
            return total
        counted: dict[str, int] = {}
        with self._file.errors("count an owner's mentions"):
            conn = self._file.conn()
            for name in total:
                row = conn.execute(_OWNER_COUNT, (name, *owner, hub + 1)).fetchone()
                if int(row[0]):
                    counted[name] = total[name] if int(row[0]) > hub else int(row[0])
        return counted

    def mentioning(
        self, names: Sequence[str], owner: Owner | None = None
    ) -> list[tuple[str, str, float]]:
        """(event id, entity, event time) for every event mentioning one of ``names``;
        ``owner``: only the events of that (user_id, agent_id)."""
        head = "SELECT event_id, entity, ts FROM mentions WHERE"
        tail = " AND user_id = ? AND agent_id = ?" if owner is not None else ""
        rows = self._select(f"{head} entity IN", names, tail, owner or ())
        return [(str(r[0]), str(r[1]), float(r[2])) for r in rows]

    def _select(
        self, head: str, names: Sequence[str], tail: str = "", more: Sequence[str] = ()
    ) -> list[tuple[Any, ...]]:
        wanted = list(dict.fromkeys(names))
        rows: list[tuple[Any, ...]] = []
        with self._file.errors("read mentions"):
            conn = self._file.conn()
            for start in range(0, len(wanted), _BATCH):
                batch = wanted[start : start + _BATCH]
                rows += conn.execute(
                    f"{head} ({','.join('?' * len(batch))}){tail}", [*batch, *more]
                )
        return rows

    def pairs(self) -> list[tuple[str, str]]:
        """Every (event id, entity name) pair, as :meth:`link` takes them (for rebuilds)."""
        with self._file.errors("read mentions"):
            rows = self._file.conn().execute("SELECT event_id, entity FROM mentions")
            return [(str(r[0]), str(r[1])) for r in rows]

    @property
    def complete(self) -> bool:
        """True once every mention the graph held when the mirror began has been copied."""
        return self._file.flag("mentions_meta", _COMPLETE)

    def backfill(self, batches: Callable[[], Iterable[Sequence[tuple[str, str, float]]]]) -> int:
        """Copy the graph's (event id, entity, time) mentions once (a store from before the
        mirror); returns how many were copied."""
        if self.complete:
            return 0
        copied = 0
        for batch in batches():
            with self._file.write("copy mentions") as conn:
                conn.executemany(_COPY, [(name, event_id, ts) for event_id, name, ts in batch])
            copied += len(batch)
            # once per older store; 790k mentions (100k turns) took 17 s
            log.info("copied %d mentions from the graph to %s", copied, self._file.path)
        self._file.set_flag("mentions_meta", _COMPLETE)
        return copied

    def fill_owners(self) -> None:
        """Give every mention its event's owner, once (a mirror from before owners, or one
        just copied from the graph)."""
        if self._file.flag("mentions_meta", _OWNED):
            return
        log.info("recording whose turn each mention is in %s", self._file.path)
        # filled before the index is built: 2.3 s for 790k mentions, against 7 s with it
        with self._file.write("record whose mentions these are") as conn:
            conn.execute(_FILL_OWNERS)
            conn.execute(_OWNER_INDEX)
        self._file.set_flag("mentions_meta", _OWNED)
