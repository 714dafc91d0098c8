"""One BLAS thread for shiyi's numpy work, unless the user chose otherwise.

Everything shiyi asks of BLAS is small: a query embedding is a handful of (tokens x 384)
matrix products and a vector search one matrix-vector product.  OpenBLAS's default of one
thread per core splits even these, and the threads spin-wait for each other: at 100k
events the hybrid query's p95 went from 45 ms with one thread to 94 ms with two, on a
two-core machine also running the reply.  Batch embedding loses little, since the worker
runs beside the agent anyway.  ``OPENBLAS_NUM_THREADS``/``OMP_NUM_THREADS`` set by the user
win; ``SHIYI_BLAS_THREADS`` sets shiyi's own choice.
"""

from __future__ import annotations

import logging
import os
import threading

log = logging.getLogger(__name__)

_USER_SETTINGS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
_done = False
_lock = threading.Lock()


def wanted_threads() -> int | None:
    """The BLAS thread count shiyi applies, or None when the user's environment decides."""
    if any(os.environ.get(name) for name in _USER_SETTINGS):
        return None
    raw = os.environ.get("SHIYI_BLAS_THREADS", "1")
    try:
        return max(1, int(raw))
    except ValueError:
        log.warning("SHIYI_BLAS_THREADS=%r is not a number; using 1 BLAS thread", raw)
        return 1


def limit_blas_threads() -> None:
    """Apply :func:`wanted_threads` once per process (numpy must be importable)."""
    global _done
    if _done:
        return
    with _lock:
        if _done:
            return
        _done = True
        threads = wanted_threads()
        if threads is None:
            return
        import numpy  # noqa: F401  (loads the BLAS library threadpoolctl adjusts)
        from threadpoolctl import threadpool_limits

        threadpool_limits(limits=threads, user_api="blas")
