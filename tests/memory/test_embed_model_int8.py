"""A store embedded with the float MiniLM and the int8 one: never mixed, switched by reindex."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from shiyi.config import Settings, load_settings
from shiyi.errors import StorageError
from shiyi.index.embeddings import INT8_MODEL_ID, CachedEmbedder
from shiyi.index.embeddings.minilm_onnx import OnnxMiniLMEmbedder
from shiyi.memory.service import Memory
from shiyi.memory.text.contextual import indexed_texts
from tests.support.records import turn

CORPUS = [
    "Alice adopted a dog named Biscuit last spring.",
    "The quarterly report is due on 2024-05-01.",
    "Let's meet for coffee on Friday.",
]


@pytest.fixture
def settings(tmp_path: Path, memory_store: str) -> Settings:
    loaded = load_settings(cwd=tmp_path, workspace=tmp_path)
    loaded.memory.store = memory_store
    loaded.memory.lifecycle.extraction = False
    return loaded


def _cache(memory: Memory) -> CachedEmbedder:
    assert isinstance(memory.embedder, CachedEmbedder)
    return memory.embedder


def test_int8_model_refuses_a_float_store_until_reindexed(settings: Settings) -> None:
    events = [turn(i, text, run="run_a") for i, text in enumerate(CORPUS)]
    memory = Memory.open(settings, start_worker=False)
    memory.import_events(events)
    memory.worker.drain(timeout=120)
    assert memory.stats()["embedded_events"] == len(CORPUS)
    memory.close()

    settings.memory.embed_model = INT8_MODEL_ID
    with pytest.raises(StorageError) as refused:
        Memory.open(settings, start_worker=False)
    message = str(refused.value)
    assert "'all-MiniLM-L6-v2'" in message and repr(INT8_MODEL_ID) in message
    assert "shiyi memory reindex --all" in message

    switched = Memory.open(settings, start_worker=False, switch_model=True)
    try:
        assert switched.reindex() == len(CORPUS)
        # the vectors are the int8 graph's, cached under its own id (never served as float)
        cache = _cache(switched)
        assert cache.model_id == INT8_MODEL_ID
        # each short message embeds its text and, after the first, its lead-in
        assert cache.cache.count(INT8_MODEL_ID) == len(CORPUS) + len(CORPUS) - 1
        texts = indexed_texts(events)
        [stored] = cache.cache.get_many(INT8_MODEL_ID, texts[:1]).values()
        fresh = OnnxMiniLMEmbedder(variant="int8").embed(texts[:1])[0]
        assert all(math.isclose(a, b, abs_tol=1e-5) for a, b in zip(stored, fresh, strict=True))
        hits = switched.search("puppy", mode="semantic", limit=1)
        assert [h.id for h in hits] == [events[0].id]
    finally:
        switched.close()
    Memory.open(settings, start_worker=False).close()  # int8 is now the recorded model
    settings.memory.embed_model = "all-MiniLM-L6-v2"
    with pytest.raises(StorageError, match="reindex --all"):
        Memory.open(settings, start_worker=False)  # and float is refused the other way
