"""Open a graph file that may be damaged in a child process first.

Kuzu 0.11.3 does not always raise on a garbled ``graph.kuzu``: some damage crashes the
whole process (SIGSEGV) while it opens or reads the file, so every command, ``shiyi
doctor`` included, died without a word.  A crash of a child process costs nothing, so a
file that may be damaged is opened and read there first, and a crash or an error becomes a
:class:`StorageError` naming the file and the safe fix.

"May be damaged" means: not exactly as the last clean close left it.  That close records
the file's size, modification time and inode (:func:`record_clean_close`); an open that
finds them unchanged and no WAL skips the probe (the common case costs one ``stat``),
while a file changed since by a crash, a copy or another program is probed (about half a
second, plus a scan of the tables).  ``shiyi doctor`` always probes.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

from shiyi.errors import StorageError
from shiyi.index.sqlite_file import closed_cleanly, drop_clean_close, stamp_clean_close
from shiyi.memory.kuzu.guard import GRAPH_HOLDS, damaged_graph_fix

_PROBE_TIMEOUT = 600.0
_PROBE_BUFFER_POOL = 256 * 1024 * 1024
# Reads every table's rows: garbled pages are only touched when read, not at open.
_PROBE = """
import sys, kuzu
db = kuzu.Database(sys.argv[1], buffer_pool_size=int(sys.argv[2]))
conn = kuzu.Connection(db)
tables = conn.execute("CALL show_tables() RETURN name, type").get_all()
for name, kind in tables:
    query = f"MATCH (n:{name}) RETURN n" if kind == "NODE" else (
        f"MATCH ()-[r:{name}]->() RETURN r" if kind == "REL" else None)
    if query is not None:
        rows = conn.execute(query)
        while rows.has_next():
            rows.get_next()
conn.close()
db.close()
"""


def record_clean_close(graph_path: Path) -> None:
    """After the graph closed cleanly: remember the file as it is now."""
    stamp_clean_close(graph_path)


def forget_clean_close(graph_path: Path) -> None:
    """The graph is open for writing: until it closes cleanly, a next open probes it."""
    drop_clean_close(graph_path)


def probe_damage(graph_path: Path) -> str | None:
    """Why Kuzu cannot open and read ``graph_path`` (it crashed or raised, in a child
    process), or None when it can."""
    try:
        done = subprocess.run(
            [sys.executable, "-c", _PROBE, str(graph_path), str(_PROBE_BUFFER_POOL)],
            capture_output=True,
            text=True,
            timeout=_PROBE_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return f"reading it did not finish in {_PROBE_TIMEOUT:.0f} s"
    except OSError as exc:
        return None if _cannot_spawn(exc) else str(exc)
    if done.returncode == 0:
        return None
    if done.returncode < 0:
        name = signal.Signals(-done.returncode).name
        return f"Kuzu crashed ({name}) opening or reading it"
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    return f"Kuzu cannot read it: {lines[-1] if lines else f'exit status {done.returncode}'}"


def _cannot_spawn(exc: OSError) -> bool:
    # No child processes here (a sandbox, a full process table): open in-process as before.
    return isinstance(exc, (PermissionError, BlockingIOError))


def check_graph_opens(graph_path: Path, *, always: bool = False) -> None:
    """Raise :class:`StorageError` if the graph file crashes or fails Kuzu in a child
    process; skipped for a file exactly as its last clean close left it (unless
    ``always``)."""
    if not graph_path.is_file() or graph_path.stat().st_size == 0:
        return  # none yet, or the empty-file guard's case
    if not always and closed_cleanly(graph_path, graph_path.name + ".wal"):
        return
    damage = probe_damage(graph_path)
    if damage is not None:
        raise StorageError(damaged_graph_message(graph_path, damage))


def damaged_graph_message(graph_path: Path, reason: str) -> str:
    return (
        f"the memory graph at {graph_path} cannot be opened ({reason}); it is damaged or "
        f"was written by another Kuzu version. It holds {GRAPH_HOLDS}; do not delete it. "
        f"{damaged_graph_fix(graph_path)}"
    )
