from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from shiyi.errors import StorageError
from shiyi.index.embeddings.cache import CachedEmbedder, EmbeddingCache, content_hash
from shiyi.memory.protocol import Embedder
from tests.support.embedders import CountingEmbedder


@pytest.fixture
def cache(tmp_path: Path) -> EmbeddingCache:
    return EmbeddingCache(tmp_path / "sub" / "emb.sqlite")


def test_content_hash_is_sha256_hex() -> None:
    assert content_hash("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    assert content_hash("记忆") != content_hash("记 忆")


def test_round_trip_as_float32(cache: EmbeddingCache) -> None:
    cache.put_many("m", ["a", "b"], [[0.1, 0.2, 0.3], [1.0, -2.0, 3.5]])
    got = cache.get_many("m", ["a", "b", "c"])
    assert set(got) == {content_hash("a"), content_hash("b")}
    assert got[content_hash("a")] == pytest.approx([0.1, 0.2, 0.3], abs=1e-7)
    assert got[content_hash("b")] == [1.0, -2.0, 3.5]
    assert cache.get_many("other-model", ["a"]) == {}
    assert cache.count("m") == 2
    assert cache.count() == 2


def test_put_many_checks_lengths(cache: EmbeddingCache) -> None:
    with pytest.raises(ValueError, match="2 texts but 1 vectors"):
        cache.put_many("m", ["a", "b"], [[1.0]])


def test_get_many_handles_more_keys_than_one_query(cache: EmbeddingCache) -> None:
    texts = [f"t{i}" for i in range(1234)]
    cache.put_many("m", texts, [[float(i)] for i in range(1234)])
    got = cache.get_many("m", texts)
    assert len(got) == 1234
    assert got[content_hash("t1000")] == [1000.0]


def test_persists_across_reopen(tmp_path: Path) -> None:
    first = EmbeddingCache(tmp_path / "c.sqlite")
    first.put_many("m", ["x"], [[1.0, 2.0]])
    first.close()
    second = EmbeddingCache(tmp_path / "c.sqlite")
    assert second.get_many("m", ["x"]) == {content_hash("x"): [1.0, 2.0]}


def test_unopenable_path_is_storage_error(tmp_path: Path) -> None:
    with pytest.raises(StorageError, match=r"embedding cache in .* cannot be opened"):
        EmbeddingCache(tmp_path)  # a directory, not a file


def test_cached_embedder_never_embeds_a_text_twice(cache: EmbeddingCache) -> None:
    inner = CountingEmbedder()
    embedder = CachedEmbedder(inner, cache)
    assert isinstance(embedder, Embedder)
    assert (embedder.model_id, embedder.dimension) == ("fake", 4)

    first = embedder.embed(["hello", "world", "hello", ""])
    assert inner.seen == ["hello", "world", ""]
    assert first == [inner.vector(t) for t in ["hello", "world", "hello", ""]]

    second = embedder.embed(["world", "new", "hello", "new"])
    assert inner.seen == ["hello", "world", "", "new"]
    assert second == [inner.vector(t) for t in ["world", "new", "hello", "new"]]
    assert embedder.embed([]) == []


def test_cache_is_per_model(cache: EmbeddingCache) -> None:
    a, b = CountingEmbedder("a"), CountingEmbedder("b")
    CachedEmbedder(a, cache).embed(["same"])
    CachedEmbedder(b, cache).embed(["same"])
    assert a.seen == ["same"]
    assert b.seen == ["same"]


def test_vector_of_other_dimension_is_a_miss(cache: EmbeddingCache) -> None:
    cache.put_many("fake", ["t"], [[1.0, 2.0]])
    inner = CountingEmbedder(dimension=4)
    assert CachedEmbedder(inner, cache).embed(["t"]) == [inner.vector("t")]
    assert inner.seen == ["t"]


def test_concurrent_callers_share_work(cache: EmbeddingCache) -> None:
    inner = CountingEmbedder()
    embedder = CachedEmbedder(inner, cache)
    texts = [f"text {i}" for i in range(50)]
    threads = [threading.Thread(target=embedder.embed, args=(texts,)) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(inner.seen) == sorted(texts)


def _job_queue_with_cache(path: Path) -> None:
    """A table standing for the job queue the cache shares its file with."""
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE jobs (id INTEGER PRIMARY KEY, kind TEXT)")
        conn.execute("INSERT INTO jobs(kind) VALUES ('ingest')")
    conn.close()


def _jobs(path: Path) -> int:
    with sqlite3.connect(path) as conn:
        count = int(conn.execute("SELECT count(*) FROM jobs").fetchone()[0])
    conn.close()
    return count


def test_a_cache_table_of_another_shape_is_rebuilt_and_the_file_kept(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "memory.sqlite3"
    _job_queue_with_cache(path)
    with sqlite3.connect(path) as conn:  # an older layout of the table
        conn.execute("CREATE TABLE embedding_cache (text_hash TEXT PRIMARY KEY, v BLOB)")
    cache = EmbeddingCache(path)
    cache.put_many("m", ["x"], [[1.0, 2.0]])
    assert cache.get_many("m", ["x"]) == {content_hash("x"): [1.0, 2.0]}
    cache.close()
    assert "dropped and rebuilt empty" in caplog.text and str(path) in caplog.text
    assert _jobs(path) == 1  # the job queue beside it is untouched


def test_a_damaged_cache_table_is_a_miss_and_never_an_error(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "memory.sqlite3"
    _job_queue_with_cache(path)
    cache = EmbeddingCache(path)
    texts = [f"t{i}" for i in range(2000)]
    cache.put_many("m", texts, [[float(i)] * 64 for i in range(2000)])
    cache.close()
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        sql = "SELECT rootpage FROM sqlite_master WHERE name = 'embedding_cache'"
        root = conn.execute(sql).fetchone()[0]
        page = conn.execute("PRAGMA page_size").fetchone()[0]
    with path.open("r+b") as raw:  # the table's root page, garbage
        raw.seek((root - 1) * page)
        raw.write(b"\xff" * page)
    damaged = EmbeddingCache(path)
    embedder = CachedEmbedder(CountingEmbedder(), damaged)
    assert embedder.embed(["t1", "new"]) == [CountingEmbedder().vector(t) for t in ["t1", "new"]]
    assert damaged.disabled
    assert "do not delete it" in caplog.text and ".recover" in caplog.text
    assert _jobs(path) == 1


def test_an_unreadable_file_is_never_to_be_deleted(tmp_path: Path) -> None:
    path = tmp_path / "memory.sqlite3"
    path.write_bytes(b"not sqlite at all" * 500)
    with pytest.raises(StorageError) as raised:
        EmbeddingCache(path)
    message = str(raised.value)
    assert "Do not delete memory.sqlite3" in message and "job queue" in message
    assert ".recover" in message
    assert "delete the file" not in message
