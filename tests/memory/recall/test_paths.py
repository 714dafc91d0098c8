"""Recall paths run side by side, records loaded where they can be, access counts written
behind the search: both real backends, the real embedding model."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from shiyi.config import Settings, load_settings
from shiyi.memory.models import EventRecord, FactRecord, Scored
from shiyi.memory.protocol import MemoryStore
from shiyi.memory.recall import paths as recall
from shiyi.memory.recall.paths import Found, Records, run_paths, touch_later
from shiyi.memory.service import Memory
from tests.memory.conftest import event_access

BASE = 1_700_000_000.0
CORPUS = [
    "Alice adopted a dog named Biscuit last spring.",
    "The staging server returns error 404 for user3 on /api/login.",
    "Let's meet for coffee on Friday.",
    "Biscuit loves chasing tennis balls in the park.",
    "The quarterly report is due on 2024-05-01.",
]
QUERIES = ["Biscuit the dog", "error 404 on login", "when is the report due?", "coffee"]


@pytest.fixture
def settings(tmp_path: Path, memory_store: str) -> Settings:
    """Once per backend (``memory_store``: 'embedded' or a PostgreSQL URL)."""
    loaded = load_settings(cwd=tmp_path, workspace=tmp_path)
    loaded.memory.store = memory_store
    return loaded


@pytest.fixture
def memory(settings: Settings) -> Iterator[Memory]:
    opened = Memory.open(settings, start_worker=False)
    opened.import_events(
        [
            EventRecord(f"e{i}", "s1", "run_a", BASE + i * 60, "user", text, "user_message", i)
            for i, text in enumerate(CORPUS)
        ]
    )
    assert opened.worker.drain(timeout=120)
    yield opened
    opened.close()


class InlinePool(ThreadPoolExecutor):
    """Runs every task at once in the caller: the paths one after another."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        done: Future[Any] = Future()
        try:
            done.set_result(fn(*args, **kwargs))
        except BaseException as exc:
            done.set_exception(exc)
        return done


def ranked(hits: Sequence[Any]) -> list[tuple[str, float]]:
    return [(hit.id, round(hit.score, 9)) for hit in hits]


def test_side_by_side_paths_give_the_same_hits_as_one_after_another(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    fact = memory.remember("Alice's dog Biscuit is a beagle", kind="semantic")
    assert memory.worker.drain(timeout=60)
    concurrent = {q: ranked(memory.retriever.search(q, limit=10, touch=False)) for q in QUERIES}
    inline = InlinePool(1)
    monkeypatch.setattr(recall, "recall_pool", lambda: inline)
    sequential = {q: ranked(memory.retriever.search(q, limit=10, touch=False)) for q in QUERIES}
    assert concurrent == sequential
    assert fact.id in [hit_id for hit_id, _ in concurrent["Biscuit the dog"]]


class Recording:
    """A real store that notes which ids were looked up as events and as facts."""

    def __init__(self, store: MemoryStore) -> None:
        self.store = store
        self.asked_events: list[str] = []
        self.asked_facts: list[str] = []

    def get_events(self, ids: Sequence[str]) -> list[EventRecord]:
        self.asked_events += ids
        return self.store.get_events(ids)

    def get_facts(self, ids: Sequence[str]) -> list[FactRecord]:
        self.asked_facts += ids
        return self.store.get_facts(ids)


def test_records_are_looked_up_only_where_they_can_be(memory: Memory) -> None:
    fact = memory.remember("Biscuit is a beagle")
    store = Recording(memory.store)
    recent = {e.id: e for e in memory.store.recent_events(1)}
    records = Records()
    found = [
        Found([Scored("e0", 1.0), Scored(fact.id, 0.5)], events={"e0"}, facts={fact.id}),
        Found([Scored("e1", 1.0), Scored("e0", 0.5)]),  # keyword: either kind
        Found([Scored(i, 1.0) for i in recent], set(recent), records=recent),
    ]
    records.load(store, found)  # type: ignore[arg-type]
    assert sorted(store.asked_events) == ["e0", "e1"]
    assert sorted(store.asked_facts) == sorted([fact.id, "e1"])
    records.load(store, [Found([Scored("e1", 1.0), Scored("e2", 0.5)])])  # type: ignore[arg-type]
    assert sorted(store.asked_events) == ["e0", "e1", "e2"]  # each id is asked once
    assert [e.id for e in records.events_in(["e2", *recent, "e0", "nope"])] == [
        "e2",
        *recent,
        "e0",
    ]
    assert [f.id for f in records.facts_in(["e0", fact.id])] == [fact.id]


def test_the_pool_splits_lookups_and_keeps_every_record(memory: Memory) -> None:
    records = Records()
    everything = Found([Scored(f"e{i}", 1.0) for i in range(len(CORPUS))])
    records.load(memory.store, [everything], recall.recall_pool())
    assert sorted(records.events) == [f"e{i}" for i in range(len(CORPUS))]
    assert records.facts == {}


def test_a_failing_path_fails_the_search_wherever_it_runs(memory: Memory) -> None:
    def path(name: str) -> Found:
        if name == "keyword":
            raise RuntimeError("keyword index broken")
        return Found([Scored("e0", 1.0)])

    with pytest.raises(RuntimeError, match="keyword index broken"):
        run_paths(memory.store, ["vector", "keyword"], path)

    def lead_fails(name: str) -> Found:
        if name == "vector":
            raise RuntimeError("no embedder")
        return Found([])

    with pytest.raises(RuntimeError, match="no embedder"):
        run_paths(memory.store, ["vector", "keyword"], lead_fails)


def access(memory: Memory, event_id: str) -> int:
    return event_access(memory.store, event_id)[0]


def test_facts_are_counted_at_once_and_events_behind_the_search(memory: Memory) -> None:
    fact = memory.remember("Biscuit is a beagle")
    assert memory.worker.drain(timeout=60)
    hits = memory.retriever.search("Biscuit the dog", limit=10)
    assert {"event", "fact"} <= {hit.node for hit in hits}
    # Facts are read back by reranking and promotion, so their count is already written.
    assert memory.store.get_facts([fact.id])[0].access_count == 1
    memory.retriever.flush()
    events = [hit.id for hit in hits if hit.node == "event"]
    assert [access(memory, e) for e in events] == [1] * len(events)


def test_a_count_queued_behind_a_closed_store_is_dropped_quietly(settings: Settings) -> None:
    opened = Memory.open(settings, start_worker=False)
    store = opened.store
    opened.close()
    assert touch_later(store, ["e0"], at=BASE).result(timeout=10) is None


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread nice is Linux's")
def test_access_counts_are_written_at_a_lower_priority(memory: Memory) -> None:
    def nice() -> int:
        return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

    base = os.getpriority(os.PRIO_PROCESS, 0)
    touch_later(memory.store, ["e0"], at=BASE).result(timeout=10)
    pool = recall._shared_pool("shiyi-touch", 1)
    assert pool.submit(nice).result(timeout=10) == min(19, base + 10)
    assert nice() == base  # the searching thread keeps its priority
