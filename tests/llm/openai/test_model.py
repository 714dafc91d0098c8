"""OpenAICompatModel against a scripted OpenAI-compatible server over real HTTP."""

from __future__ import annotations

import json
import socket
import subprocess
import sys

import pytest

from shiyi.config.settings import ModelPrice
from shiyi.errors import ContextTooLong, ModelError, ModelUnavailable
from shiyi.llm.openai.model import OpenAICompatModel
from shiyi.llm.protocol import ChatModel
from shiyi.llm.types import (
    FinishChunk,
    Message,
    ReasoningChunk,
    StreamChunk,
    TextChunk,
    ToolCall,
    ToolCallDelta,
    ToolChoice,
    ToolSpec,
    UsageChunk,
)
from tests.llm.conftest import HI, Sleeps, assemble, collect, drain_into, model_for
from tests.support.fake_openai import (
    FakeError,
    FakeOpenAIServer,
    FakeReply,
    FakeToolCall,
)

READ = ToolSpec("read_file", "Read a file", {"type": "object", "properties": {}})


# --- streaming ----------------------------------------------------------------------------


async def test_text_arrives_in_the_chunks_the_server_sent(srv: FakeOpenAIServer) -> None:
    srv.enqueue(FakeReply(["Hel", "lo", " world"]))
    model = model_for(srv)

    chunks = await collect(model)

    assert [c.text for c in chunks if isinstance(c, TextChunk)] == ["Hel", "lo", " world"]
    assert chunks[-1] == FinishChunk("stop")
    body = srv.requests[0]
    assert body["model"] == "fake-model"
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["messages"] == [{"role": "user", "content": "hi"}]
    assert "tools" not in body and "tool_choice" not in body
    assert srv.recorded[0].headers["authorization"] == "Bearer sk-fake"


def test_it_is_a_chat_model(srv: FakeOpenAIServer) -> None:
    model = model_for(srv, model="deepseek-chat")
    assert isinstance(model, ChatModel)
    assert model.model_name == "deepseek-chat"


async def test_tool_call_arguments_split_across_chunks_are_assembled(
    srv: FakeOpenAIServer,
) -> None:
    calls = [
        FakeToolCall("read_file", {"path": "notes/a.txt", "limit": 40}, id="call_a", pieces=4),
        FakeToolCall("read_file", {"path": "b.md"}, id="call_b", pieces=3),
    ]
    srv.enqueue(FakeReply("Reading both.", tool_calls=calls))

    chunks = await collect(model_for(srv), tools=[READ])

    deltas = [c for c in chunks if isinstance(c, ToolCallDelta) and c.arguments]
    assert len([d for d in deltas if d.index == 0]) == 4  # really split on the wire
    reply = assemble(chunks)
    assert reply.finish_reason == "tool_calls"
    assert reply.tool_calls() == (
        ToolCall("call_a", "read_file", '{"path": "notes/a.txt", "limit": 40}'),
        ToolCall("call_b", "read_file", '{"path": "b.md"}'),
    )
    assert json.loads(reply.tool_calls()[0].arguments) == {"path": "notes/a.txt", "limit": 40}
    assert srv.requests[0]["tools"] == [READ.to_openai()]


async def test_reasoning_is_surfaced_and_passed_back_on_deepseek_tool_turns(
    srv: FakeOpenAIServer,
) -> None:
    call = FakeToolCall("read_file", {"path": "a"}, id="call_1")
    srv.enqueue(FakeReply("", reasoning="I should read a.", tool_calls=[call]), FakeReply("done"))
    model = model_for(srv, model="deepseek-reasoner")
    earlier = Message("assistant", "Hello.", reasoning="Greet them.")

    chunks = await collect(model, [Message("user", "hi"), earlier], tools=[READ])
    reasoning = [c.text for c in chunks if isinstance(c, ReasoningChunk)]
    assert "".join(reasoning) == "I should read a." and len(reasoning) > 1
    turn = assemble(chunks).message()
    history = [Message("user", "hi"), earlier, turn, Message("tool", "A!", tool_call_id="call_1")]
    await collect(model, history, tools=[READ])

    sent = srv.requests[1]["messages"]
    assert sent[2]["reasoning_content"] == "I should read a."
    assert sent[2]["tool_calls"][0]["id"] == "call_1"
    assert "reasoning_content" not in sent[1]  # DeepSeek rejects it on plain turns
    assert all("reasoning_content" not in m for m in srv.requests[0]["messages"])


@pytest.mark.parametrize(
    ("model_name", "setting", "on_tool_turn", "on_plain_turn"),
    [
        ("gpt-4o", None, False, False),
        ("deepseek-chat", None, True, False),
        ("qwen3", True, True, True),
        ("deepseek-reasoner", False, False, False),
    ],
)
async def test_pass_reasoning_back_rule(
    srv: FakeOpenAIServer,
    model_name: str,
    setting: bool | None,
    on_tool_turn: bool,
    on_plain_turn: bool,
) -> None:
    srv.enqueue(FakeReply("ok"))
    tool_turn = Message("assistant", "", (ToolCall("c1", "read_file", "{}"),), reasoning="R1")
    history = [
        Message("user", "hi"),
        Message("assistant", "hey", reasoning="R0"),
        Message("user", "read"),
        tool_turn,
        Message("tool", "x", tool_call_id="c1"),
    ]
    model = model_for(srv, model=model_name, pass_reasoning_back=setting)

    await collect(model, history)

    sent = srv.requests[0]["messages"]
    assert ("reasoning_content" in sent[3]) is on_tool_turn
    assert ("reasoning_content" in sent[1]) is on_plain_turn


async def test_usage_chunk_carries_the_cost(srv: FakeOpenAIServer) -> None:
    srv.enqueue(FakeReply("ok", usage=(1000, 500)), FakeReply("ok", usage=(1000, 500)))
    prices = {"fake": ModelPrice(input=1.0, output=2.0)}  # prefix of "fake-model"
    priced = OpenAICompatModel(srv.model_settings(), prices, sleep=Sleeps())
    unpriced = OpenAICompatModel(srv.model_settings(), sleep=Sleeps())

    usage = [c.usage for c in await collect(priced) if isinstance(c, UsageChunk)]
    unknown = [c.usage for c in await collect(unpriced) if isinstance(c, UsageChunk)]

    assert len(usage) == 1
    assert (usage[0].prompt_tokens, usage[0].completion_tokens) == (1000, 500)
    assert usage[0].cost == pytest.approx((1000 * 1.0 + 500 * 2.0) / 1e6)
    assert unknown[0].cost is None


@pytest.mark.parametrize(
    ("choice", "expected"),
    [
        ("auto", "auto"),
        ("none", "none"),
        ("required", "required"),
        ("read_file", {"type": "function", "function": {"name": "read_file"}}),
    ],
)
async def test_tool_choice_mapping(
    srv: FakeOpenAIServer, choice: ToolChoice, expected: object
) -> None:
    srv.enqueue(FakeReply("ok"))
    await collect(model_for(srv), tools=[READ], tool_choice=choice)
    assert srv.requests[0]["tool_choice"] == expected


async def test_sampling_options_come_from_arguments_then_settings(srv: FakeOpenAIServer) -> None:
    srv.enqueue(FakeReply("a"), FakeReply("b"), FakeReply("c"))
    await collect(model_for(srv))
    configured = model_for(srv, temperature=0.3, max_tokens=64)
    await collect(configured)
    await collect(configured, temperature=0.9, max_tokens=8)

    plain, from_settings, from_args = srv.requests
    assert "temperature" not in plain and "max_tokens" not in plain
    assert (from_settings["temperature"], from_settings["max_tokens"]) == (0.3, 64)
    assert (from_args["temperature"], from_args["max_tokens"]) == (0.9, 8)


async def test_a_missing_key_is_sent_as_a_placeholder(srv: FakeOpenAIServer) -> None:
    srv.enqueue(FakeReply("ok"))
    await collect(model_for(srv, api_key=None))
    assert srv.recorded[0].headers["authorization"] == "Bearer not-needed"


async def test_stopping_early_releases_the_connection(srv: FakeOpenAIServer) -> None:
    srv.enqueue(FakeReply("a long reply that nobody reads", chunk_size=2), FakeReply("next"))
    model = model_for(srv)
    stream = model.stream(HI)
    async for chunk in stream:
        if isinstance(chunk, TextChunk):
            break
    await stream.aclose()  # type: ignore[attr-defined]

    assert assemble(await collect(model)).message().content == "next"
    assert len(srv.requests) == 2


# --- retries and errors -------------------------------------------------------------------


async def test_rate_limit_waits_for_retry_after_then_succeeds(srv: FakeOpenAIServer) -> None:
    srv.enqueue(FakeError(429, "slow down", retry_after="3"), FakeReply("made it"))
    sleeps = Sleeps()

    chunks = await collect(model_for(srv, sleeps, retry_max_delay=1.0))

    assert assemble(chunks).message().content == "made it"
    assert len(srv.requests) == 2
    assert sleeps.delays == [3.0]  # Retry-After beats the 1s max backoff


async def test_retry_after_ms_is_honoured(srv: FakeOpenAIServer) -> None:
    srv.enqueue(FakeError(503, headers={"retry-after-ms": "250"}), FakeReply("ok"))
    sleeps = Sleeps()
    await collect(model_for(srv, sleeps))
    assert sleeps.delays == [0.25]


async def test_server_errors_exhaust_the_retries(srv: FakeOpenAIServer) -> None:
    srv.enqueue(*[FakeError(500, "upstream exploded") for _ in range(4)])
    sleeps = Sleeps()
    model = model_for(srv, sleeps, max_retries=2, retry_base_delay=1.0, retry_max_delay=30.0)

    with pytest.raises(ModelError) as caught:
        await collect(model)

    error = caught.value
    assert error.retryable and error.status == 500
    assert str(error) == (
        f"model endpoint {srv.base_url} answered 500 Internal Server Error after 3 attempts: "
        "upstream exploded"
    )
    assert len(srv.requests) == 3 and srv.remaining == 1
    assert len(sleeps.delays) == 2
    assert 0.0 <= sleeps.delays[0] <= 1.0 and 0.0 <= sleeps.delays[1] <= 2.0


@pytest.mark.parametrize("status", [401, 403])
async def test_auth_failures_name_the_key_setting(srv: FakeOpenAIServer, status: int) -> None:
    srv.enqueue(FakeError(status, "Incorrect API key provided", "authentication_error"))
    settings = srv.model_settings(api_key_env="DEEPSEEK_API_KEY")
    model = OpenAICompatModel(settings, sleep=Sleeps(), role="main")

    with pytest.raises(ModelUnavailable) as caught:
        await collect(model)

    message = str(caught.value)
    assert "Incorrect API key provided" in message
    assert "models.main.api_key" in message and "DEEPSEEK_API_KEY" in message
    assert caught.value.status == status and not caught.value.retryable
    assert len(srv.requests) == 1


@pytest.mark.parametrize("status", [400, 404, 422])
async def test_client_errors_are_not_retried(srv: FakeOpenAIServer, status: int) -> None:
    srv.enqueue(FakeError(status, "messages[1].role is invalid", "invalid_request_error"))

    with pytest.raises(ModelError) as caught:
        await collect(model_for(srv))

    assert type(caught.value) is ModelError
    assert "messages[1].role is invalid" in str(caught.value)
    assert str(status) in str(caught.value)
    assert caught.value.status == status and not caught.value.retryable
    assert len(srv.requests) == 1


@pytest.mark.parametrize(
    "said",
    [
        "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens",
        "the request exceeds the available context size, try increasing it",
    ],
)
async def test_a_prompt_over_the_context_is_context_too_long(
    srv: FakeOpenAIServer, said: str
) -> None:
    srv.enqueue(FakeError(400, said, "invalid_request_error"))
    with pytest.raises(ContextTooLong) as caught:
        await collect(model_for(srv))
    assert said in str(caught.value) and "shorter message" in str(caught.value)
    assert caught.value.status == 400 and not caught.value.retryable
    assert len(srv.requests) == 1


async def test_a_broken_stream_is_not_replayed(srv: FakeOpenAIServer) -> None:
    srv.enqueue(FakeReply("abcdefgh", chunk_size=2, break_after=3), FakeReply("DUPLICATE"))
    seen: list[StreamChunk] = []

    with pytest.raises(ModelError, match="mid-stream") as caught:
        await drain_into(seen, model_for(srv))

    assert caught.value.retryable
    assert [c.text for c in seen if isinstance(c, TextChunk)] == ["ab", "cd"]
    assert len(srv.requests) == 1 and srv.remaining == 1


async def test_a_stream_broken_before_any_output_is_retried(srv: FakeOpenAIServer) -> None:
    # The first event only carries the role, so nothing reached the caller yet.
    srv.enqueue(FakeReply("lost", break_after=1), FakeReply("second try"))
    chunks = await collect(model_for(srv))
    assert assemble(chunks).message().content == "second try"
    assert len(srv.requests) == 2


async def test_an_unreachable_endpoint_is_a_retryable_model_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with FakeOpenAIServer() as srv:
        settings = srv.model_settings(base_url=f"http://127.0.0.1:{port}/v1", max_retries=1)
    sleeps = Sleeps()

    with pytest.raises(ModelError, match="could not be reached after 2 attempts") as caught:
        await collect(OpenAICompatModel(settings, sleep=sleeps))

    assert caught.value.retryable and len(sleeps.delays) == 1


async def test_a_silent_server_times_out(srv: FakeOpenAIServer) -> None:
    srv.enqueue(FakeReply("late", delay=1.0))
    model = model_for(srv, timeout=0.2, max_retries=0)

    with pytest.raises(ModelError, match=r"did not answer within 0.2s after 1 attempt$") as caught:
        await collect(model)

    assert caught.value.retryable


def test_importing_the_module_does_not_import_openai() -> None:
    code = "import sys, shiyi.llm.openai.model; print('openai' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
