"""``shiyi run``: one task, streamed, then exit.

When another process (``shiyi serve`` or ``shiyi chat``) owns the data dir, the task runs in
that process through its API: same events, same output, Ctrl-C cancels the run there, and
that process's memory worker does the run's memory work.  Run here, the run's memory work
(embedding, extraction, consolidation, its archive) gets up to ``memory_wait`` seconds after
the reply (see :mod:`shiyi.interfaces.cli.memory_work`).
"""

from __future__ import annotations

import asyncio
import signal
import sys
import time
from contextlib import aclosing
from typing import TYPE_CHECKING

from shiyi.config import Settings
from shiyi.events import Event, event_to_json
from shiyi.interfaces.cli.render import EventPrinter

if TYPE_CHECKING:
    from shiyi.agent.agent import Agent
    from shiyi.app import App


def run_once(
    settings: Settings,
    task: str,
    session: str | None,
    json_lines: bool,
    memory_wait: float | None = None,
) -> int:
    """``memory_wait``: seconds for the run's memory work after the reply (default:
    ``memory.run_wait``)."""
    from shiyi.interfaces.cli.memory_work import emit, handed_off
    from shiyi.interfaces.cli.remote import find_owner, service_client
    from shiyi.llm.first_model import pick_main_model

    client = service_client(settings, quiet=json_lines)
    if client is not None:
        client.close()
        remote = _run_remote(client.base_url, client.token, task, session, json_lines)
        code = asyncio.run(remote)
        if settings.memory.enabled:
            emit(handed_off(find_owner(settings)), json_lines)
        return code
    wait = settings.memory.run_wait if memory_wait is None else memory_wait
    chosen = pick_main_model(settings)
    if chosen.note:
        print(chosen.note, file=sys.stderr, flush=True)
    return asyncio.run(_run(chosen.settings, task, session, json_lines, wait))


async def _run_remote(
    url: str, token: str | None, task: str, session: str | None, json_lines: bool
) -> int:
    from shiyi.client import AsyncClient

    printer = EventPrinter(sys.stdout, color=sys.stdout.isatty())
    loop = asyncio.get_running_loop()
    status = "failed"
    async with AsyncClient(url, token=token) as client:
        session_id = session or (await client.create_session()).id
        stream = client.send(session_id, task)
        current = asyncio.current_task()
        assert current is not None
        # Ctrl-C: stop reading; the service sees the disconnect and cancels the run.
        loop.add_signal_handler(signal.SIGINT, current.cancel)
        loop.add_signal_handler(signal.SIGTERM, current.cancel)
        try:
            async for event in stream:
                _emit(event, printer, json_lines)
                if event.type == "run_end":
                    status = event.status
        except asyncio.CancelledError:
            status = "cancelled"
            print("\ncancelled", file=sys.stderr)
        finally:
            loop.remove_signal_handler(signal.SIGINT)
            loop.remove_signal_handler(signal.SIGTERM)
            await stream.aclose()
    if not json_lines:
        print(f"session {session_id}", file=sys.stderr)
    return 0 if status == "completed" else 1


async def _run(
    settings: Settings, task: str, session: str | None, json_lines: bool, wait: float
) -> int:
    from shiyi.app import App

    app = App.open(settings)
    try:
        agent = app.agent(session)
    except BaseException:
        app.close()
        raise
    printer = EventPrinter(sys.stdout, color=sys.stdout.isatty())
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGINT, agent.cancel)
    loop.add_signal_handler(signal.SIGTERM, agent.cancel)
    status = "failed"
    started = time.time()
    try:
        # Closed here, before the app: a reader that went away (`| head`) ends the run now,
        # while its session log is still open to record that.
        async with aclosing(agent.send(task)) as events:
            async for event in events:
                _emit(event, printer, json_lines)
                if event.type == "run_end":
                    status = event.status
    except BaseException:
        _close(agent, app)
        raise
    loop.remove_signal_handler(signal.SIGINT)
    loop.remove_signal_handler(signal.SIGTERM)
    try:
        agent.close()  # queues the session's consolidation
        if app.memory is not None:
            await _finish_memory(app, agent.session_id, started, wait, status, json_lines)
    finally:
        app.close()
    if not json_lines:
        print(f"session {agent.session_id}", file=sys.stderr)
    return 0 if status == "completed" else 1


async def _finish_memory(
    app: App, session_id: str, started: float, wait: float, status: str, json_lines: bool
) -> None:
    """After the reply: the run's memory work, up to ``wait`` s (none for a cancelled run:
    its user wants out), then one line on what came of it."""
    from shiyi.interfaces.cli.memory_work import emit, finish_memory_work

    assert app.memory is not None
    timeout = 0.0 if status == "cancelled" else wait
    emit(await finish_memory_work(app.memory, session_id, started, timeout), json_lines)


def _close(agent: Agent, app: App) -> None:
    loop = asyncio.get_running_loop()
    loop.remove_signal_handler(signal.SIGINT)
    loop.remove_signal_handler(signal.SIGTERM)
    agent.close()
    app.close()


def _emit(event: Event, printer: EventPrinter, json_lines: bool) -> None:
    if json_lines:
        sys.stdout.write(event_to_json(event) + "\n")
        sys.stdout.flush()
    else:
        printer.handle(event)
