from __future__ import annotations

import numpy as np

from shiyi.memory.vector_cache import VectorCache


def test_matches_brute_force_and_tracks_updates() -> None:
    rng = np.random.default_rng(3)
    data = {f"v{i}": rng.normal(size=16).tolist() for i in range(500)}
    loads: list[int] = []

    def loader() -> list[tuple[str, list[float]]]:
        loads.append(1)
        return list(data.items())

    cache = VectorCache(16, loader)
    cache.upsert([("ignored", [1.0] * 16)])  # before loading, the loader is the truth
    query = rng.normal(size=16)
    matrix = np.array(list(data.values()))
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    expected = [list(data)[i] for i in np.argsort(-(matrix @ query))[:10]]
    assert [s.id for s in cache.search(query.tolist(), 10)] == expected
    assert loads == [1]
    cache.upsert([("new", query.tolist())])
    assert cache.search(query.tolist(), 1)[0].id == "new"
    assert abs(cache.search(query.tolist(), 1)[0].score - 1.0) < 1e-5
    cache.delete(["new", expected[0]])
    assert [s.id for s in cache.search(query.tolist(), 2)] == expected[1:3]
    assert len(cache) == 499
    assert loads == [1]
