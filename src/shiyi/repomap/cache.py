"""The SQLite cache of the repo map: tags per file (valid while the file's mtime and size
are unchanged) and finished maps (valid while every file and the request are unchanged).

Parsing is the expensive part of a map (seconds for thousands of files); this cache makes a
second build read all tags under a root in one query. A cache that cannot be opened
(read-only or corrupt file) must not stop the map: it falls back to an in-memory database.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import sqlite3
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from shiyi.repomap.languages import LANGUAGES, own_query, shipped_tags
from shiyi.repomap.model import Definition, FileTags, SourceFile

log = logging.getLogger(__name__)

FORMAT_VERSION = 2
"""Bump when the stored tags, their extraction (``tags.py``) or the rendering change."""
MAPS_KEPT = 64
"""Finished maps kept; older ones are dropped (they are cheap to rebuild from the tags)."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY, mtime_ns INTEGER NOT NULL, size INTEGER NOT NULL, tags TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS maps (key TEXT PRIMARY KEY, result TEXT NOT NULL, used REAL NOT NULL);
"""


@dataclass(frozen=True, slots=True)
class CachedTags:
    mtime_ns: int
    size: int
    tags: FileTags

    def fresh_for(self, file: SourceFile) -> bool:
        return self.mtime_ns == file.mtime_ns and self.size == file.size


class TagCache:
    """Tags by absolute file path, and finished maps by request key."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._db = _open(path)
        self._check_version()

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> TagCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- tags ------------------------------------------------------------------------------

    def load(self, root: Path) -> dict[str, CachedTags]:
        """Every cached file under ``root``, by absolute path, in one query."""
        prefix = str(root).rstrip("/") + "/"
        # '/' + 1 == '0': the range selects exactly the paths that start with the prefix,
        # using the primary key's index.
        rows = self._db.execute(
            "SELECT path, mtime_ns, size, tags FROM files WHERE path >= ? AND path < ?",
            (prefix, prefix[:-1] + "0"),
        )
        return {
            path: CachedTags(mtime, size, decode_tags(tags)) for path, mtime, size, tags in rows
        }

    def store(self, items: Iterable[tuple[SourceFile, FileTags]]) -> None:
        rows = [(f.path, f.mtime_ns, f.size, encode_tags(t)) for f, t in items]
        if not rows:
            return
        with self._write():
            self._db.executemany("INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?)", rows)

    def forget(self, paths: Iterable[str]) -> None:
        """Drop entries of files that no longer exist (keeps the cache from growing)."""
        rows = [(p,) for p in paths]
        if rows:
            with self._write():
                self._db.executemany("DELETE FROM files WHERE path = ?", rows)

    # --- finished maps ---------------------------------------------------------------------

    def get_map(self, key: str) -> str | None:
        """The stored map (JSON text) for ``key``, or None."""
        row = self._db.execute("SELECT result FROM maps WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def put_map(self, key: str, result: str) -> None:
        with self._write():
            self._db.execute(
                "INSERT OR REPLACE INTO maps VALUES (?, ?, ?)", (key, result, time.time())
            )
            self._db.execute(
                "DELETE FROM maps WHERE key NOT IN "
                "(SELECT key FROM maps ORDER BY used DESC LIMIT ?)",
                (MAPS_KEPT,),
            )

    # --- internals -------------------------------------------------------------------------

    @contextlib.contextmanager
    def _write(self) -> Iterator[None]:
        try:
            with self._db:
                yield
        except sqlite3.Error as exc:
            # Another process holding the lock too long, a full disk: the map is still
            # right, only the next build will parse again.
            log.warning("repo map cache %s: write failed (%s)", self.path, exc)

    def _check_version(self) -> None:
        """Clear the cache when the tags format, a grammar or a query changed."""
        version = tags_version()
        row = self._db.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()
        if row is not None and row[0] == version:
            return
        with self._write():
            self._db.execute("DELETE FROM files")
            self._db.execute("DELETE FROM maps")
            self._db.execute("INSERT OR REPLACE INTO meta VALUES ('version', ?)", (version,))


def _open(path: Path | None) -> sqlite3.Connection:
    if path is not None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(path, timeout=5.0)
            db.execute("PRAGMA journal_mode=WAL")
            db.executescript(_SCHEMA)
            return db
        except (OSError, sqlite3.Error) as exc:
            log.warning("repo map cache %s unusable (%s); caching in memory only", path, exc)
    db = sqlite3.connect(":memory:")
    db.executescript(_SCHEMA)
    return db


_version: str | None = None


def tags_version() -> str:
    """A fingerprint of everything tags depend on: format, grammar versions, query texts."""
    global _version
    if _version is None:
        digest = hashlib.sha256(f"format {FORMAT_VERSION}".encode())
        for package in ("tree-sitter", *sorted({s.package for s in LANGUAGES.values()})):
            digest.update(f"{package} {_dist_version(package)}\n".encode())
        for spec in LANGUAGES.values():
            for module in spec.tags_from or (spec.package,):
                digest.update(shipped_tags(module).encode())
            for name in spec.extra:
                digest.update(own_query(name).encode())
        _version = digest.hexdigest()[:16]
    return _version


def _dist_version(package: str) -> str:
    try:
        return metadata.version(package.replace("_", "-"))
    except metadata.PackageNotFoundError:
        return "missing"


def encode_tags(tags: FileTags) -> str:
    definitions = [
        [d.name, d.kind, d.line, d.end_line, d.indent, d.signature] for d in tags.definitions
    ]
    return json.dumps([definitions, tags.references], ensure_ascii=False, separators=(",", ":"))


def decode_tags(text: str) -> FileTags:
    definitions, references = json.loads(text)
    return FileTags(tuple(map(Definition._make, definitions)), references)
