"""What a stream says beyond its chunks: nothing at all, only pings, no ``[DONE]``, no usage;
and the fallback to whole replies for servers that cannot stream tool calls.

The scripted server plays the wire behaviour of real ones (llama-cpp-python's empty stream
for a streamed tool turn, its role-only reply to an interrupted request); the real server
is driven in tests/llm/local/test_llama_server.py.
"""

from __future__ import annotations

import pytest

from shiyi.errors import ModelError
from shiyi.llm.types import Message, StreamChunk, ToolCall, ToolSpec, UsageChunk
from tests.llm.conftest import assemble, collect, drain_into, model_for
from tests.support.fake_openai import FakeOpenAIServer, FakeReply, FakeToolCall

READ = ToolSpec("read_file", "Read a file", {"type": "object", "properties": {}})


# --- replies that are not replies ------------------------------------------------------------


async def test_an_empty_stream_is_an_error_and_is_retried(srv: FakeOpenAIServer) -> None:
    srv.enqueue(FakeReply(empty=True), FakeReply("second try"))
    reply = assemble(await collect(model_for(srv)))
    assert reply.message().content == "second try"
    assert len(srv.requests) == 2


async def test_an_interrupted_reply_is_never_completed_empty(srv: FakeOpenAIServer) -> None:
    """llama-cpp-python answers a request another one interrupted with a role-only chunk and
    ``[DONE]``; that was reported as a completed, empty reply."""
    srv.enqueue(*[FakeReply(interrupted=True)] * 3)
    model = model_for(srv, max_retries=2)
    with pytest.raises(ModelError, match="without any text or tool call") as caught:
        await collect(model)
    assert caught.value.retryable
    assert "after 3 attempts" in str(caught.value)


async def test_a_stream_cut_off_without_finish_or_done_is_an_error(
    srv: FakeOpenAIServer,
) -> None:
    srv.enqueue(FakeReply("half a sent", finish=False, done=False))
    seen: list[StreamChunk] = []
    with pytest.raises(ModelError, match="broke off its reply mid-stream") as caught:
        await drain_into(seen, model_for(srv))
    assert "without a finish reason or [DONE]" in str(caught.value)
    assert assemble(seen).message().content == "half a sent"  # what the user saw stays
    assert len(srv.requests) == 1  # never replayed


async def test_a_missing_finish_reason_is_inferred_when_done_was_sent(
    srv: FakeOpenAIServer,
) -> None:
    srv.enqueue(FakeReply("fine", finish=False))
    assert assemble(await collect(model_for(srv))).finish_reason == "stop"


async def test_keep_alive_pings_alone_run_into_the_deadline(srv: FakeOpenAIServer) -> None:
    """Pings keep every read alive, so only a deadline on data stops the wait (one run was
    still going at 90 s with a 20 s timeout)."""
    srv.enqueue(FakeReply("never", pings=8, delay=0.1))
    model = model_for(srv, timeout=0.35, max_retries=0)
    with pytest.raises(ModelError, match=r"no data for 0\.35s \(\d keep-alive pings\)"):
        await collect(model)


async def test_pings_before_a_reply_within_the_deadline_are_fine(
    srv: FakeOpenAIServer,
) -> None:
    srv.enqueue(FakeReply("slow prompt, then text", pings=3, delay=0.05))
    reply = assemble(await collect(model_for(srv, timeout=1.0)))
    assert reply.message().content == "slow prompt, then text"


# --- usage ---------------------------------------------------------------------------------


async def test_usage_is_estimated_and_marked_when_the_server_sends_none(
    srv: FakeOpenAIServer,
) -> None:
    srv.enqueue(FakeReply("A reply of several words.", usage=None))
    prompt = [Message("system", "You are terse. " * 20), Message("user", "hi")]
    [usage] = [c.usage for c in await collect(model_for(srv), prompt) if isinstance(c, UsageChunk)]
    assert usage.estimated
    assert 40 <= usage.prompt_tokens <= 140
    assert 3 <= usage.completion_tokens <= 12


async def test_reported_usage_is_not_marked_estimated(srv: FakeOpenAIServer) -> None:
    srv.enqueue(FakeReply("ok", usage=(31, 2)))
    [usage] = [c.usage for c in await collect(model_for(srv)) if isinstance(c, UsageChunk)]
    assert (usage.prompt_tokens, usage.completion_tokens, usage.estimated) == (31, 2, False)


# --- servers that cannot stream tool calls -------------------------------------------------


async def test_tool_turns_fall_back_to_whole_replies_once_and_remember(
    srv: FakeOpenAIServer, caplog: pytest.LogCaptureFixture
) -> None:
    call = FakeToolCall("read_file", {"path": "notes.txt"}, id="call_1")
    srv.enqueue(
        FakeReply(empty=True),  # llama-cpp-python asked to stream with tools
        FakeReply(tool_calls=[call]),
        FakeReply("done"),
        FakeReply("plain streamed answer"),
    )
    model = model_for(srv, max_retries=0)  # the fallback is not a retry
    first = assemble(await collect(model, tools=[READ]))
    assert first.tool_calls() == (ToolCall("call_1", "read_file", '{"path": "notes.txt"}'),)
    assert first.finish_reason == "tool_calls"
    second = assemble(await collect(model, tools=[READ]))
    assert second.message().content == "done"
    third = assemble(await collect(model))
    assert third.message().content == "plain streamed answer"
    streamed = [body.get("stream", False) for body in srv.requests]
    assert streamed == [True, False, False, True]  # tools: whole replies; no tools: streams
    assert "cannot stream replies that may call tools" in caplog.text


async def test_stream_tools_false_never_streams_tool_turns(srv: FakeOpenAIServer) -> None:
    srv.enqueue(FakeReply("whole", usage=None))
    chunks = await collect(model_for(srv, stream_tools=False), tools=[READ])
    assert assemble(chunks).message().content == "whole"
    assert srv.requests[0].get("stream") in (None, False)
    assert any(isinstance(c, UsageChunk) and c.usage.estimated for c in chunks)


async def test_stream_tools_true_reports_the_empty_stream_instead(
    srv: FakeOpenAIServer,
) -> None:
    srv.enqueue(FakeReply(empty=True))
    with pytest.raises(ModelError, match="without any text or tool call"):
        await collect(model_for(srv, stream_tools=True, max_retries=0), tools=[READ])


# --- servers that never finish, or say nothing at all -----------------------------------------


async def test_a_trickling_reply_ends_at_the_request_deadline(srv: FakeOpenAIServer) -> None:
    """Issue 29: a server sending a token every second kept each read within ``timeout``
    and the stream never idle, so a reply ran on for minutes."""
    srv.enqueue(FakeReply("x" * 400, chunk_size=1, delay=0.05))
    seen: list[StreamChunk] = []
    with pytest.raises(ModelError, match=r"did not finish its reply within 1s") as caught:
        await drain_into(seen, model_for(srv, timeout=5.0, deadline=1.0))
    assert "models.<role>.deadline" in str(caught.value) and not caught.value.retryable
    said = assemble(seen).message().content
    assert said and said != "x" * 400  # what arrived is kept, the rest never came
    assert len(srv.requests) == 1  # not replayed


def test_the_deadline_defaults_to_five_timeouts() -> None:
    from shiyi.config.settings import ModelSettings

    assert ModelSettings(timeout=10).request_deadline == 50
    assert ModelSettings(timeout=10, deadline=7).request_deadline == 7


async def test_an_empty_whole_reply_is_a_provider_error(srv: FakeOpenAIServer) -> None:
    """Issue 29: a server closing every request with no data; the fallback to a whole reply
    got the SDK's raw text ("") and failed with "'str' object has no attribute 'usage'"."""
    srv.enqueue(*[FakeReply(empty=True)] * 4)
    with pytest.raises(ModelError) as caught:
        await collect(model_for(srv, max_retries=2), tools=[READ])
    message = str(caught.value)
    assert f"model endpoint {srv.base_url} sent no reply after 3 attempts" in message
    assert "empty body instead of a chat completion" in message
    assert [body.get("stream", False) for body in srv.requests] == [True, False, False, False]
