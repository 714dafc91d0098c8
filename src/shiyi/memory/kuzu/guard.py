"""Refuse to open a damaged graph as a fresh, empty one.

Kuzu treats a missing or 0-byte ``graph.kuzu`` as a new database and creates an empty store
in its place: every event, fact and entity is silently gone while keyword search still
returns them from the SQLite mirror beside it.  The mirror (``memory.sqlite3``) is written
with every event and every fact, so when it holds either the directory *had* a graph, and an
absent or empty graph file means damage, never a first start.  The damaged file is left
untouched: only ``shiyi doctor --rebuild-graph`` moves it aside, on the user's explicit
request.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from shiyi.errors import StorageError

GRAPH_HOLDS = "the memory graph: every remembered turn, fact, entity, relation and embedding"
REBUILD_COMMAND = "shiyi doctor --rebuild-graph"
SQLITE_HOLDS = "the event mirror, the keyword index, the job queue and the embedding cache"


def mirrored(sqlite_path: Path) -> tuple[int, int]:
    """How many events and facts the SQLite mirror beside the graph holds (0 when it has
    none yet, or no such table: a store from before it, or not ours).

    Read through a plain read-only connection: the store has not opened the file yet, and
    a first start must not create it here.
    """
    if not sqlite_path.exists() or sqlite_path.stat().st_size == 0:
        return 0, 0
    try:
        conn = sqlite3.connect(f"file:{sqlite_path}?mode=ro", uri=True, timeout=30.0)
    except sqlite3.Error:
        return 0, 0  # its own opening reports what is wrong with it
    try:
        return _count(conn, "ev_rows"), _count(conn, "fact_rows")
    finally:
        conn.close()


def _count(conn: sqlite3.Connection, table: str) -> int:
    try:
        return int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
    except sqlite3.Error:
        return 0


def rebuild_marker(graph_path: Path) -> Path:
    """Present while ``shiyi doctor --rebuild-graph`` builds the graph: left behind by a
    rebuild that was killed, it marks the graph as incomplete."""
    return graph_path.with_name(graph_path.name + ".rebuilding")


def check_graph_file(graph_path: Path, sqlite_path: Path) -> None:
    """Raise :class:`StorageError` if ``graph_path`` is missing or empty while the mirror
    shows the directory held a store, or a rebuild of it did not finish; otherwise return
    (a first start, or a graph to open)."""
    marker = rebuild_marker(graph_path)
    if marker.exists():
        raise StorageError(
            f"the memory graph {graph_path} is incomplete: a rebuild from {sqlite_path.name} "
            f"was stopped before it finished ({marker} is still there). Fix: stop every "
            f"shiyi process using {graph_path.parent}, then run `{REBUILD_COMMAND}` again, "
            "which moves the partial graph aside and builds it again from the start"
        )
    if graph_path.exists() and graph_path.stat().st_size > 0:
        return
    events, facts = mirrored(sqlite_path)
    if events == 0 and facts == 0:
        return
    state = "is empty (0 bytes)" if graph_path.exists() else "is missing"
    raise StorageError(
        f"the memory graph {graph_path} {state}, but {sqlite_path.name} beside it mirrors "
        f"{_held(events, facts)}, so a store existed here; shiyi will not create an empty "
        f"one over it. {graph_path.name} holds {GRAPH_HOLDS}. {damaged_graph_fix(graph_path)}"
    )


def _held(events: int, facts: int) -> str:
    parts = [f"{events:,} remembered turns"] if events else []
    return " and ".join([*parts, *([f"{facts:,} facts"] if facts else [])])


def damaged_graph_fix(graph_path: Path) -> str:
    """The safe ways out of an unusable graph file, for every message about one."""
    return (
        f"Fix: stop every shiyi process using {graph_path.parent}, then restore {graph_path} "
        f"from a backup; or run `{REBUILD_COMMAND}`, which moves the damaged file aside "
        f"(never deletes it) and rebuilds the turns, facts, entities and relations from "
        f"{graph_path.parent / 'memory.sqlite3'} (access counts start again; the turns and "
        "facts are re-embedded by the background worker)"
    )


def damaged_sqlite_message(sqlite_path: Path, reason: str) -> str:
    """What to do about an unreadable ``memory.sqlite3``, for every message about one."""
    return (
        f"{sqlite_path} is damaged ({reason}). It holds {SQLITE_HOLDS}: do not delete it. "
        f"Fix: stop every shiyi process using {sqlite_path.parent}, then run `shiyi doctor "
        "--rebuild-sqlite`, which moves it aside (never deletes it) and rebuilds the mirror "
        "and the keyword index from graph.kuzu (queued jobs, such as fact extraction not yet "
        f"done, and cached vectors are lost); or recover it with `sqlite3 {sqlite_path} "
        f'".recover" | sqlite3 {sqlite_path}.recovered` and put the result in its place'
    )
