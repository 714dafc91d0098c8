"""Extraction through the configured ``fast`` model over real HTTP (a local fake server)."""

from __future__ import annotations

from pathlib import Path

from shiyi.app import open_memory
from shiyi.config import load_settings
from shiyi.memory.lifecycle.pipeline import EXTRACT
from tests.memory.lifecycle.conftest import user_event
from tests.support.fake_openai import FakeError, FakeOpenAIServer, FakeReply, FakeToolCall
from tests.support.records import seed


def test_extraction_uses_the_fast_model_endpoint(
    tmp_path: Path, fake_openai: FakeOpenAIServer
) -> None:
    settings = load_settings(cwd=tmp_path, workspace=tmp_path)
    settings.models["fast"] = fake_openai.model_settings()
    arguments = {"facts": [{"key": "home city", "value": "Kyoto", "confidence": 0.95}]}
    fake_openai.enqueue(
        FakeError(503, "overloaded"),  # retried inside the provider, invisible here
        FakeReply(tool_calls=[FakeToolCall("record_memories", arguments)]),
    )
    memory = open_memory(settings, start_worker=False)
    try:
        seed(memory, [user_event(1, "I live in Kyoto")], timeout=60)
        [hit] = [h for h in memory.search("which city is home", limit=5) if h.node == "fact"]
        assert hit.text == "home city: Kyoto"
        body = fake_openai.requests[-1]
        assert body["tool_choice"] == {"type": "function", "function": {"name": "record_memories"}}
        assert body["temperature"] == 0.0
        assert body["tools"][0]["function"]["name"] == "record_memories"
    finally:
        memory.close()


def test_the_tiny_local_model_is_not_used_and_jobs_wait(tmp_path: Path) -> None:
    settings = load_settings(cwd=tmp_path, workspace=tmp_path)
    memory = open_memory(settings, start_worker=False)
    try:
        assert not memory.lifecycle.model_ready()
        seed(memory, [user_event(1, "I live in Kyoto")], timeout=60)
        assert memory.jobs.pending_count([EXTRACT]) == 1
    finally:
        memory.close()
