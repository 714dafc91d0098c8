"""``shiyi run``: one task, streamed, then exit."""

from __future__ import annotations

import asyncio
import signal
import sys

from shiyi.config import Settings
from shiyi.events import Event, event_to_json
from shiyi.interfaces.cli.render import EventPrinter


def run_once(settings: Settings, task: str, session: str | None, json_lines: bool) -> int:
    return asyncio.run(_run(settings, task, session, json_lines))


async def _run(settings: Settings, task: str, session: str | None, json_lines: bool) -> int:
    from shiyi.agent import Agent

    agent = Agent.from_settings(settings, session_id=session)
    printer = EventPrinter(sys.stdout, color=sys.stdout.isatty())
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGINT, agent.cancel)
    loop.add_signal_handler(signal.SIGTERM, agent.cancel)
    status = "failed"
    try:
        async for event in agent.send(task):
            _emit(event, printer, json_lines)
            if event.type == "run_end":
                status = event.status
    finally:
        loop.remove_signal_handler(signal.SIGINT)
        loop.remove_signal_handler(signal.SIGTERM)
        agent.close()
    if not json_lines:
        print(f"session {agent.session_id}", file=sys.stderr)
    return 0 if status == "completed" else 1


def _emit(event: Event, printer: EventPrinter, json_lines: bool) -> None:
    if json_lines:
        sys.stdout.write(event_to_json(event) + "\n")
        sys.stdout.flush()
    else:
        printer.handle(event)
