"""Refuse to open a damaged graph as a fresh, empty one.

Kuzu treats a missing or 0-byte ``graph.kuzu`` as a new database and creates an empty store
in its place: every event, fact and entity is silently gone while keyword search still
returns them from the SQLite mirror beside it.  The mirror (``memory.sqlite3``) is written
with every event, so when it holds rows the directory *had* a graph, and an absent or empty
graph file means damage, never a first start.  The damaged file is left untouched: only
``shiyi doctor --rebuild-graph`` moves it aside, on the user's explicit request.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from shiyi.errors import StorageError

GRAPH_HOLDS = "the memory graph: every remembered turn, fact, entity, relation and embedding"
REBUILD_COMMAND = "shiyi doctor --rebuild-graph"
SQLITE_HOLDS = "the event mirror, the keyword index, the job queue and the embedding cache"


def mirrored_events(sqlite_path: Path) -> int:
    """How many events the SQLite mirror beside the graph holds (0 when it has none yet).

    Read through a plain read-only connection: the store has not opened the file yet, and
    a first start must not create it here.
    """
    if not sqlite_path.exists() or sqlite_path.stat().st_size == 0:
        return 0
    try:
        conn = sqlite3.connect(f"file:{sqlite_path}?mode=ro", uri=True, timeout=30.0)
    except sqlite3.Error:
        return 0  # its own opening reports what is wrong with it
    try:
        row = conn.execute("SELECT count(*) FROM ev_rows").fetchone()
    except sqlite3.Error:
        return 0  # no mirror table: a store from before the mirror, or not ours
    finally:
        conn.close()
    return int(row[0])


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
    events = mirrored_events(sqlite_path)
    if events == 0:
        return
    state = "is empty (0 bytes)" if graph_path.exists() else "is missing"
    raise StorageError(
        f"the memory graph {graph_path} {state}, but {sqlite_path.name} beside it mirrors "
        f"{events:,} remembered turns, so a store existed here; shiyi will not create an empty "
        f"one over it. {graph_path.name} holds {GRAPH_HOLDS}. {damaged_graph_fix(graph_path)}"
    )


def damaged_graph_fix(graph_path: Path) -> str:
    """The safe ways out of an unusable graph file, for every message about one."""
    return (
        f"Fix: stop every shiyi process using {graph_path.parent}, then restore {graph_path} "
        f"from a backup; or run `{REBUILD_COMMAND}`, which moves the damaged file aside "
        f"(never deletes it) and rebuilds the turns and their entity links from "
        f"{graph_path.parent / 'memory.sqlite3'} (facts and relations live only in the graph "
        "and are not recovered; the turns are re-embedded by the background worker)"
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
