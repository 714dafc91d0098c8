"""A persistent embedding cache, so no text is ever embedded twice by the same model.

Vectors live in one SQLite table keyed by (model id, sha256 of the text) and are stored as
little-endian float32 bytes (1.5 KB for a 384-dim vector).  :class:`CachedEmbedder` wraps any
:class:`~shiyi.index.types.Embedder` and sends only unseen, de-duplicated texts to it.
"""

from __future__ import annotations

import hashlib
import sqlite3
import struct
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from shiyi.errors import StorageError
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
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(str(path), check_same_thread=False, timeout=10.0)
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute(_SCHEMA)
            self._conn.commit()
        except (OSError, sqlite3.Error) as exc:
            raise StorageError(
                f"Cannot open the embedding cache {path}: {exc}. "
                "Fix: check permissions, or delete the file to rebuild the cache."
            ) from exc

    @contextmanager
    def _guard(self, action: str) -> Iterator[sqlite3.Connection]:
        with self._lock:
            try:
                yield self._conn
            except sqlite3.Error as exc:
                raise StorageError(
                    f"Embedding cache {self.path} failed to {action}: {exc}. "
                    "Fix: delete the file; it only holds recomputable vectors."
                ) from exc

    def get_many(self, model_id: str, texts: Sequence[str]) -> dict[str, list[float]]:
        """Cached vectors of ``texts`` keyed by :func:`content_hash`; misses are absent."""
        hashes = list(dict.fromkeys(content_hash(text) for text in texts))
        found: dict[str, list[float]] = {}
        with self._guard("read"):
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
        with self._guard("write"), self._conn:
            self._conn.executemany("INSERT OR REPLACE INTO embedding_cache VALUES (?,?,?,?)", rows)

    def delete_texts(self, texts: Sequence[str]) -> int:
        """Drop the cached vectors of these texts under every model (``forget``); the freed
        bytes are zeroed (``secure_delete``).  Returns how many rows went."""
        hashes = list(dict.fromkeys(content_hash(text) for text in texts))
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
        if len(found) < len(set(texts)):
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
