from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

from shiyi.context.compression import apply_summaries, blocks_to_summarise
from shiyi.context.summaries import EXTRACTIVE, Summarizer, SummaryStore
from shiyi.errors import ModelError
from shiyi.llm.scripted import ScriptedModel, reply
from shiyi.llm.types import Message
from tests.context.test_compression import assert_pairs_intact, history


@pytest.fixture
def store(tmp_path: Path) -> SummaryStore:
    return SummaryStore(tmp_path / "cache" / "summaries.db")


def test_store_round_trip(store: SummaryStore, tmp_path: Path) -> None:
    store.put("k1", "summary one", "fast")
    assert store.get_many(["k1", "k2"]) == {"k1": "summary one"}
    store.close()
    assert SummaryStore(tmp_path / "cache" / "summaries.db").get_many(["k1"]) == {
        "k1": "summary one"
    }


async def test_summary_is_computed_once_and_reused(store: SummaryStore) -> None:
    messages = history(16)
    block = blocks_to_summarise(messages, 10, 5)[0]
    model = ScriptedModel([reply("[摘要] 用户询问了 file_0.py，决定保持不变。")])
    summarizer = Summarizer(model, store)

    assert await summarizer.summarize_blocks([block]) == 1
    assert await summarizer.summarize_blocks([block]) == 0
    assert len(model.requests) == 1

    request = model.requests[0]
    assert request.messages[0].role == "system"
    assert "file_0.py" in request.last.content
    cached = store.get_many([block.key])
    assert cached == {block.key: "用户询问了 file_0.py，决定保持不变。"}
    out = apply_summaries(messages, cached, 10, 5)
    assert "决定保持不变" in out[0].content
    assert_pairs_intact(out)


async def test_model_error_falls_back_to_extractive(
    store: SummaryStore, caplog: pytest.LogCaptureFixture
) -> None:
    blocks = blocks_to_summarise(history(40), 10, 5)
    assert len(blocks) >= 2
    model = ScriptedModel([ModelError("x")])
    with caplog.at_level(logging.WARNING):
        computed = await Summarizer(model, store).summarize_blocks(blocks)
    assert computed == len(blocks)
    assert len(model.requests) == 1  # a failing model is not asked again for each block
    assert "x" in caplog.text
    summaries = store.get_many(b.key for b in blocks)
    assert summaries[blocks[0].key].startswith("Asked: Question 0")


async def test_no_model_means_extractive(store: SummaryStore) -> None:
    blocks = blocks_to_summarise(history(20), 10, 5)
    assert await Summarizer(None, store).summarize_blocks(blocks) == len(blocks)
    assert len(store.get_many(b.key for b in blocks)) == len(blocks)
    assert EXTRACTIVE == "extractive"


async def test_digest_with_model_and_fallback(store: SummaryStore) -> None:
    messages = [Message("user", "We decided to use SQLite."), Message("assistant", "OK.")]
    model = ScriptedModel([reply("## Decisions\n- use SQLite"), ModelError("down")])
    summarizer = Summarizer(model, store)
    assert await summarizer.digest(messages) == "## Decisions\n- use SQLite"
    fallback = await summarizer.digest(messages)
    assert fallback == "## Decisions\n- We decided to use SQLite."


async def test_concurrent_background_runs_do_not_duplicate_work(store: SummaryStore) -> None:
    blocks = blocks_to_summarise(history(16), 10, 5)
    model = ScriptedModel([reply("one summary")], repeat_last=True)
    summarizer = Summarizer(model, store)
    results = await asyncio.gather(
        summarizer.summarize_blocks(blocks), summarizer.summarize_blocks(blocks)
    )
    assert sorted(results) == [0, len(blocks)]
    assert len(model.requests) == len(blocks)


async def test_broken_store_never_raises(tmp_path: Path) -> None:
    store = SummaryStore(tmp_path / "s.db")
    store.close()
    blocks = blocks_to_summarise(history(16), 10, 5)
    assert await Summarizer(None, store).summarize_blocks(blocks) == 0


def test_a_garbage_cache_file_is_moved_aside_and_replaced(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "summaries.sqlite3"
    garbage = b"\x13 not a database " * 1000
    path.write_bytes(garbage)
    with caplog.at_level(logging.WARNING):
        store = SummaryStore(path)
    store.put("k1", "fresh", "fast")
    assert store.get_many(["k1"]) == {"k1": "fresh"}
    store.close()
    moved = list(tmp_path.glob("summaries.sqlite3.corrupt-*"))
    assert len(moved) == 1 and moved[0].read_bytes() == garbage  # kept, never deleted
    assert str(path) in caplog.text and str(moved[0]) in caplog.text
