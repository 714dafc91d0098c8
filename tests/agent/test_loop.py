from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable

import pytest

from shiyi.app import App
from shiyi.config import Settings
from shiyi.errors import ModelError
from shiyi.events import RunEnd, ToolResultEvent, event_from_json, event_to_json
from shiyi.llm.scripted import ScriptedModel, call, reply
from shiyi.tools import tool
from shiyi.tools.base import ToolContext
from tests.conftest import AgentFactory, collect, types_of
from tests.support.requests import tool_text, user_words

starts: dict[str, float] = {}
ends: dict[str, float] = {}


@tool(read_only=True)
async def slow(label: str, seconds: float = 0.2) -> str:
    """Sleep, then echo the label.

    Args:
        label: Text to echo.
        seconds: How long to sleep.
    """
    starts[label] = time.perf_counter()
    await asyncio.sleep(seconds)
    ends[label] = time.perf_counter()
    return f"slept {label}"


@tool
def add(a: int, b: int) -> str:
    """Add two integers.

    Args:
        a: First number.
        b: Second number.
    """
    return str(a + b)


def run_end(events: list[object]) -> RunEnd:
    last = events[-1]
    assert isinstance(last, RunEnd)
    return last


async def test_multi_step_tool_use_feeds_results_back(make_agent: AgentFactory) -> None:
    agent, model = make_agent(
        [
            reply("Let me add.", call("add", a=2, b=3)),
            reply("", call("add", a=5, b=10)),
            reply("The total is 15."),
        ],
        tools=[add],
    )
    events = await collect(agent.send("add 2, 3 and 10"))
    assert types_of(events)[:3] == ["routed", "run_start", "response_start"]
    assert types_of(events)[-2:] == ["response_end", "run_end"]
    assert run_end(events).status == "completed"
    assert run_end(events).iterations == 3
    results = [e for e in events if isinstance(e, ToolResultEvent)]
    assert [r.summary for r in results] == ["5", "15"]
    # The second request carried the first tool result back to the model.
    second = model.requests[1].messages
    assert second[-1].role == "tool" and second[-1].content == "5"
    assert second[-2].tool_calls[0].name == "add"
    assert model.requests[0].tool_names == ["add"]
    text = "".join(e.text for e in events if e.type == "text_delta")
    assert text == "Let me add.The total is 15."


async def test_parallel_tool_calls_overlap_in_time(make_agent: AgentFactory) -> None:
    agent, _ = make_agent(
        [reply("", call("slow", label="a"), call("slow", label="b")), reply("done")],
        tools=[slow],
    )
    events = await collect(agent.send("two things"))
    assert run_end(events).status == "completed"
    # Each call started before the other finished: they ran concurrently.
    assert starts["a"] < ends["b"] and starts["b"] < ends["a"]


async def test_malformed_arguments_become_a_tool_error_the_model_sees(
    make_agent: AgentFactory,
) -> None:
    broken = '{"a": 2, "b": '
    agent, model = make_agent(
        [reply("", call("add", broken)), reply("", call("add", a=1, b=1)), reply("2")],
        tools=[add],
    )
    events = await collect(agent.send("add"))
    assert run_end(events).status == "completed"
    first = next(e for e in events if isinstance(e, ToolResultEvent))
    assert not first.ok
    seen = model.requests[1].messages
    assert "not valid JSON" in seen[-1].content
    assert broken not in seen[-1].content
    # The broken JSON is never sent back to the server in the assistant message either.
    assert seen[-2].tool_calls[0].arguments == "{}"
    # ...but the raw text is kept in the log.
    logged = [m.message for m in agent.log.messages(agent.session_id)]
    assert any(c.arguments == broken for m in logged for c in m.tool_calls)


async def test_schema_violation_is_reported_with_the_fix(make_agent: AgentFactory) -> None:
    agent, model = make_agent([reply("", call("add", a="x")), reply("ok")], tools=[add])
    await collect(agent.send("add"))
    error = model.requests[1].messages[-1].content
    assert "invalid arguments for add" in error
    assert "b: Field required" in error


async def test_max_iterations_stops_the_run(settings: Settings, make_agent: AgentFactory) -> None:
    settings.agent.max_iterations = 3
    model = ScriptedModel([reply("", call("add", a=i, b=i)) for i in range(10)])
    agent = make_agent.agent(model, [add])
    events = await collect(agent.send("loop forever"))
    end = run_end(events)
    assert end.status == "max_iterations"
    assert end.iterations == 3
    assert len(model.requests) == 3
    assert agent.log.get_run(end.run_id).status == "max_iterations"  # type: ignore[union-attr]


async def test_stuck_detection_nudges_once_then_stops(make_agent: AgentFactory) -> None:
    agent, model = make_agent([reply("", call("add", a=1, b=1))] * 6, tools=[add])
    events = await collect(agent.send("add"))
    end = run_end(events)
    assert end.status == "stuck"
    assert "add was called 4 times" in end.detail
    # The third identical call was answered with a nudge; the fourth was not run.
    third = model.requests[3].messages[-1].content
    assert third.startswith("2") and "Do not repeat it" in third
    assert len(model.requests) == 4
    results = [e for e in events if isinstance(e, ToolResultEvent)]
    assert len(results) == 3


async def test_cancellation_mid_tool_ends_run_and_keeps_session(
    make_agent: AgentFactory,
) -> None:
    agent, model = make_agent(
        [reply("working", call("slow", label="long", seconds=30)), reply("after")],
        tools=[slow],
    )
    events = []
    started = time.perf_counter()
    async for event in agent.send("do a long thing"):
        events.append(event)
        if event.type == "tool_call":
            asyncio.get_running_loop().call_later(0.1, agent.cancel)
    assert time.perf_counter() - started < 10
    end = run_end(events)
    assert end.status == "cancelled"
    assert agent.active_runs() == []
    # The session is intact: the call got a result, and the next message works.
    history = agent.history()
    assert history[-1].role == "tool" and "cancelled" in history[-1].content
    follow_up = await collect(agent.send("next"))
    assert run_end(follow_up).status == "completed"
    assert user_words(model.requests[-1].messages[-1]) == "next"


async def test_cancellation_mid_stream(make_agent: AgentFactory) -> None:
    from shiyi.llm.scripted import ScriptedReply

    agent, _ = make_agent([ScriptedReply(text="x" * 400, delay=0.01)])
    events = []
    async for event in agent.send("talk"):
        events.append(event)
        if len(events) == 5:
            agent.cancel()
    assert run_end(events).status == "cancelled"
    streamed = "".join(e.text for e in events if e.type == "text_delta")
    assert 0 < len(streamed) < 400
    assert agent.history()[-1].content == streamed


async def test_model_error_becomes_error_event_and_failed_run(make_agent: AgentFactory) -> None:
    agent, _ = make_agent([ModelError("endpoint answered 500", retryable=True), reply("ok")])
    events = await collect(agent.send("hi"))
    error = next(e for e in events if e.type == "error")
    assert error.retryable and "500" in error.message  # type: ignore[union-attr]
    assert run_end(events).status == "failed"
    again = await collect(agent.send("hi again"))
    assert run_end(again).status == "completed"


async def test_usage_limit_stops_the_run(settings: Settings, make_agent: AgentFactory) -> None:
    settings.agent.max_run_tokens = 50
    model = ScriptedModel([reply("x" * 400, call("add", a=1, b=2)), reply("never")])
    agent = make_agent.agent(model, [add])
    events = await collect(agent.send("hi"))
    assert run_end(events).status == "usage_limit"
    assert len(model.requests) == 1
    assert [e.type for e in events].count("usage") == 1


async def test_message_sent_during_a_run_joins_it(make_agent: AgentFactory) -> None:
    agent, model = make_agent(
        [reply("", call("slow", label="j", seconds=0.3)), reply("final")], tools=[slow]
    )
    events = []
    async for event in agent.send("first"):
        events.append(event)
        if event.type == "tool_call":
            ack = await collect(agent.send("also this"))
            assert types_of(ack) == ["routed", "user_message"]
            assert ack[0].decision == "join"  # type: ignore[union-attr]
    assert "user_message" in types_of(events)
    assert user_words(model.requests[1].messages[-1]) == "also this"


async def test_resume_after_restart_sees_the_whole_history(make_agent: AgentFactory) -> None:
    model = ScriptedModel([reply("", call("add", a=1, b=2)), reply("three")])
    agent = make_agent.agent(model, [add])
    await collect(agent.send("what is 1+2"))
    session_id = agent.session_id
    agent.log.close()

    # A new process: new log handle, new agent, same data directory.
    model2 = ScriptedModel([reply("yes")])
    revived = make_agent.agent(model2, [add], session_id=session_id)
    await collect(revived.send("and again?"))
    sent = model2.requests[0].messages
    assert [m.role for m in sent] == ["system", "user", "assistant", "tool", "assistant", "user"]
    assert sent[3].content == "3"


async def test_events_round_trip_through_json(make_agent: AgentFactory) -> None:
    agent, _ = make_agent([reply("", call("add", a=1, b=2)), reply("3")], tools=[add])
    events = await collect(agent.send("x"))
    for event in events:
        line = event_to_json(event)
        assert json.loads(line)["type"] == event.type
        assert event_from_json(line) == event


@pytest.mark.parametrize("repeats", [3])
async def test_unknown_tool_is_an_error_not_a_crash(make_agent: AgentFactory, repeats: int) -> None:
    agent, model = make_agent([reply("", call("nope", x=1)), reply("sorry")], tools=[add])
    events = await collect(agent.send("x"))
    assert run_end(events).status == "completed"
    assert "no tool named 'nope'" in model.requests[1].messages[-1].content


@tool(read_only=True)
def whereami(ctx: ToolContext) -> str:
    """Say which run this is and what the user said in it."""
    return f"{ctx.session_id}|{ctx.run_id}|{' / '.join(ctx.conversation)}"


async def test_tools_see_their_run_and_what_the_user_said(make_agent: AgentFactory) -> None:
    agent, model = make_agent([reply("", call("whereami")), reply("ok")], tools=[whereami])
    events = await collect(agent.send("find the UserStore"))
    start = next(e for e in events if e.type == "run_start")
    session, run, said = tool_text(model.requests[1].messages[-1]).split("|")
    assert (session, run) == (start.session_id, start.run_id)
    assert said == "find the UserStore"
    assert agent.tool_context.run_id is None  # the agent's shared context is left alone


async def test_an_empty_final_reply_fails_the_run_visibly(make_agent: AgentFactory) -> None:
    """A model that says nothing and calls nothing has not answered: the run fails with an
    error event instead of completing with no text (a local server did this)."""
    agent, _ = make_agent([reply("   ")])
    events = await collect(agent.send("Say hello."))
    [error] = [e for e in events if e.type == "error"]
    assert "returned an empty reply" in error.message  # type: ignore[union-attr]
    assert events[-1].type == "run_end" and events[-1].status == "failed"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("guided", "message", "expected"),
    [
        (True, "Read the file notes.txt", ["required", "none"]),
        (True, "What do you remember about me?", ["required", "none"]),
        (False, "Read the file notes.txt", ["auto", "auto"]),
        (False, "Say hello in one short sentence.", ["auto", "auto"]),
    ],
)
async def test_a_guided_small_model_looks_first_then_answers(
    make_agent: AgentFactory, guided: bool, message: str, expected: list[str]
) -> None:
    agent, model = make_agent(
        [reply("", call("add", a=1, b=2)), reply("It says 3.")],
        tools=[add],
        force_first_call=guided,
    )
    events = await collect(agent.send(message))
    assert run_end(events).status == "completed"
    assert [request.tool_choice for request in model.requests] == expected


async def test_a_guided_small_model_answers_a_greeting_in_words(
    make_agent: AgentFactory,
) -> None:
    agent, model = make_agent([reply("Hello!")], tools=[add], force_first_call=True)
    events = await collect(agent.send("Say hello in one short sentence."))
    assert run_end(events).status == "completed"
    assert [request.tool_choice for request in model.requests] == ["none"]


async def test_the_app_guides_only_the_compact_profile_unless_told(
    settings: Settings, open_app: Callable[..., App]
) -> None:
    settings.memory.enabled = False
    settings.tools.profile = "compact"
    assert open_app(settings).agent().force_first_call
    settings.tools.profile = "full"
    assert not open_app(settings).agent().force_first_call
    settings.tools.force_first_call = True
    assert open_app(settings).agent().force_first_call
