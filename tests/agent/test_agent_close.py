"""Closing the app while a consumer has stopped reading a run: the run ends while the log is
still open, and nothing runs (or fails) after the close."""

from __future__ import annotations

import asyncio
import gc
from typing import Any

from shiyi.app import App
from shiyi.config import Settings
from shiyi.llm.scripted import ScriptedModel, reply
from shiyi.sessions.log import SessionLog
from tests.conftest import AgentFactory, AppOpener, collect


async def _break_then_close(settings: Settings) -> tuple[str, list[dict[str, Any]]]:
    problems: list[dict[str, Any]] = []
    asyncio.get_running_loop().set_exception_handler(lambda _loop, ctx: problems.append(ctx))
    app = App.open(settings, model=ScriptedModel([reply("word " * 200)]))
    agent = app.agent()
    async for event in agent.send("say many words"):
        if event.type == "text_delta":
            break  # like `| head -5`: the consumer stops reading mid-reply
    app.close()
    gc.collect()  # the abandoned generator's finaliser runs now, not at some later point
    for _ in range(5):
        await asyncio.sleep(0)
    return agent.session_id, problems


def test_a_consumer_that_stops_reading_then_closes_leaves_no_failing_task(
    settings: Settings,
) -> None:
    problems: list[dict[str, Any]] = []

    def run() -> str:
        loop = asyncio.new_event_loop()
        try:
            session, found = loop.run_until_complete(_break_then_close(settings))
            problems.extend(found)
            loop.run_until_complete(loop.shutdown_asyncgens())
            gc.collect()
            return session
        finally:
            loop.close()

    session = run()
    gc.collect()
    assert [str(p.get("exception") or p.get("message")) for p in problems] == []
    log = SessionLog(settings.sessions_db)
    try:
        [run_row] = log.runs(session)
        assert run_row.status == "cancelled"
    finally:
        log.close()


async def test_an_agent_closes_nothing_it_was_handed(make_agent: AgentFactory) -> None:
    """Whoever opened the session log and the summary cache closes them: a second agent on
    the same parts goes on working after the first one closed."""
    first, _ = make_agent([reply("one")])
    await collect(first.send("hello"))
    second = make_agent.agent(
        ScriptedModel([reply("two")]),
        session_log=first.log,
        summaries=first.builder.summaries,
        session_id=first.session_id,
    )
    first.close()
    events = await collect(second.send("again"))
    assert events[-1].status == "completed"  # type: ignore[union-attr]
    assert [m.content for m in second.history() if m.role == "assistant"] == ["one", "two"]


async def test_the_app_hands_each_agent_the_plan_its_plan_tools_act_on(
    settings: Settings, open_app: AppOpener
) -> None:
    settings.memory.enabled = False
    app = open_app(settings)
    agent, other = app.agent(), app.agent()
    create = agent.tools.get("create_plan")
    assert create is not None
    step = {"title": "look", "description": "", "expected_tools": []}
    arguments = create.validate({"goal": "g", "steps": [step, step]})
    _ = agent.context, other.context  # the sessions are open, as during a run
    await create.invoke(arguments, agent.tool_context)
    assert agent.context.plan.goal == "g"
    assert other.context.plan.goal == ""
