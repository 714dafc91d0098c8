"""Exact cosine search over vectors kept in memory as one numpy matrix per node kind.

Why not Kuzu's HNSW index: measured on the memory benchmark (1,200 MiniLM vectors), its
top-20 agreed with exact search only 59% of the time (62% with ``efs := 2000``), which cost
the semantic path a third of its recall.  An exact matrix-vector product over 100k x 384
float32 vectors reads ~150 MB, a few milliseconds on two cores; beyond that scale the
PostgreSQL + pgvector backend is the answer.  Kuzu stays the durable copy: the matrix is
loaded from it lazily and kept in step by every write.

Memory layout, measured at 100k vectors: loading through Python lists (one float object per
component) peaked above 2 GB, so the loader hands over one float32 matrix (Kuzu's Arrow
output, no per-float objects).  The matrix lives in a buffer with spare rows: appending a
batch of newly embedded vectors writes into the spare rows instead of ``np.vstack`` copying
all 150 MB per batch (and holding the lock meanwhile).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, TypeAlias

from shiyi.memory.blas import limit_blas_threads
from shiyi.memory.models import Scored

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

# numpy is imported lazily (CLI start-up time), so the alias is a string at run time.
Matrix: TypeAlias = "npt.NDArray[np.float32]"
Loader: TypeAlias = "Callable[[], tuple[list[str], Matrix]]"
"""Every stored vector: the ids and an (n, dimension) matrix, row i belonging to ids[i].
The cache takes the matrix over (it normalises it in place), so hand over a fresh one."""

TIE_DECIMALS = 6
"""Similarities are rounded to this many decimals; equal ones rank by embedding order."""
_GROWTH = 1.25  # spare rows added when the buffer is full (amortised O(1) appends)
_MIN_CAPACITY = 1024


class VectorCache:
    def __init__(self, dimension: int, loader: Loader) -> None:
        self.dimension = dimension
        self._loader = loader
        self._lock = threading.Lock()
        self._loaded = False
        self._ids: list[str] = []
        self._row: dict[str, int] = {}
        # Rows [0, len(_ids)) are live and L2-normalised; the rest is spare capacity.
        self._buffer: Matrix | None = None
        self._pending: dict[str, Sequence[float]] = {}

    def upsert(self, vectors: Sequence[tuple[str, Sequence[float]]]) -> None:
        with self._lock:
            if self._loaded:  # before loading, the loader (Kuzu) is the truth
                self._pending.update(vectors)

    def delete(self, ids: Iterable[str]) -> None:
        with self._lock:
            if self._loaded:
                self._flush()
                self._delete(set(ids))

    def reset(self, dimension: int) -> None:
        with self._lock:
            self.dimension = dimension
            self._loaded = False
            self._ids, self._row, self._buffer, self._pending = [], {}, None, {}

    def __len__(self) -> int:
        with self._lock:
            self._ensure_loaded()
            self._flush()
            return len(self._ids)

    def search(self, vector: Sequence[float], limit: int) -> list[Scored]:
        import numpy as np

        query = np.asarray(vector, dtype=np.float32).reshape(-1)
        norm = float(np.linalg.norm(query))
        if norm:
            query = query / norm
        with self._lock:
            self._ensure_loaded()
            self._flush()
            size = len(self._ids)
            if self._buffer is None or not size or limit <= 0:
                return []
            scores = _scan(self._buffer[:size], query)
            ids = self._ids
        rows, rounded = _best_rows(scores, min(limit, size))
        return [Scored(ids[i], score) for i, score in zip(rows, rounded, strict=True)]

    # --- internals (called with the lock held) ----------------------------------------

    def _ensure_loaded(self) -> None:
        if self._loaded:
            return
        import numpy as np

        limit_blas_threads()
        ids, matrix = self._loader()
        matrix = np.asarray(matrix, dtype=np.float32).reshape(len(ids), self.dimension)
        self._loaded = True
        # The loader may repeat an id (it should not); the last row wins, as with upserts.
        if len(set(ids)) != len(ids):
            last = {key: i for i, key in enumerate(ids)}
            keep = sorted(last.values())
            ids, matrix = [ids[i] for i in keep], matrix[keep]
        if matrix.flags.c_contiguous and matrix.flags.writeable and len(ids):
            # Adopt the loaded matrix as the buffer: a copy would be another 150 MB at 100k.
            _normalise_into(matrix, matrix)
            self._buffer, self._ids = matrix, list(ids)
            self._row = {key: i for i, key in enumerate(self._ids)}
        else:
            self._append(list(ids), matrix)

    def _flush(self) -> None:
        if not self._pending:
            return
        import numpy as np

        pending, self._pending = self._pending, {}
        keys = list(pending)
        rows = np.asarray(list(pending.values()), dtype=np.float32)
        rows = rows.reshape(len(keys), self.dimension)
        fresh = [p for p, key in enumerate(keys) if key not in self._row]
        if self._buffer is not None:
            for position, key in enumerate(keys):
                at = self._row.get(key)
                if at is not None:
                    _normalise_into(rows[position : position + 1], self._buffer[at : at + 1])
        if fresh:
            self._append([keys[p] for p in fresh], rows[fresh])

    def _append(self, keys: list[str], rows: Matrix) -> None:
        """Add new ids (not already present) and their rows, normalising into the buffer."""
        import numpy as np

        if not keys:
            return
        start, end = len(self._ids), len(self._ids) + len(keys)
        capacity = 0 if self._buffer is None else self._buffer.shape[0]
        if end > capacity:
            grown = np.empty(
                (max(end, int(capacity * _GROWTH), _MIN_CAPACITY), self.dimension),
                dtype=np.float32,
            )
            if self._buffer is not None:
                grown[:start] = self._buffer[:start]
            self._buffer = grown
        assert self._buffer is not None
        _normalise_into(rows, self._buffer[start:end])
        for offset, key in enumerate(keys):
            self._row[key] = start + offset
        self._ids.extend(keys)

    def _delete(self, gone: set[str]) -> None:
        keep = [i for i, key in enumerate(self._ids) if key not in gone]
        if len(keep) == len(self._ids):
            return
        self._ids = [self._ids[i] for i in keep]
        self._row = {key: i for i, key in enumerate(self._ids)}
        if self._buffer is not None:
            self._buffer = self._buffer[keep]  # a fresh, exactly sized copy


SPLIT_ROWS = 40_000
"""From this many rows up, the scan runs in two halves on two threads."""
_scan_pool: ThreadPoolExecutor | None = None
_scan_pool_lock = threading.Lock()


def _scan(matrix: Matrix, query: Matrix) -> Matrix:
    """``matrix @ query``, the two halves of a large matrix on two threads.

    The product only streams the matrix from memory (150 MB at 100k x 384), and one core
    could not draw all the memory bandwidth: at 100k rows one thread took 16-17 ms, two
    10 ms (p50, two cores).  BLAS itself stays on one thread (see :mod:`shiyi.memory.blas`).
    A row slice of a C-contiguous buffer is itself contiguous: gemv with no copy.
    """
    import numpy as np

    rows = len(matrix)
    if rows < SPLIT_ROWS:
        out: Matrix = matrix @ query
        return out
    scores = np.empty(rows, dtype=np.float32)
    middle = rows // 2
    other = _pool().submit(np.dot, matrix[middle:], query, scores[middle:])
    np.dot(matrix[:middle], query, scores[:middle])
    other.result()
    return scores


def _pool() -> ThreadPoolExecutor:
    global _scan_pool
    with _scan_pool_lock:
        if _scan_pool is None:
            _scan_pool = ThreadPoolExecutor(1, thread_name_prefix="shiyi-scan")
        return _scan_pool


def _best_rows(scores: Matrix, count: int) -> tuple[list[int], list[float]]:
    """Rows of the ``count`` best scores, best first, with their scores to ``TIE_DECIMALS``.

    Identical texts embed identically, yet BLAS scores their rows a few 1e-9 apart (blocked
    sums), and argpartition picks among equal scores arbitrarily.  So similarities are
    rounded (6 decimals is far finer than any real difference in relevance), and ties rank
    (and are cut at ``count``) by row, i.e. by when they were first embedded: the PostgreSQL
    store returns the same rounded scores in the same order.
    """
    import numpy as np

    top = np.argpartition(-scores, count - 1)[:count]
    floor = np.round(scores[top].astype(np.float64), TIE_DECIMALS).min()
    # Rows tied with the last one taken may lie outside ``top``: a pass over the scores.
    near = np.flatnonzero(scores >= floor - 10.0**-TIE_DECIMALS)
    rounded = np.round(scores[near].astype(np.float64), TIE_DECIMALS)
    near, rounded = near[rounded >= floor], rounded[rounded >= floor]
    order = np.lexsort((near, -rounded))[:count]
    return near[order].tolist(), rounded[order].tolist()


def _normalise_into(rows: Matrix, out: Matrix) -> None:
    """Write ``rows`` scaled to unit length into ``out`` (zero rows stay zero), with no
    full-size temporary: at 100k rows that would be another 150 MB."""
    import numpy as np

    norms = np.sqrt(np.einsum("ij,ij->i", rows, rows))
    norms[norms == 0] = 1.0
    np.divide(rows, norms[:, None], out=out)
