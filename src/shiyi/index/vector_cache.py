"""Exact cosine search over vectors kept in memory, one matrix per node kind.

Why not Kuzu's HNSW index: measured on the memory benchmark (1,200 MiniLM vectors), its
top-20 agreed with exact search only 59% of the time (62% with ``efs := 2000``), which cost
the semantic path a third of its recall.  The search is exact and reads an int8 copy of the
matrix first (:mod:`shiyi.index.vector_rows`): ~5 ms at 100k x 384; beyond that scale the
PostgreSQL + pgvector backend is the answer.  Kuzu stays the durable copy: the matrix is
loaded from it lazily and kept in step by every write.

Memory layout, measured at 100k vectors: loading through Python lists (one float object per
component) peaked above 2 GB, so the loader hands over one float32 matrix (Kuzu's Arrow
output, no per-float objects).  The matrix lives in a buffer with spare rows: appending a
batch of newly embedded vectors writes into the spare rows instead of ``np.vstack`` copying
all 150 MB per batch (and holding the lock meanwhile).

A search may be limited to some owners (who may see a row, an opaque tag per id): rows of
other owners are left out of the scan's ranking itself, so one user's many vectors near a
question cannot take all the places of another user's search.  Each row's owner is looked up
the first time a limited search meets it (:data:`OwnerLookup`) and kept as a small integer.
"""

from __future__ import annotations

import threading
from array import array
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, TypeAlias

from shiyi.index.blas import limit_blas_threads
from shiyi.index.types import Scored
from shiyi.index.vector_rows import TIE_DECIMALS, VectorRows

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

# numpy is imported lazily (CLI start-up time), so the alias is a string at run time.
Matrix: TypeAlias = "npt.NDArray[np.float32]"
Loader: TypeAlias = "Callable[[], tuple[list[str], Matrix]]"
"""Every stored vector: the ids and an (n, dimension) matrix, row i belonging to ids[i].
The cache takes the matrix over (it normalises it in place), so hand over a fresh one."""

OwnerLookup: TypeAlias = "Callable[[list[str]], dict[str, str]]"
"""The owner tags of some ids; an id it leaves out has no owner anyone may see (a vector whose
record is gone)."""

__all__ = ["TIE_DECIMALS", "Loader", "Matrix", "OwnerLookup", "VectorCache"]

_UNKNOWN = -1
"""A row whose owner has not been looked up yet (or changed since)."""
_NOBODY = -2
"""A row whose owner the lookup did not find: no limited search returns it."""

_GROWTH = 1.25  # spare rows added when the buffer is full (amortised O(1) appends)
_MIN_CAPACITY = 1024


class VectorCache:
    def __init__(
        self, dimension: int, loader: Loader, owners_of: OwnerLookup | None = None
    ) -> None:
        """``owners_of``: who owns ids, for searches limited to some owners (without it,
        such a search is refused)."""
        self.dimension = dimension
        self._loader = loader
        self.owners_of = owners_of
        self._owner_codes = array("i")  # row i's owner, coded by _codes
        self._codes: dict[str, int] = {}
        self._lock = threading.Lock()
        self._loaded = False
        self._ids: list[str] = []
        self._row: dict[str, int] = {}
        self._rows = VectorRows(dimension)  # row i belongs to _ids[i]
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

    def forget_owners(self, ids: Iterable[str]) -> None:
        """These ids' owners may have changed: look them up again when next needed."""
        with self._lock:
            for key in ids:
                at = self._row.get(key)
                if at is not None:
                    self._owner_codes[at] = _UNKNOWN

    def reset(self, dimension: int) -> None:
        with self._lock:
            self.dimension = dimension
            self._loaded = False
            self._ids, self._row, self._pending = [], {}, {}
            self._owner_codes = array("i")
            self._rows = VectorRows(dimension)

    def __len__(self) -> int:
        with self._lock:
            self._ensure_loaded()
            self._flush()
            return len(self._ids)

    def search(
        self, vector: Sequence[float], limit: int, owners: Collection[str] | None = None
    ) -> list[Scored]:
        """The ``limit`` ids nearest ``vector``, best first; ``owners``: only rows of these
        owner tags, default every row."""
        query = _unit(vector)
        with self._lock:
            self._ensure_current()
            if not self._ids or limit <= 0:
                return []
            allowed = None if owners is None else self._rows_of(owners)
            rows, rounded = self._rows.search(query, limit, allowed)
            ids = self._ids
        return [Scored(ids[i], score) for i, score in zip(rows, rounded, strict=True)]

    def centroid_similarity(
        self, groups: Mapping[str, Sequence[str]], vector: Sequence[float]
    ) -> dict[str, float]:
        """Per group of ids (a run's turns), the cosine between ``vector`` and the mean of the
        group's unit vectors: how near the query is to what the group is about as a whole.
        Ids without a vector are skipped; a group with none is left out."""
        query = _unit(vector)
        with self._lock:
            self._ensure_current()
            row = self._row.get
            rows = {
                name: [at for at in map(row, keys) if at is not None]
                for name, keys in groups.items()
            }
            named = [name for name, found in rows.items() if found]
            similarities = self._rows.centroid_similarity([rows[n] for n in named], query)
        return dict(zip(named, similarities, strict=True))

    def centroid(self, ids: Sequence[str]) -> list[float]:
        """The mean of these ids' unit vectors, of unit length; ``[]`` when none has a
        vector (or they cancel out)."""
        with self._lock:
            self._ensure_current()
            rows = [at for at in map(self._row.get, ids) if at is not None]
            return self._rows.centroid(rows) if rows else []

    # --- internals (called with the lock held) ----------------------------------------

    def _rows_of(self, owners: Collection[str]) -> npt.NDArray[np.bool_] | None:
        """Which rows belong to ``owners`` (None: all of them, no mask needed)."""
        import numpy as np

        if self.owners_of is None:
            raise ValueError("this vector cache cannot tell owners: give it an owner lookup")
        codes = np.frombuffer(self._owner_codes, dtype=np.int32)[: len(self._ids)]
        unknown = np.flatnonzero(codes == _UNKNOWN)
        if len(unknown):
            keys = [self._ids[i] for i in unknown.tolist()]
            found = self.owners_of(keys)
            for at, key in zip(unknown.tolist(), keys, strict=True):
                tag = found.get(key)
                self._owner_codes[at] = _NOBODY if tag is None else self._code(tag)
        wanted = [self._codes[tag] for tag in owners if tag in self._codes]
        allowed = np.isin(codes, wanted)
        return None if bool(allowed.all()) else allowed

    def _code(self, tag: str) -> int:
        return self._codes.setdefault(tag, len(self._codes))

    def _ensure_current(self) -> None:
        """Loaded, and every upsert since applied."""
        self._ensure_loaded()
        self._flush()

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
            self._rows.adopt(matrix)
            self._ids = list(ids)
            self._row = {key: i for i, key in enumerate(self._ids)}
            self._owner_codes = array("i", [_UNKNOWN]) * len(self._ids)
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
        for position, key in enumerate(keys):
            at = self._row.get(key)
            if at is not None:
                self._rows.write(at, rows[position : position + 1])
        if fresh:
            self._append([keys[p] for p in fresh], rows[fresh])

    def _append(self, keys: list[str], rows: Matrix) -> None:
        """Add new ids (not already present) and their rows, normalised, to the buffers."""
        if not keys:
            return
        start, end = len(self._ids), len(self._ids) + len(keys)
        capacity = self._rows.capacity
        if end > capacity:
            self._rows.grow(max(end, int(capacity * _GROWTH), _MIN_CAPACITY))
        self._rows.write(start, rows)
        for offset, key in enumerate(keys):
            self._row[key] = start + offset
        self._ids.extend(keys)
        self._owner_codes.extend([_UNKNOWN] * len(keys))

    def _delete(self, gone: set[str]) -> None:
        keep = [i for i, key in enumerate(self._ids) if key not in gone]
        if len(keep) == len(self._ids):
            return
        self._ids = [self._ids[i] for i in keep]
        self._row = {key: i for i, key in enumerate(self._ids)}
        self._owner_codes = array("i", [self._owner_codes[i] for i in keep])
        self._rows.keep(keep)


def _unit(vector: Sequence[float]) -> Matrix:
    """``vector`` as a float32 row of length one (a zero vector stays zero)."""
    import numpy as np

    query = np.asarray(vector, dtype=np.float32).reshape(-1)
    norm = float(np.linalg.norm(query))
    return query / norm if norm else query
