"""Background model work gives way to conversations on the same endpoint, and no endpoint
gets more requests at once than it has slots (over real HTTP, against the scripted server)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from shiyi.app import open_memory
from shiyi.config import Settings
from shiyi.errors import EndpointBusy
from shiyi.llm.gate import conversation, default_limit, gate_for
from shiyi.llm.openai.model import OpenAICompatModel
from shiyi.llm.types import Message, StreamChunk, TextChunk
from shiyi.memory.lifecycle import extraction
from shiyi.memory.lifecycle.pipeline import EXTRACT
from tests.memory.lifecycle.conftest import user_event
from tests.support.fake_openai import FakeOpenAIServer, FakeReply, FakeToolCall

HI = [Message("user", "hi")]


def model(
    srv: FakeOpenAIServer, *, background: bool = False, **overrides: Any
) -> OpenAICompatModel:
    return OpenAICompatModel(srv.model_settings(**overrides), background=background)


async def text_of(chat: OpenAICompatModel) -> str:
    return "".join([c.text async for c in chat.stream(HI) if isinstance(c, TextChunk)])


def test_local_and_unknown_servers_get_one_slot_hosted_apis_more() -> None:
    assert default_limit("http://127.0.0.1:8080/v1") == 1
    assert default_limit("http://gpu-box.lan:8000/v1") == 1
    assert default_limit("https://api.deepseek.com/v1") == 8


async def test_background_work_waits_for_the_run_to_end(srv: FakeOpenAIServer) -> None:
    main, fast = model(srv), model(srv, background=True)
    srv.enqueue(FakeReply("the reply"), FakeReply("a summary"))
    with conversation(main):
        assert await text_of(main) == "the reply"
        with pytest.raises(EndpointBusy, match="serving a conversation"):
            await text_of(fast)  # between the run's model calls, too
        assert len(srv.requests) == 1  # refused before sending anything
    assert await text_of(fast) == "a summary"


async def test_a_background_stream_stops_when_a_run_needs_the_slot(
    srv: FakeOpenAIServer,
) -> None:
    main, fast = model(srv), model(srv, background=True)
    srv.enqueue(FakeReply("slow background words " * 10, delay=0.05), FakeReply("reply"))
    seen: list[StreamChunk] = []
    streaming = asyncio.Event()

    async def background() -> None:
        async for chunk in fast.stream(HI):
            seen.append(chunk)
            streaming.set()

    task = asyncio.create_task(background())
    await asyncio.wait_for(streaming.wait(), 10)
    with conversation(main):
        with pytest.raises(EndpointBusy, match="give its slot to a conversation"):
            await task
        assert await text_of(main) == "reply"
    assert gate_for(main.endpoint).in_flight == 0


async def test_conversation_requests_share_the_slots_one_at_a_time(
    srv: FakeOpenAIServer,
) -> None:
    first, second = model(srv), model(srv)
    srv.enqueue(FakeReply("one " * 8, delay=0.03), FakeReply("two"))
    overlap: list[int] = []

    async def watch() -> None:
        while True:
            overlap.append(gate_for(first.endpoint).in_flight)
            await asyncio.sleep(0.005)

    watcher = asyncio.create_task(watch())
    texts = await asyncio.gather(text_of(first), text_of(second))
    watcher.cancel()
    assert sorted(texts) == sorted(["one " * 8, "two"])
    assert max(overlap) == 1  # a one-slot server never had two requests at once


async def test_with_more_slots_background_work_runs_beside_a_run(srv: FakeOpenAIServer) -> None:
    main, fast = model(srv, max_concurrency=2), model(srv, background=True, max_concurrency=2)
    srv.enqueue(FakeReply("side work"))
    with conversation(main):
        assert await text_of(fast) == "side work"


def test_extraction_is_deferred_until_the_run_ends(
    settings: Settings, srv: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reply's model and extraction on one local server: extraction starts after the
    run, never during it (llama-cpp-python interrupted the reply for it)."""
    monkeypatch.setattr(extraction, "BUSY_RETRY", 0.3)
    main, fast = model(srv), model(srv, background=True)
    facts = {"facts": [{"key": "home city", "value": "Kyoto", "confidence": 0.95}]}
    srv.enqueue(FakeReply(tool_calls=[FakeToolCall("record_memories", facts)]))
    memory = open_memory(settings, fast=fast, start_worker=False)
    try:
        with conversation(main):
            memory.import_events([user_event(1, "I live in Kyoto")])
            memory.worker.drain(timeout=60)
            assert memory.jobs.pending_count([EXTRACT]) == 1  # waiting, not failed
            assert memory.jobs.failed() == []
            assert srv.requests == []
        time.sleep(0.35)
        assert memory.worker.drain(timeout=60)
        assert memory.jobs.pending_count([EXTRACT]) == 0
        assert len(srv.requests) == 1
        found = [h.text for h in memory.search("home city", limit=3) if h.node == "fact"]
        assert found == ["home city: Kyoto"]
    finally:
        memory.close()
