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
