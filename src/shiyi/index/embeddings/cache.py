"""A persistent embedding cache, so no text is ever embedded twice by the same model.

Vectors live in one SQLite table keyed by (model id, sha256 of the text) and are stored as
little-endian float32 bytes (1.5 KB for a 384-dim vector).  :class:`CachedEmbedder` wraps any
:class:`~shiyi.index.types.Embedder` and sends only unseen, de-duplicated texts to it.

The table usually lives in the memory store's ``memory.sqlite3``, beside the job queue, the
keyword index and the event mirror, so the file is never the thing to delete.  The cache
rebuilds itself instead: a table of another shape is dropped and recreated at open, a
damaged one is dropped when a read fails, and a failed read or write is a miss (the
embedder recomputes), never an error for the caller.
"""

from __future__ import annotations

import hashlib
import logging
import sqlite3
import struct
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from shiyi.errors import StorageError
from shiyi.index.cache_stats import EMBEDDING, counter
from shiyi.index.types import Embedder

_SCHEMA = """
CREATE TABLE IF NOT EXISTS embedding_cache (
    model_id  TEXT    NOT NULL,
    text_hash TEXT    NOT NULL,
    dimension INTEGER NOT NULL,
    vector    BLOB    NOT NULL,
    PRIMARY KEY (model_id, text_hash)
) WITHOUT ROWID
"""
_QUERY_CHUNK = 500  # stays far below SQLite's limit on bound parameters
_PROBE = "SELECT model_id, text_hash, dimension, vector FROM embedding_cache LIMIT 1"

log = logging.getLogger(__name__)


def _transient(error: sqlite3.Error) -> bool:
    """Locked, busy, full, read-only: worth a retry, never a reason to drop the table."""
    text = str(error).lower()
    return any(word in text for word in ("locked", "busy", "full", "readonly", "read-only"))


def content_hash(text: str) -> str:
    """Hex sha256 of the UTF-8 text: the cache key of a text."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _pack(vector: Sequence[float]) -> bytes:
    return struct.pack(f"<{len(vector)}f", *vector)


def _unpack(blob: bytes, dimension: int) -> list[float]:
    return list(struct.unpack(f"<{dimension}f", blob))


class EmbeddingCache:
    """SQLite-backed map (model id, text hash) -> float32 vector; safe across threads."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self.disabled = ""  # why the cache is off for this process (a damaged, undroppable table)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(str(path), check_same_thread=False, timeout=10.0)
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute(_SCHEMA)
            self._conn.commit()
            self._check_table()
        except (OSError, sqlite3.Error) as exc:
            raise StorageError(self._failure(f"cannot be opened ({exc})")) from exc

    def _check_table(self) -> None:
        """Rebuild a table of another shape (an older or foreign schema) as an empty one."""
        try:
            self._conn.execute(_PROBE).fetchall()
        except sqlite3.DatabaseError as exc:
            if _transient(exc):
                raise
            try:
                self._rebuild(str(exc))
            except sqlite3.DatabaseError as again:
                self._disable(str(again))

    def _disable(self, reason: str) -> None:
        """Run without the cache: every text is a miss, nothing is written."""
        self.disabled = reason
        log.warning(
            "the embedding cache in %s is damaged (%s) and could not be rebuilt, so it is off "
            "(texts are embedded again). The same file holds the memory job queue, keyword "
            "index and event mirror: do not delete it. Fix: stop shiyi, run `sqlite3 %s "
            '".recover" | sqlite3 %s.recovered`, check it, and replace the file with it; '
            "`shiyi doctor` then checks the store",
            self.path,
            reason,
            self.path,
            self.path,
        )

    def _rebuild(self, reason: str) -> None:
        with self._conn:
            self._conn.execute("DROP TABLE IF EXISTS embedding_cache")
            self._conn.execute(_SCHEMA)
        log.warning(
            "the embedding cache table in %s was unusable (%s); it only holds recomputable "
            "vectors, so it was dropped and rebuilt empty (the rest of the file is untouched)",
            self.path,
            reason,
        )

    def _failure(self, what: str) -> str:
        return (
            f"the embedding cache in {self.path} {what}. Do not delete {self.path.name}: it "
            "may also hold the memory job queue, keyword index and event mirror. Fix: check "
            "the file's permissions and free disk space; if SQLite calls it malformed or not a "
            f'database, stop shiyi, run `sqlite3 {self.path} ".recover" | sqlite3 '
            f"{self.path}.recovered`, check it and put it in place; `shiyi doctor` then checks "
            "the store (the cache's vectors are recomputed as needed)"
        )

    @contextmanager
    def _guard(self, action: str) -> Iterator[sqlite3.Connection]:
        with self._lock:
            try:
                yield self._conn
            except sqlite3.Error as exc:
                raise StorageError(self._failure(f"failed to {action} ({exc})")) from exc

    def _lenient(self, action: str, error: sqlite3.Error) -> None:
        """A cache read or write that failed is a miss; a damaged table is rebuilt."""
        log.warning(
            "embedding cache %s failed to %s, treated as a miss: %s", self.path, action, error
        )
        if _transient(error):
            return  # the table itself is fine
        try:
            self._rebuild(str(error))
        except sqlite3.Error as exc:
            self._disable(str(exc))

    def get_many(self, model_id: str, texts: Sequence[str]) -> dict[str, list[float]]:
        """Cached vectors of ``texts`` keyed by :func:`content_hash`; misses are absent."""
        hashes = list(dict.fromkeys(content_hash(text) for text in texts))
        found: dict[str, list[float]] = {}
        if self.disabled:
            return found
        with self._lock:
            try:
                for start in range(0, len(hashes), _QUERY_CHUNK):
                    chunk = hashes[start : start + _QUERY_CHUNK]
                    marks = ",".join("?" * len(chunk))
                    rows = self._conn.execute(
                        "SELECT text_hash, dimension, vector FROM embedding_cache "
                        f"WHERE model_id = ? AND text_hash IN ({marks})",
                        (model_id, *chunk),
                    )
                    for text_hash, dimension, blob in rows:
                        found[text_hash] = _unpack(blob, dimension)
            except sqlite3.Error as exc:
                self._lenient("read", exc)
                return {}
        return found

    def put_many(
        self, model_id: str, texts: Sequence[str], vectors: Sequence[Sequence[float]]
    ) -> None:
        """Store one vector per text (replacing any previous one)."""
        if len(texts) != len(vectors):
            raise ValueError(f"{len(texts)} texts but {len(vectors)} vectors")
        rows = [
            (model_id, content_hash(text), len(vector), _pack(vector))
            for text, vector in zip(texts, vectors, strict=True)
        ]
        if self.disabled:
            return
        with self._lock:
            try:
                with self._conn:
                    self._conn.executemany(
                        "INSERT OR REPLACE INTO embedding_cache VALUES (?,?,?,?)", rows
                    )
            except sqlite3.Error as exc:
                self._lenient("write", exc)

    def delete_texts(self, texts: Sequence[str]) -> int:
        """Drop the cached vectors of these texts under every model (``forget``); the freed
        bytes are zeroed (``secure_delete``).  Returns how many rows went."""
        return self.delete_hashes([content_hash(text) for text in texts])

    def delete_hashes(self, text_hashes: Sequence[str]) -> int:
        """:meth:`delete_texts` by :func:`content_hash` (a forget journal keeps only hashes)."""
        hashes = list(dict.fromkeys(text_hashes))
        removed = 0
        with self._guard("delete"), self._conn:
            self._conn.execute("PRAGMA secure_delete=ON")
            for start in range(0, len(hashes), _QUERY_CHUNK):
                chunk = hashes[start : start + _QUERY_CHUNK]
                marks = ",".join("?" * len(chunk))
                cursor = self._conn.execute(
                    f"DELETE FROM embedding_cache WHERE text_hash IN ({marks})", chunk
                )
                removed += cursor.rowcount
        return removed

    def count(self, model_id: str | None = None) -> int:
        with self._guard("count"):
            if model_id is None:
                row = self._conn.execute("SELECT COUNT(*) FROM embedding_cache").fetchone()
            else:
                row = self._conn.execute(
                    "SELECT COUNT(*) FROM embedding_cache WHERE model_id = ?", (model_id,)
                ).fetchone()
        return int(row[0])

    def close(self) -> None:
        with self._lock:
            self._conn.close()


class CachedEmbedder:
    """An :class:`Embedder` that embeds only texts its cache has not seen.

    Identical texts within one call are embedded once; misses are computed under a lock, so
    concurrent callers asking for the same new text do not both compute it.
    """

    def __init__(self, inner: Embedder, cache: EmbeddingCache) -> None:
        self.inner = inner
        self.cache = cache
        self._miss_lock = threading.Lock()

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    @property
    def loaded(self) -> bool:
        """Whether the inner embedder is loaded locally (remote ones report False)."""
        return bool(getattr(self.inner, "loaded", False))

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        found = self._cached(texts)
        unique = len({content_hash(t) for t in texts})
        counter(EMBEDDING).count(hits=len(found), misses=unique - len(found))
        if len(found) < unique:
            with self._miss_lock:
                found = self._cached(texts)  # another thread may have filled some meanwhile
                found.update(self._compute_missing(texts, found))
        return [found[content_hash(text)] for text in texts]

    def _cached(self, texts: Sequence[str]) -> dict[str, list[float]]:
        found = self.cache.get_many(self.model_id, texts)
        # A vector of another length (e.g. a re-configured remote model) counts as a miss.
        return {key: vec for key, vec in found.items() if len(vec) == self.dimension}

    def _compute_missing(
        self, texts: Sequence[str], found: dict[str, list[float]]
    ) -> dict[str, list[float]]:
        missing = {content_hash(t): t for t in texts if content_hash(t) not in found}
        if not missing:
            return {}
        new_texts = list(missing.values())
        vectors = self.inner.embed(new_texts)
        if len(vectors) != len(new_texts):
            raise ValueError(f"embedder returned {len(vectors)} vectors for {len(new_texts)}")
        self.cache.put_many(self.model_id, new_texts, vectors)
        return dict(zip(missing.keys(), vectors, strict=True))
