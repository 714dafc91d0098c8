from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pytest

from shiyi.index import vector_rows
from shiyi.index.vector_rows import TIE_DECIMALS, VectorRows


def exact_top(
    matrix: npt.NDArray[np.float32], query: npt.NDArray[np.float32], k: int
) -> tuple[list[int], list[float]]:
    """Every row scored exactly: the answer the int8 first pass must reproduce."""
    unit = np.empty_like(matrix)
    vector_rows._normalise_into(matrix, unit)  # the stored rows, as stored
    rounded = np.round(unit.astype(np.float64) @ query.astype(np.float64), TIE_DECIMALS)
    order = np.lexsort((np.arange(len(unit)), -rounded))[:k]
    return order.tolist(), rounded[order].tolist()


def rows_of(matrix: npt.NDArray[np.float32]) -> VectorRows:
    rows = VectorRows(matrix.shape[1])
    rows.adopt(matrix.copy())
    return rows


def unit(vector: npt.NDArray[np.float64]) -> npt.NDArray[np.float32]:
    return (vector / np.linalg.norm(vector)).astype(np.float32)


@pytest.fixture(autouse=True)
def int8_pass_from_any_size(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vector_rows, "EXACT_UP_TO", 0)


def test_the_int8_pass_finds_what_the_float_scan_finds_among_near_ties() -> None:
    # 3,000 rows a hair apart around one direction: their int8 scores are off by more than
    # their true differences, so the shortlist alone misses true top rows; the error bound
    # must bring them back.
    rng = np.random.default_rng(7)
    centre = rng.normal(size=64)
    matrix = (centre + rng.normal(scale=0.02, size=(3000, 64))).astype(np.float32)
    rows = rows_of(matrix)
    for _ in range(40):
        query = unit(centre + rng.normal(scale=0.05, size=64))
        assert rows.search(query, 20) == exact_top(matrix, query, 20)


def test_identical_rows_tie_by_row_and_a_zero_row_scores_zero() -> None:
    rng = np.random.default_rng(2)
    matrix = rng.normal(size=(500, 32)).astype(np.float32)
    matrix[100:130] = matrix[7]  # 31 identical rows
    matrix[400] = 0.0
    rows = rows_of(matrix)
    query = unit(matrix[7].astype(np.float64))
    found, scores = rows.search(query, 10)
    assert found == [7, *range(100, 109)]
    assert scores == [1.0] * 10
    everything = dict(zip(*rows.search(query, 500), strict=True))
    assert everything[400] == 0.0


def test_writes_grow_and_deletions_keep_the_codes_in_step() -> None:
    rng = np.random.default_rng(4)
    matrix = rng.normal(size=(300, 16)).astype(np.float32)
    rows = rows_of(matrix)
    more = rng.normal(size=(200, 16)).astype(np.float32)
    rows.grow(600)
    rows.write(300, more)
    matrix = np.vstack([matrix, more])
    matrix[5] = rng.normal(size=16)  # re-embedded in place
    rows.write(5, matrix[5:6].copy())
    kept = [i for i in range(500) if i % 3]
    rows.keep(kept)
    matrix = matrix[kept]
    for _ in range(20):
        query = unit(rng.normal(size=16))
        assert rows.search(query, 15) == exact_top(matrix, query, 15)


def test_a_large_store_scores_on_two_threads_with_the_same_result(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rng = np.random.default_rng(9)
    matrix = rng.normal(size=(5000, 48)).astype(np.float32)
    rows = rows_of(matrix)
    queries = [unit(rng.normal(size=48)) for _ in range(10)]
    one_thread = [rows.search(q, 25) for q in queries]
    monkeypatch.setattr(vector_rows, "THREADED_FROM", 100)
    assert [rows.search(q, 25) for q in queries] == one_thread
    assert one_thread == [exact_top(matrix, q, 25) for q in queries]


def test_asking_for_more_than_is_stored_returns_everything() -> None:
    matrix = np.eye(4, dtype=np.float32)
    rows = rows_of(matrix)
    found, scores = rows.search(unit(np.array([1.0, 0.5, 0.0, 0.0])), 10)
    assert found == [0, 1, 2, 3]
    assert scores[2:] == [0.0, 0.0]
    assert VectorRows(4).search(unit(np.ones(4)), 3) == ([], [])


def test_only_a_small_share_of_a_store_is_scored_exactly(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(12)
    matrix = rng.normal(size=(20_000, 64)).astype(np.float32)
    rows = rows_of(matrix)
    scored: list[int] = []
    exact = VectorRows._exact

    def counting(
        self: VectorRows, which: npt.NDArray[np.intp], query: npt.NDArray[np.float64]
    ) -> npt.NDArray[np.float64]:
        scored.append(len(which))
        return exact(self, which, query)

    monkeypatch.setattr(VectorRows, "_exact", counting)
    query = unit(rng.normal(size=64))
    assert rows.search(query, 40) == exact_top(matrix, query, 40)
    assert 80 <= sum(scored) < 2_000
