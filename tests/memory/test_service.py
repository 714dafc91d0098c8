"""The memory service end to end on both backends (Kuzu + SQLite, PostgreSQL), the real
embedding model."""

from __future__ import annotations

import functools
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from shiyi.config import Settings, load_settings
from shiyi.errors import StorageError
from shiyi.llm.types import Message, ToolCall
from shiyi.memory.models import EntityRecord, RelationRecord
from shiyi.memory.service import Memory
from tests.support.records import BASE_TS, seed, turn

event = functools.partial(turn, run="run_a")
"""This file's turns are of run ``run_a``."""

BASE = BASE_TS


CORPUS = [
    "Alice adopted a dog named Biscuit last spring.",
    "The staging server returns error 404 for user3 on /api/login.",
    "我们明天部署新版本到生产环境。",
    "Let's meet for coffee on Friday.",
    "The quarterly report is due on 2024-05-01.",
    "Biscuit loves chasing tennis balls in the park.",
]


@pytest.fixture
def settings(tmp_path: Path, memory_store: str) -> Settings:
    """Once per backend (``memory_store``: 'embedded' or a PostgreSQL URL)."""
    loaded = load_settings(cwd=tmp_path, workspace=tmp_path)
    loaded.memory.store = memory_store
    return loaded


@pytest.fixture
def memory(settings: Settings) -> Iterator[Memory]:
    opened = Memory.open(settings, start_worker=False)
    seed(opened, [event(i, text) for i, text in enumerate(CORPUS)])
    yield opened
    opened.close()


def ids(hits: list[object]) -> list[str]:
    return [h.id for h in hits]  # type: ignore[attr-defined]


def test_keyword_mode_keeps_numbers_identifiers_and_chinese(memory: Memory) -> None:
    assert ids(memory.search("error 404", mode="keyword"))[0] == "e1"
    assert ids(memory.search("user3", mode="keyword"))[0] == "e1"
    assert ids(memory.search("2024", mode="keyword"))[0] == "e4"
    assert ids(memory.search("部署", mode="keyword"))[0] == "e2"


def test_semantic_mode_finds_paraphrases(memory: Memory) -> None:
    hits = memory.search("Who has a pet puppy?", mode="semantic", limit=2)
    assert "e0" in ids(hits)
    assert "e3" not in ids(hits)


def test_graph_mode_follows_entities_and_relations(memory: Memory) -> None:
    direct = ids(memory.search("Tell me about Biscuit", mode="graph"))
    assert set(direct[:2]) == {"e0", "e5"}
    # Two hops: Alice -> (owns) -> Biscuit reaches a turn that never names Alice.
    memory.store.upsert_entities([EntityRecord("alice", "person", "Alice")])
    memory.store.add_relations([RelationRecord("alice", "biscuit", "owns")])
    via_alice = ids(memory.search("What about Alice?", mode="graph", limit=5))
    assert "e5" in via_alice


def test_recent_mode_returns_the_newest_turns(memory: Memory) -> None:
    assert ids(memory.search("anything", mode="recent", limit=2)) == ["e5", "e4"]


def test_hybrid_fuses_paths_and_reports_them(memory: Memory) -> None:
    hits = memory.search("Biscuit the dog", mode="hybrid", limit=3)
    assert hits[0].id in {"e0", "e5"}
    assert {"vector", "keyword", "graph"} <= set(hits[0].paths)
    assert hits[0].anchor is not None


def test_access_counts_are_updated(memory: Memory) -> None:
    fact = memory.remember("Alice prefers green tea", kind="preference")
    memory.worker.drain(timeout=60)
    for _ in range(2):
        memory.search("green tea", mode="keyword")
    assert memory.store.get_facts([fact.id])[0].access_count == 2


def test_remember_and_kind_filter(memory: Memory) -> None:
    fact = memory.remember("Deploys happen with `make release` after tests pass", kind="procedural")
    memory.worker.drain(timeout=60)
    hits = memory.search("how do we release?", kinds=["procedural"])
    assert ids(hits) == [fact.id]
    assert "<relevant_procedures>" in memory.query_text("how do we release?")


def test_a_fact_stored_a_moment_ago_is_found_before_its_vector_is(memory: Memory) -> None:
    # The worker embeds after the reply; until then the vector path cannot score the fact,
    # and that must not count as the vector path's worst score.
    fact = memory.remember("I call every release Bluefinch", kind="preference")
    assert memory.embedder is not None
    assert memory.store.vector_search("fact", memory.embedder.embed(["Bluefinch"])[0], 5) == []
    assert ids(memory.search("Bluefinch codename", limit=3))[0] == fact.id
    memory.worker.drain(timeout=60)
    assert ids(memory.search("Bluefinch codename", limit=3))[0] == fact.id


def test_a_fresh_fact_is_found_among_more_turns_than_the_vector_path_returns(
    memory: Memory,
) -> None:
    # 50 more turns: the vector path returns its 40 best events and cuts the rest, yet it
    # scored every embedded fact, so the fact it lacks a vector for is still unscored.
    # (It ranks third, not first: one keyword hit's z-score is 1.0, below the vector
    # path's best turns here.  Counted as the vector path's worst, it was not in the top 5.)
    seed(memory, [event(100 + i, f"Release notes draft number {i}") for i in range(50)])
    memory.remember("Old preference: window seats", kind="preference")
    assert memory.worker.drain(timeout=60)
    fact = memory.remember("I call every release Bluefinch", kind="preference")
    assert fact.id in ids(memory.search("Bluefinch codename", limit=3))


def test_relink_brings_turns_stored_without_links_into_the_graph(memory: Memory) -> None:
    # A store from before topics were linked: the turn is stored, the graph never saw it.
    memory.store.add_events([event(40, "We finally signed up for a pottery class downtown.")])
    assert "e40" not in ids(memory.search("pottery", mode="graph"))
    seen: list[tuple[int, int]] = []
    assert memory.relink(progress=lambda done, total: seen.append((done, total))) == 7
    assert seen[-1] == (7, 7)
    assert ids(memory.search("pottery", mode="graph"))[0] == "e40"
    counts = memory.store.counts()
    assert memory.relink() == 7  # again: nothing doubles
    assert memory.store.counts() == counts
    assert ids(memory.search("Biscuit", mode="graph"))[:2] in (["e0", "e5"], ["e5", "e0"])


def test_relink_indexes_the_words_of_turns_and_facts_stored_before_again(
    memory: Memory,
) -> None:
    # A store from before keyword search stemmed family words and British spellings: its
    # keyword entries hold only what the older version read (simulated: fewer words).
    memory.store.add_events([event(41, "My kids finally got their favourite colour bikes.")])
    fact = memory.remember("Grandma's recipe uses two eggs", kind="semantic")
    memory.store.index_keywords([("e41", "event", "bikes")])
    memory.store.index_keywords([(fact.id, "fact", "recipe")])
    assert "e41" not in ids(memory.search("children favorite color", mode="keyword"))
    assert fact.id not in ids(memory.search("grandmother eggs", mode="keyword"))
    memory.relink()
    assert ids(memory.search("children favorite color", mode="keyword"))[0] == "e41"
    assert ids(memory.search("grandmother eggs", mode="keyword"))[0] == fact.id


def test_expand_returns_neighbouring_turns(memory: Memory) -> None:
    around = memory.expand("run_a:2:0", window=1)
    assert [e.id for e in around] == ["e1", "e2", "e3"]


def test_forget_removes_everywhere(memory: Memory) -> None:
    assert memory.forget(["e1"]) == 1
    assert memory.search("404", mode="keyword") == []
    assert "e1" not in ids(memory.search("staging server error", mode="semantic", limit=6))


def test_prefetch_is_keyword_only_and_small(memory: Memory) -> None:
    hits = memory.prefetch("is the report due 2024-05-01?")
    assert ids(hits)[:1] == ["e4"]
    assert len(hits) <= memory.settings.prefetch_limit


def test_prefetch_takes_one_memory_per_run(memory: Memory) -> None:
    """Both Biscuit turns are of run_a: the second would only repeat where the first came
    from, while the hint has room for two memories."""
    assert len(memory.search("Biscuit", mode="keyword")) == 2
    hits = memory.prefetch("Biscuit")
    assert [h.anchor.run_id for h in hits if h.anchor] == ["run_a"]
    assert len(hits) == 1


def test_everything_survives_a_restart(settings: Settings) -> None:
    first = Memory.open(settings, start_worker=False)
    first.record_message(
        Message("assistant", "I'll check", (ToolCall("c1", "grep", '{"pattern": "kiwi"}'),)),
        message_id=1,
        session_id="s",
        run_id="r",
        iteration=1,
    )
    first.record_message(
        Message("user", "my favourite fruit is kiwi"),
        message_id=2,
        session_id="s",
        run_id="r",
        iteration=2,
    )
    first.close()  # nothing processed yet: the jobs wait on disk
    second = Memory.open(settings, start_worker=False)
    assert second.worker.drain(timeout=120)
    assert second.stats()["events"] == 3
    assert ids(second.search("favourite fruit", mode="hybrid"))[0] == "ev_2_0"
    second.close()


def test_second_process_gets_a_clear_message(settings: Settings, tmp_path: Path) -> None:
    memory = Memory.open(settings, start_worker=False)
    try:
        script = textwrap.dedent(
            f"""
            from shiyi.config import load_settings
            from shiyi.memory.service import Memory
            s = load_settings(home={str(settings.data_dir)!r}, workspace={str(tmp_path)!r})
            s.memory.store = {settings.memory.store!r}
            s.memory.lock_timeout = 0.5
            Memory.open(s)
            """
        )
        result = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
        )
        assert result.returncode != 0
        assert f"in use by pid {os.getpid()}" in result.stderr
    finally:
        memory.close()


def test_kill_9_mid_batch_loses_nothing_and_duplicates_nothing(settings: Settings) -> None:
    total = 400
    script = textwrap.dedent(
        f"""
        import sys
        from shiyi.config import load_settings
        from shiyi.memory.models import EventRecord
        from shiyi.memory.service import Memory
        s = load_settings(home={str(settings.data_dir)!r}, workspace={str(settings.workspace)!r})
        s.memory.store = {settings.memory.store!r}
        m = Memory.open(s, start_worker=False)
        m.import_events([EventRecord(f"k{{i}}", "s", "r", 1.7e9 + i, "user",
                         f"note number {{i}} about topic {{i % 7}}", "imported", iteration=i)
                         for i in range({total})])
        print("queued", flush=True)
        while m.worker.run_once():
            print("batch", flush=True)
        """
    )
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "queued"
    assert child.stdout.readline().strip() == "batch"  # some work is done, more is running
    time.sleep(0.3)
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=30)

    memory = Memory.open(settings, start_worker=False)
    try:
        assert memory.worker.drain(timeout=300)
        counts = memory.stats()
        assert counts["events"] == total
        assert counts["embedded_events"] == total
        assert counts["keyword_docs"] == total
        assert memory.jobs.failed() == []
    finally:
        memory.close()


def test_model_change_is_refused_until_reindex_all(settings: Settings) -> None:
    memory = Memory.open(settings, start_worker=False)
    memory.import_events([event(i, text) for i, text in enumerate(CORPUS)])
    memory.worker.drain(timeout=120)
    memory.close()
    settings.memory.embed_model = "all-MiniLM-L6-v2-renamed"
    with pytest.raises(StorageError, match=r"shiyi memory reindex --all"):
        Memory.open(settings, start_worker=False)
    switched = Memory.open(settings, start_worker=False, switch_model=True)
    assert switched.stats()["embedded_events"] == 0
    assert switched.reindex() == len(CORPUS)
    assert ids(switched.search("puppy", mode="semantic", limit=1)) == ["e0"]
    switched.close()
    Memory.open(settings, start_worker=False).close()  # the new model is now the recorded one
