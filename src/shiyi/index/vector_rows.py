"""Unit vectors in one float32 matrix plus an int8 copy: exact top-k search that reads a quarter
of the memory.

The float32 scan only streams the matrix from memory (150 MB at 100k x 384), so its cost is
bandwidth.  Each row also keeps int8 codes ``c`` with a scale ``s`` (``x ~ s * c``) and the
length of what that approximation leaves out, ``e = |x - s * c|``.  A search:

1. scores every row from the codes (SimSIMD's int8 dot product, 38 MB at 100k rows);
2. scores the ``2 * limit`` best of those exactly, from the float32 rows;
3. takes the limit-th best exact score as a floor, and scores exactly every other row whose
   approximate score plus its error bound could still reach it.

For unit ``x`` and ``q`` and the query's own codes ``q ~ t * d`` (error ``f``),
``|s*c . t*d - x . q| <= e * (1 + f) + f`` (Cauchy-Schwarz, twice), so step 3 misses nothing:
the result is the float32 scan's, rows and rounded scores alike.  Measured on two 100k-row
stores (LoCoMo questions and stored turns as queries, 795 each): identical top 40 for every
query; the search took 4.4-5.0 ms (p50) against 9.6-10.7 ms for the float32 scan split over
two threads, and p95 4.4-7.4 ms against 11-31 ms.  The int8 copy costs a quarter more memory.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, TypeAlias

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

Matrix: TypeAlias = "npt.NDArray[np.float32]"

TIE_DECIMALS = 6
"""Similarities are rounded to this many decimals; equal ones rank by row (embedding order)."""
EXACT_UP_TO = 2048
"""Up to this many rows every row is scored exactly: the int8 pass would not pay for itself."""
THREADED_FROM = 40_000
"""From this many rows up, the int8 pass runs on two threads (one could not draw all the
memory bandwidth; below this the threads cost more than they save)."""
_SLACK = 1e-5
"""Added to every error bound: float32 rounding in the approximate scores is ~1e-7."""
_CODE_MAX = 127.0


class VectorRows:
    """Rows ``[0, size)`` of preallocated buffers, each row L2-normalised, with its int8 codes,
    scale and error.  Not thread-safe: the owner (:class:`~shiyi.index.vector_cache.
    VectorCache`) holds its lock around every call."""

    def __init__(self, dimension: int) -> None:
        import numpy as np

        self.dimension = dimension
        self.size = 0
        self._floats: Matrix = np.empty((0, dimension), dtype=np.float32)
        self._codes: npt.NDArray[np.int8] = np.empty((0, dimension), dtype=np.int8)
        self._scales: Matrix = np.empty(0, dtype=np.float32)
        self._errors: Matrix = np.empty(0, dtype=np.float32)

    @property
    def capacity(self) -> int:
        return len(self._floats)

    def adopt(self, matrix: Matrix) -> None:
        """Take ``matrix`` (C-contiguous, writeable) over as the rows, normalising it in place:
        a copy would be another 150 MB at 100k rows."""
        import numpy as np

        self._floats = matrix
        self._codes = np.empty(matrix.shape, dtype=np.int8)
        self._scales = np.empty(len(matrix), dtype=np.float32)
        self._errors = np.empty(len(matrix), dtype=np.float32)
        self.size = len(matrix)
        self.write(0, matrix)

    def grow(self, capacity: int) -> None:
        """Make room for ``capacity`` rows, keeping the live ones."""
        import numpy as np

        if capacity <= self.capacity:
            return
        live = self.size
        floats = np.empty((capacity, self.dimension), dtype=np.float32)
        codes = np.empty((capacity, self.dimension), dtype=np.int8)
        scales, errors = np.empty(capacity, np.float32), np.empty(capacity, np.float32)
        floats[:live], codes[:live] = self._floats[:live], self._codes[:live]
        scales[:live], errors[:live] = self._scales[:live], self._errors[:live]
        self._floats, self._codes, self._scales, self._errors = floats, codes, scales, errors

    def write(self, start: int, rows: Matrix) -> None:
        """Store ``rows`` (any length, not yet normalised) at ``start``, growing ``size`` when
        they reach past it; the caller has made room with :meth:`grow`."""
        end = start + len(rows)
        _normalise_into(rows, self._floats[start:end])
        _quantise_into(
            self._floats[start:end],
            self._codes[start:end],
            self._scales[start:end],
            self._errors[start:end],
        )
        self.size = max(self.size, end)

    def keep(self, rows: list[int]) -> None:
        """Keep only these rows, in this order, in exactly sized fresh buffers."""
        self._floats, self._codes = self._floats[rows], self._codes[rows]
        self._scales, self._errors = self._scales[rows], self._errors[rows]
        self.size = len(rows)

    def search(
        self, query: Matrix, limit: int, allowed: npt.NDArray[np.bool_] | None = None
    ) -> tuple[list[int], list[float]]:
        """The ``limit`` rows most similar to the unit vector ``query``, best first, with their
        exact similarities rounded to :data:`TIE_DECIMALS` (ties by row); ``allowed``: only
        the rows it marks (a mask of ``size``), default all."""
        import numpy as np

        size = self.size
        candidates = np.arange(size) if allowed is None else np.flatnonzero(allowed[:size])
        limit = min(limit, len(candidates))
        if limit <= 0:
            return [], []
        exact_query = query.astype(np.float64)
        if len(candidates) <= max(EXACT_UP_TO, 2 * limit):
            return _best(candidates, self._exact(candidates, exact_query), limit)
        approximate, bound = self._approximate(query)
        if allowed is not None:
            approximate[~allowed[:size]] = -np.inf  # never shortlisted, never in reach
        shortlist = np.argpartition(-approximate, 2 * limit - 1)[: 2 * limit]
        exact = self._exact(shortlist, exact_query)
        floor = np.partition(exact, len(exact) - limit)[len(exact) - limit]
        # Rows tied with the floor after rounding also count, hence the tie tolerance.
        reach = np.flatnonzero(approximate + bound >= floor - 2 * 10.0**-TIE_DECIMALS)
        rest = np.setdiff1d(reach, shortlist, assume_unique=True)
        rows = np.concatenate([shortlist, rest])
        scores = np.concatenate([exact, self._exact(rest, exact_query)])
        return _best(rows, scores, limit)

    def centroid_similarity(self, groups: list[list[int]], query: Matrix) -> list[float]:
        """Per group of rows, the cosine between ``query`` (a unit float32 vector) and the
        mean of the group's rows; 0.0 for an empty group (or rows that cancel out)."""
        import numpy as np

        # float32 sums: a ranking hint needs no float64 (~1e-7 apart), and they cost half.
        similarities = []
        for rows in groups:
            if not rows:
                similarities.append(0.0)
                continue
            total = self._floats[rows].sum(axis=0)
            norm = float(np.linalg.norm(total))
            similarities.append(float(total @ query) / norm if norm else 0.0)
        return similarities

    def centroid(self, rows: list[int]) -> list[float]:
        """The mean of these rows as a unit vector; ``[]`` if they cancel out."""
        import numpy as np

        total = self._floats[rows].astype(np.float64).sum(axis=0)
        norm = float(np.linalg.norm(total))
        return [float(x) for x in total / norm] if norm else []

    def _exact(
        self, rows: npt.NDArray[np.intp], query: npt.NDArray[np.float64]
    ) -> npt.NDArray[np.float64]:
        """Similarities of these rows in float64: a row scores the same whichever other rows
        are scored with it (float32 BLAS sums rows in blocks, a few 1e-9 apart, which can
        flip the rounding to :data:`TIE_DECIMALS`)."""
        import numpy as np

        return self._floats[rows].astype(np.float64) @ query

    def _approximate(self, query: Matrix) -> tuple[Matrix, Matrix]:
        """Every row's similarity from the int8 codes, and how far each can be off."""
        import numpy as np
        import simsimd

        size = self.size
        query_scale, query_codes, query_error = _quantise_query(query)
        products = np.empty((1, size), dtype=np.float32)
        simsimd.cdist(
            query_codes[None, :],
            self._codes[:size],
            metric="dot",
            out=products,
            threads=_threads() if size >= THREADED_FROM else 1,
        )
        approximate = products[0] * self._scales[:size]
        approximate *= np.float32(query_scale)
        bound = self._errors[:size] * np.float32(1.0 + query_error)
        bound += np.float32(query_error + _SLACK)
        return approximate, bound


def _best(
    rows: npt.NDArray[np.intp], scores: npt.NDArray[np.float64], limit: int
) -> tuple[list[int], list[float]]:
    """The ``limit`` best of these rows by rounded score, ties by row.

    Similarities are rounded (6 decimals is far finer than any real difference in relevance)
    and equal ones rank, and are cut at ``limit``, by row, i.e. by when they were first
    embedded: the PostgreSQL store returns the same rounded scores in the same order.
    """
    import numpy as np

    rounded = np.round(scores, TIE_DECIMALS)
    floor = np.partition(rounded, len(rounded) - limit)[len(rounded) - limit]
    near = rounded >= floor
    rows, rounded = rows[near], rounded[near]
    order = np.lexsort((rows, -rounded))[:limit]
    return rows[order].tolist(), rounded[order].tolist()


def _normalise_into(rows: Matrix, out: Matrix) -> None:
    """Write ``rows`` scaled to unit length into ``out`` (zero rows stay zero), with no
    full-size temporary: at 100k rows that would be another 150 MB."""
    import numpy as np

    norms = np.sqrt(np.einsum("ij,ij->i", rows, rows))
    norms[norms == 0] = 1.0
    np.divide(rows, norms[:, None], out=out)


def _quantise_into(
    unit: Matrix, codes: npt.NDArray[np.int8], scales: Matrix, errors: Matrix
) -> None:
    """Per-row int8 codes of unit rows (scale = largest component / 127) and the length of
    each row's quantisation error, in chunks to keep temporaries small."""
    import numpy as np

    for start in range(0, len(unit), 4096):
        chunk = unit[start : start + 4096]
        scale = np.abs(chunk).max(axis=1) / np.float32(_CODE_MAX)
        scale[scale == 0] = 1.0  # a zero row: codes 0, error 0
        rounded = np.rint(chunk / scale[:, None])
        codes[start : start + len(chunk)] = rounded
        residual = chunk - rounded * scale[:, None]
        scales[start : start + len(chunk)] = scale
        errors[start : start + len(chunk)] = np.sqrt(np.einsum("ij,ij->i", residual, residual))


def _quantise_query(query: Matrix) -> tuple[float, npt.NDArray[np.int8], float]:
    import numpy as np

    largest = float(np.abs(query).max()) if len(query) else 0.0
    scale = largest / _CODE_MAX if largest else 1.0
    rounded = np.rint(query / np.float32(scale))
    residual = query - rounded * np.float32(scale)
    return scale, rounded.astype(np.int8), float(np.sqrt(residual @ residual))


def _threads() -> int:
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(2, cores))
