"""shiyi runs BLAS on one thread unless the user's environment says otherwise."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from shiyi.index.blas import wanted_threads

_PROBE = (
    "from shiyi.index.blas import limit_blas_threads; limit_blas_threads(); "
    "import numpy, threadpoolctl; "
    "print(min(p['num_threads'] for p in threadpoolctl.threadpool_info() "
    "if p['user_api'] == 'blas'))"
)


def _blas_threads_in_child(**env: str) -> int:
    base = {k: v for k, v in os.environ.items() if not k.endswith("_NUM_THREADS")}
    base.pop("SHIYI_BLAS_THREADS", None)
    out = subprocess.run(
        [sys.executable, "-c", _PROBE], env={**base, **env}, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    return int(out.stdout.strip())


def test_one_thread_by_default() -> None:
    assert _blas_threads_in_child() == 1


def test_the_users_openblas_setting_wins() -> None:
    assert _blas_threads_in_child(OPENBLAS_NUM_THREADS="2") == 2


def test_shiyi_blas_threads_chooses_the_count() -> None:
    assert _blas_threads_in_child(SHIYI_BLAS_THREADS="2") == 2


def test_a_bad_count_falls_back_to_one(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SHIYI_BLAS_THREADS", "lots")
    assert wanted_threads() == 1
