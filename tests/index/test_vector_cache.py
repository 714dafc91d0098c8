from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pytest

from shiyi.index import vector_rows
from shiyi.index.vector_cache import VectorCache


@pytest.fixture(autouse=True, params=["exact", "int8"])
def first_pass(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every test twice: small stores scored exactly, and through the int8 first pass."""
    if request.param == "int8":
        monkeypatch.setattr(vector_rows, "EXACT_UP_TO", 0)
    return str(request.param)


def brute_force(data: dict[str, list[float]], query: npt.NDArray[np.float64], k: int) -> list[str]:
    matrix = np.array(list(data.values()))
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    return [list(data)[i] for i in np.argsort(-(matrix @ query))[:k]]


def test_matches_brute_force_and_tracks_updates() -> None:
    rng = np.random.default_rng(3)
    data = {f"v{i}": rng.normal(size=16).tolist() for i in range(500)}
    loads: list[int] = []

    def loader() -> tuple[list[str], npt.NDArray[np.float32]]:
        loads.append(1)
        return list(data), np.array(list(data.values()), dtype=np.float32)

    cache = VectorCache(16, loader)
    cache.upsert([("ignored", [1.0] * 16)])  # before loading, the loader is the truth
    query = rng.normal(size=16)
    expected = brute_force(data, query, 10)
    assert [s.id for s in cache.search(query.tolist(), 10)] == expected
    assert loads == [1]
    cache.upsert([("new", query.tolist())])
    assert cache.search(query.tolist(), 1)[0].id == "new"
    assert abs(cache.search(query.tolist(), 1)[0].score - 1.0) < 1e-5
    cache.delete(["new", expected[0]])
    assert [s.id for s in cache.search(query.tolist(), 2)] == expected[1:3]
    assert len(cache) == 499
    assert loads == [1]


def test_appends_past_the_buffer_and_updates_in_place() -> None:
    rng = np.random.default_rng(5)
    data = {f"v{i}": rng.normal(size=8).tolist() for i in range(3)}
    cache = VectorCache(8, lambda: (list(data), np.array(list(data.values()), dtype=np.float32)))
    assert len(cache) == 3
    # Many small batches, as the embedding worker writes them: the buffer must grow.
    for batch in range(30):
        rows = [(f"b{batch}_{i}", rng.normal(size=8).tolist()) for i in range(100)]
        cache.upsert(rows)
        data.update(rows)
    query = rng.normal(size=8)
    assert [s.id for s in cache.search(query.tolist(), 25)] == brute_force(data, query, 25)
    assert len(cache) == 3003
    # Re-embedding an id replaces its row instead of adding one.
    cache.upsert([("v0", (query * 3).tolist())])
    top = cache.search(query.tolist(), 1)[0]
    assert top.id == "v0"
    assert abs(top.score - 1.0) < 1e-5
    assert len(cache) == 3003
    # A zero vector scores 0 against everything instead of dividing by zero.
    cache.upsert([("zero", [0.0] * 8)])
    scores = {s.id: s.score for s in cache.search(query.tolist(), 3004)}
    assert scores["zero"] == 0.0


def test_empty_store_and_repeated_ids_from_the_loader() -> None:
    empty = VectorCache(4, lambda: ([], np.empty((0, 4), dtype=np.float32)))
    assert empty.search([1.0, 0.0, 0.0, 0.0], 5) == []
    rows = np.array([[1, 0, 0, 0], [0, 1, 0, 0]], dtype=np.float32)
    twice = VectorCache(4, lambda: (["a", "a"], rows))
    hits = twice.search([0.0, 1.0, 0.0, 0.0], 5)
    assert [(h.id, round(h.score, 5)) for h in hits] == [("a", 1.0)]


def test_centroid_similarity_is_the_cosine_of_a_groups_mean_direction() -> None:
    rng = np.random.default_rng(11)
    data = {f"v{i}": (rng.normal(size=16) * rng.uniform(0.5, 3)).tolist() for i in range(40)}
    cache = VectorCache(16, lambda: (list(data), np.array(list(data.values()), dtype=np.float32)))
    groups = {"first": ["v0", "v1", "v2"], "second": ["v3", "gone"], "none": ["gone"], "empty": []}
    query = rng.normal(size=16)
    found = cache.centroid_similarity(groups, (query * 4).tolist())  # its length is no matter
    assert set(found) == {"first", "second"}  # a group with no stored vector is left out

    def expected(keys: list[str]) -> float:
        rows = np.array([data[k] for k in keys])
        mean = (rows / np.linalg.norm(rows, axis=1, keepdims=True)).mean(axis=0)
        return float(mean @ query / (np.linalg.norm(mean) * np.linalg.norm(query)))

    assert found["first"] == pytest.approx(expected(["v0", "v1", "v2"]), abs=1e-5)
    assert found["second"] == pytest.approx(expected(["v3"]), abs=1e-5)
    cache.upsert([("v3", query.tolist())])  # re-embedded: the new vector counts
    assert cache.centroid_similarity({"second": ["v3"]}, query.tolist()) == {
        "second": pytest.approx(1.0, abs=1e-5)
    }


def test_a_search_for_some_owners_ranks_only_their_rows() -> None:
    rng = np.random.default_rng(11)
    data = {f"v{i}": rng.normal(size=16).tolist() for i in range(3000)}
    owner = {key: "ana" if i % 100 else "bo" for i, key in enumerate(data)}  # bo: 30 rows
    asked: list[int] = []

    def owners_of(keys: list[str]) -> dict[str, str]:
        asked.append(len(keys))
        return {key: owner[key] for key in keys if key in owner}

    cache = VectorCache(
        16, lambda: (list(data), np.array(list(data.values()), dtype=np.float32)), owners_of
    )
    query = rng.normal(size=16)
    bos = {key: vector for key, vector in data.items() if owner[key] == "bo"}
    assert [s.id for s in cache.search(query.tolist(), 10, {"bo"})] == brute_force(bos, query, 10)
    assert [s.id for s in cache.search(query.tolist(), 40, {"bo"})] == brute_force(bos, query, 30)
    assert [s.id for s in cache.search(query.tolist(), 10, {"ana", "bo"})] == brute_force(
        data, query, 10
    )
    assert cache.search(query.tolist(), 10, {"carol"}) == []
    assert asked == [3000]  # each row's owner is looked up once
    cache.upsert([("gone", query.tolist())])  # a vector whose record the lookup cannot find
    assert "gone" not in [s.id for s in cache.search(query.tolist(), 5, {"ana", "bo"})]
    assert cache.search(query.tolist(), 1)[0].id == "gone"  # unlimited: every row
    assert asked == [3000, 1]


def test_an_owner_that_changed_is_looked_up_again() -> None:
    owner = {"a": "ana", "b": "ana"}
    cache = VectorCache(
        2,
        lambda: (["a", "b"], np.array([[1.0, 0.0], [0.0, 1.0]], dtype=np.float32)),
        lambda keys: {key: owner[key] for key in keys},
    )
    assert [s.id for s in cache.search([1.0, 0.1], 2, {"ana"})] == ["a", "b"]
    owner["a"] = "workspace"
    assert [s.id for s in cache.search([1.0, 0.1], 2, {"ana"})] == ["a", "b"]  # cached
    cache.forget_owners(["a"])
    assert [s.id for s in cache.search([1.0, 0.1], 2, {"ana"})] == ["b"]
    cache.delete(["b"])
    assert [s.id for s in cache.search([1.0, 0.1], 2, {"workspace"})] == ["a"]


def test_a_cache_without_an_owner_lookup_refuses_an_owners_search() -> None:
    cache = VectorCache(2, lambda: (["a"], np.array([[1.0, 0.0]], dtype=np.float32)))
    with pytest.raises(ValueError, match="owner lookup"):
        cache.search([1.0, 0.0], 1, {"ana"})
