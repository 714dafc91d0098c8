"""The files beside the memory store that a forget erases from, and their scrubbing.

The session log (the message rows behind forgotten events, and the readable run files that
quote them), the mem0 API's ledger, the context summaries cache and the embedding cache hold
memories' text outside the store.  Each is erased by id or by content hash (the summaries
cache is cleared whole), so erasing again is harmless; then every SQLite file touched is
VACUUMed and its WAL truncated (``secure_delete`` on), so the text does not survive in the
files' bytes (:func:`scrub_sqlite`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from shiyi.errors import StorageError
from shiyi.index.embeddings.cache import CachedEmbedder, EmbeddingCache
from shiyi.memory.intake.segments import logged_rows, parse_event_id
from shiyi.memory.lifecycle.forget_journal import ForgetEntry, unique
from shiyi.memory.lifecycle.forget_report import ForgetReport
from shiyi.memory.protocol import Embedder
from shiyi.sessions.log import SessionLog
from shiyi.sessions.run_files import rewrite_run_files, runs_root

MEM0_LEDGER = "mem0.sqlite3"
"""The mem0 API's ledger's file name in the memory folder (``shiyi.compat.mem0.ledger``)."""


@dataclass(slots=True, frozen=True)
class DataPaths:
    """Files outside the memory store that can hold memories' text."""

    sessions_db: Path | None = None
    summaries_db: Path | None = None
    journal_dir: Path | None = None
    """Where forgets are journaled before they delete (None: not journaled)."""
    mem0_ledger: Path | None = None
    """``shiyi.compat.mem0``'s ledger (metadata and change history by memory id), when the
    mem0-shaped API keeps it in its default place beside the store."""


def erase_embeddings(
    embedder: Embedder | None, memory_db: Path | None, text_hashes: list[str]
) -> int:
    """The embedding cache's rows of these content hashes (``memory_db``: the SQLite file
    beside the store that holds the cache)."""
    if isinstance(embedder, CachedEmbedder):
        return embedder.cache.delete_hashes(text_hashes)
    if memory_db is None or not memory_db.exists():
        return 0
    cache = EmbeddingCache(memory_db)  # no embedder now, but earlier runs may have cached
    try:
        return cache.delete_hashes(text_hashes)
    finally:
        cache.close()


def erase_log(path: Path | None, entry: ForgetEntry, report: ForgetReport) -> None:
    """The session log's rows behind the forgotten events (and a forgotten user's sessions),
    then the readable run files rendered again without them."""
    event_ids, event_sessions = entry.event_ids, entry.event_sessions
    user_id, sessions = entry.user_id, entry.user_sessions
    if path is None or not path.exists():
        return
    log = SessionLog(path)
    try:
        report.messages = log.forget_messages(_log_rows(log, event_ids, event_sessions))
        if user_id is not None:
            report.log_sessions, messages = log.forget_sessions(sessions, user_id=user_id)
            report.messages += messages
        # The readable run files quote the log: render them again without what went.
        touched = [*report.sessions, *sessions]
        report.run_files = rewrite_run_files(log, runs_root(path.parent), touched)
    finally:
        log.close()


def erase_mem0_ledger(path: Path | None, entry: ForgetEntry) -> None:
    """The mem0 API's rows of the forgotten memories: their metadata and the history
    of their texts (read here by table name: memory does not import the compat layer)."""
    if path is None or not path.exists():
        return
    with _connection(path) as conn:
        if not (_has_table(conn, "owners") and _has_table(conn, "history")):
            return
        ids = entry.ids
        if entry.user_id is not None:
            owned = conn.execute("SELECT memory_id FROM owners WHERE user_id = ?", (entry.user_id,))
            ids = unique([*ids, *(str(row[0]) for row in owned)])
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            conn.execute(f"DELETE FROM history WHERE memory_id IN ({marks})", chunk)
            conn.execute(f"DELETE FROM owners WHERE memory_id IN ({marks})", chunk)


def clear_summaries(path: Path | None) -> int:
    """Every cached context summary (a summary may quote what was forgotten)."""
    if path is None or not path.exists():
        return 0
    with _connection(path) as conn:
        if not _has_table(conn, "summaries"):
            return 0
        return int(conn.execute("DELETE FROM summaries").rowcount)


def scrub_files(memory_db: Path | None, paths: DataPaths) -> list[str]:
    """VACUUM the SQLite files beside the store; returns those whose WAL stayed."""
    targets = [(memory_db, ("kw_fts",)), (paths.sessions_db, ()),
               (paths.summaries_db, ()), (paths.mem0_ledger, ())]  # fmt: skip
    return [
        str(path)
        for path, fts in targets
        if path is not None and path.exists() and not scrub_sqlite(path, fts)
    ]


def _log_rows(
    log: SessionLog, event_ids: list[str], sessions: dict[str, str]
) -> list[tuple[int, str]]:
    """The ``(row, session)`` of this log behind each event made from one of its rows (an
    event of an older log, moved aside, names no row of this one).  An event whose session
    the journal lacks is matched by its epoch alone, which names this log; a legacy id
    (no epoch) then needs its session, since an older log's row has the same number."""
    who = log.identity
    pairs: list[tuple[int, str]] = []
    unknown: list[int] = []
    for event_id in event_ids:
        for row in logged_rows([event_id], who.epoch, who.legacy_through):
            if event_id in sessions:
                pairs.append((row, sessions[event_id]))
            elif (parsed := parse_event_id(event_id)) is not None and parsed.epoch:
                unknown.append(row)
    pairs += list(log.sessions_of(unknown).items())
    return pairs


def scrub_sqlite(path: Path, fts_tables: Sequence[str] = ()) -> bool:
    """Make deleted rows unrecoverable from a SQLite file: FTS5 ``optimize`` (deleted tokens
    leave the index segments), ``VACUUM`` (rewrites every page, truncates the rest) and a
    ``TRUNCATE`` checkpoint (empties the WAL, which holds old page images).

    Returns False when another connection's open read kept the WAL from being truncated.
    """
    with _connection(path) as conn:
        for table in fts_tables:
            if _has_table(conn, table):
                conn.execute(f"INSERT INTO {table}({table}) VALUES ('optimize')")
        conn.execute("VACUUM")
        busy = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
    return int(busy) == 0


@contextmanager
def _connection(path: Path) -> Iterator[sqlite3.Connection]:
    """An autocommit connection with ``secure_delete`` on; errors become StorageError."""
    try:
        conn = sqlite3.connect(path, timeout=30.0, isolation_level=None)
    except sqlite3.Error as exc:
        raise _scrub_error(path, exc) from exc
    try:
        conn.execute("PRAGMA secure_delete=ON")
        yield conn
    except sqlite3.Error as exc:
        raise _scrub_error(path, exc) from exc
    finally:
        conn.close()


def _scrub_error(path: Path, exc: sqlite3.Error) -> StorageError:
    return StorageError(
        f"could not scrub forgotten data from {path}: {exc}; the memories are deleted, but to "
        f"overwrite their bytes stop other shiyi processes and run: sqlite3 {path} VACUUM"
    )


def _has_table(conn: sqlite3.Connection, name: str) -> bool:
    row = conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (name,)).fetchone()
    return row is not None
