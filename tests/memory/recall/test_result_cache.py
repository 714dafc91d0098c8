"""The retrieval-result cache: hits for a repeated search, never a stale or foreign answer."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from pathlib import Path

import pytest

from shiyi.config import Settings, load_settings
from shiyi.index.cache_stats import RESULT, counter
from shiyi.memory.models import MemoryHit
from shiyi.memory.recall.result_cache import ResultCache, SearchKey
from shiyi.memory.scopes import Viewer
from shiyi.memory.service import Memory
from tests.support.records import seed, turn

event = functools.partial(turn, run="run_a")
CORPUS = [
    "Alice adopted a dog named Biscuit last spring.",
    "The staging server returns error 404 for user3 on /api/login.",
    "Let's meet for coffee on Friday.",
]


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    loaded = load_settings(cwd=tmp_path, workspace=tmp_path)
    loaded.memory.embedder = "none"  # keyword and graph paths: fast, and enough here
    return loaded


@pytest.fixture
def memory(settings: Settings) -> Iterator[Memory]:
    opened = Memory.open(settings, start_worker=False)
    seed(opened, [event(i, text) for i, text in enumerate(CORPUS)])
    yield opened
    opened.close()


def counts() -> tuple[int, int]:
    found = counter(RESULT)
    return found.hits, found.misses


def texts(hits: list[MemoryHit]) -> list[str]:
    return [hit.text for hit in hits]


def test_the_same_search_again_is_a_hit_with_the_same_answer(memory: Memory) -> None:
    before = counts()
    first = memory.search("error 404 staging", mode="keyword")
    second = memory.search("  Error 404   staging ", mode="keyword")  # same, normalised
    hits, misses = counts()
    assert (hits - before[0], misses - before[1]) == (1, 1)
    assert texts(second) == texts(first) and "404" in second[0].text
    second[0].text = "changed by a caller"  # callers get copies: the cache stays intact
    assert memory.search("error 404 staging", mode="keyword")[0].text == first[0].text


def test_other_arguments_are_other_searches(memory: Memory) -> None:
    memory.search("coffee", mode="keyword", limit=5)
    before = counts()
    memory.search("coffee", mode="keyword", limit=3)
    memory.search("coffee", mode="recent", limit=5)
    memory.search("coffee", mode="keyword", limit=5, kinds=["preference"])
    assert counts()[0] == before[0]


def test_a_write_between_two_searches_gives_the_fresh_answer(memory: Memory) -> None:
    assert not any("oolong" in t for t in texts(memory.search("oolong tea", mode="keyword")))
    memory.remember("My favourite tea is oolong", kind="preference")
    again = memory.search("oolong tea", mode="keyword")
    assert any("oolong" in t for t in texts(again))


def test_a_forget_never_leaves_a_cached_hit_with_the_forgotten_text(memory: Memory) -> None:
    found = memory.search("Biscuit dog", mode="keyword")
    assert "Biscuit" in found[0].text
    assert memory.forget_ids([found[0].id]).total == 1
    after = memory.search("Biscuit dog", mode="keyword")
    assert not any("Biscuit" in t for t in texts(after))


def test_a_direct_store_write_invalidates_too(memory: Memory) -> None:
    """The page's fact edit writes through ``memory.store``: that must count as a write."""
    fact = memory.remember("The deploy window is Friday", kind="convention")
    assert "Friday" in memory.search("deploy window", mode="keyword")[0].text
    import dataclasses

    memory.store.upsert_facts([dataclasses.replace(fact, value="The deploy window is Monday")])
    assert "Monday" in memory.search("deploy window", mode="keyword")[0].text


def test_results_are_never_shared_between_viewers(memory: Memory) -> None:
    assert memory.search("coffee Friday", mode="keyword")  # cached for the configured user
    bob = memory.scoped(Viewer("bob", "shiyi", "default"))
    before = counts()
    assert bob.search("coffee Friday", mode="keyword") == []
    assert counts()[1] == before[1] + 1  # a miss: bob's own search ran


def test_off_when_the_setting_is_zero(settings: Settings) -> None:
    settings.memory.result_cache_seconds = 0
    memory = Memory.open(settings, start_worker=False)
    try:
        seed(memory, [event(0, CORPUS[2])])
        memory.search("coffee", mode="keyword")
        before = counts()
        memory.search("coffee", mode="keyword")
        assert counts() == before  # not even counted as a lookup
    finally:
        memory.close()


def key(query: str = "tea") -> SearchKey:
    return SearchKey.of(Viewer(), query, "hybrid", None, 5, None)


def test_entries_expire_after_the_time_to_live() -> None:
    now = [1000.0]
    cache = ResultCache(ttl=300, clock=lambda: now[0])
    cache.put(key(), cache.generation, [MemoryHit("f1", "fact", "tea", 0.0)])
    now[0] += 299
    assert cache.get(key()) is not None
    now[0] += 2
    assert cache.get(key()) is None


def test_a_search_that_raced_a_write_is_not_kept() -> None:
    cache = ResultCache()
    began = cache.generation
    cache.bump()  # a write landed while the search read the store
    cache.put(key(), began, [MemoryHit("f1", "fact", "old text", 0.0)])
    assert cache.get(key()) is None


def test_the_cache_is_bounded_least_recently_used_first() -> None:
    cache = ResultCache(capacity=2)
    for name in ("a", "b"):
        cache.put(key(name), 0, [])
    assert cache.get(key("a")) == []  # a is now the most recent
    cache.put(key("c"), 0, [])
    assert cache.get(key("b")) is None and cache.get(key("a")) == [] and len(cache) == 2
