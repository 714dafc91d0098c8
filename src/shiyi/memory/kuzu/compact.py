"""Rewrite a Kuzu database file so the bytes of deleted rows are gone.

Kuzu 0.11.3 hides deleted rows but keeps their column bytes in the file, even after a
CHECKPOINT, and has no VACUUM.  EXPORT DATABASE writes only live rows; IMPORT DATABASE into
a fresh file and an atomic rename replace the old file.  A crash before the rename leaves the
old file untouched (the half-built copy is cleared on the next compaction).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import kuzu

from shiyi.memory.kuzu import schema
from shiyi.memory.kuzu.header import clear_header_slack


def _quoted(path: Path) -> str:
    return "'" + str(path).replace("\\", "\\\\").replace("'", "\\'") + "'"


def rebuild(path: Path) -> None:
    """Compact the (closed) database at ``path`` in place."""
    work = path.parent / f".{path.name}.compact"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    export, fresh = work / "export", work / path.name
    try:
        _run(path, f"EXPORT DATABASE {_quoted(export)} (format='parquet')")
        _run(fresh, f"IMPORT DATABASE {_quoted(export)}")
        wal = path.with_name(path.name + ".wal")
        wal.unlink(missing_ok=True)  # the old file was closed cleanly: its WAL is applied
        os.replace(fresh, path)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _run(path: Path, statement: str) -> None:
    db = schema.open_database(path)
    conn = kuzu.Connection(db)
    try:
        schema.execute(conn, statement)
        schema.execute(conn, "CHECKPOINT")
    finally:
        conn.close()
        db.close()
        clear_header_slack(path)
