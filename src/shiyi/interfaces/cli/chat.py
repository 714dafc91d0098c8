"""``shiyi chat``: an interactive session with slash commands.

Ctrl-C cancels the run in progress and returns to the prompt; at the prompt it only
reminds how to leave.  Ctrl-D or ``/exit`` quits.

On a terminal each turn is drawn by the terminal UI (``tui.py``: live answer, tool lines,
plan progress, memory panel, token footer); ``--plain``, or stdout that is not a terminal,
prints the same events line by line instead.

The chat owns the data dir (the memory store) while it runs, and serves the HTTP API on
127.0.0.1 (``server.chat_port``; 0 picks a free port) so that ``shiyi memory search`` or
``shiyi run`` in another terminal work through it instead of failing on the store lock.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from shiyi.agent.history import INTERRUPTED_RESULT
from shiyi.app import App
from shiyi.config import Settings
from shiyi.errors import ShiyiError
from shiyi.interfaces.cli.render import EventPrinter

if TYPE_CHECKING:
    from shiyi.interfaces.cli.tui import TerminalUI
    from shiyi.interfaces.server.run import BackgroundServer

HELP = (  # fits an 80-column terminal
    "/new        start a new session     /sessions  list sessions\n"
    "/resume ID  continue a session      /help      this text\n"
    "/exit       quit (or Ctrl-D)        Ctrl-C     cancel the current run"
)
PROMPT = "you › "


def run_chat(settings: Settings, session: str | None, *, plain: bool = False) -> int:
    from shiyi.interfaces.cli.remote import find_owner
    from shiyi.llm.first_model import pick_main_model

    owner = find_owner(settings)
    if owner is not None:
        raise ShiyiError(
            f"pid {owner.pid} (`{owner.command or 'shiyi'}`) already owns {settings.data_dir} "
            f"and serves it at {owner.address}; a chat needs the store itself. Stop that "
            "process, or use `shiyi run` (it goes through the service), or set SHIYI_HOME "
            "to another data dir."
        )
    plain = plain or not sys.stdout.isatty()
    chosen = pick_main_model(settings)
    chat = ChatSession(chosen.settings, session, serve=True, plain=plain, model_note=chosen.note)
    return asyncio.run(chat.loop())


class ChatSession:
    def __init__(
        self,
        settings: Settings,
        session: str | None,
        read_line: Callable[[str], str] = input,
        *,
        serve: bool = False,
        plain: bool = True,
        model_note: str | None = None,
    ) -> None:
        """``model_note``: the line saying which model was picked when none is configured."""
        self.settings = settings
        self.model_note = model_note
        self.app = App.open(settings)
        try:
            self.agent = self.app.agent(session)
        except BaseException:
            self.app.close()
            raise
        self.api: BackgroundServer | None = None
        if serve and settings.server.chat_port is not None:
            self.api = self._serve(settings.server.chat_port)
        self.read_line = read_line
        self.color = sys.stdout.isatty()
        self.ui: TerminalUI | None = None
        if not plain:
            from shiyi.interfaces.cli.tui import TerminalUI

            self.ui = TerminalUI()
        self._running = False

    def _serve(self, port: int) -> BackgroundServer | None:
        from shiyi.interfaces.server.run import BackgroundServer

        try:
            return BackgroundServer.start(self.app, port=port)
        except ShiyiError as exc:  # the chat works without it; other commands then wait
            print(f"note: not serving the API ({exc})", file=sys.stderr)
            return None

    def say(self, text: str) -> None:
        print(text, flush=True)

    def banner(self) -> None:
        role = self.settings.model_role("main")
        self.say(
            f"shiyi · model {role.model} ({role.provider}) · workspace {self.settings.workspace}"
        )
        if self.model_note:
            self.say(self.model_note)
        elif role.provider == "local":
            self.say(
                "note: the built-in model is tiny (135M parameters) and only proves the pipeline;"
                " set `preset: deepseek` or `ollama` in shiyi.yaml for real work."
            )
        self.say(f"session {self.agent.session_id} · /help for commands")
        if self.api is not None:
            self.say(f"API on {self.api.address} (shiyi commands in other terminals use it)")

    async def loop(self) -> int:
        self.banner()
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGINT, self._on_interrupt)
        try:
            while True:
                try:
                    line = await asyncio.to_thread(self.read_line, PROMPT)
                except EOFError:
                    self.say("")
                    return 0
                line = line.strip()
                if not line:
                    continue
                if line.startswith("/"):
                    if not self.command(line):
                        return 0
                    continue
                await self.turn(line)
        finally:
            loop.remove_signal_handler(signal.SIGINT)
            if self.api is not None:
                self.api.stop()
            self.agent.close()
            self.app.close()

    def _on_interrupt(self) -> None:
        if self._running:
            self.agent.cancel()
        else:
            self.say("\n(Ctrl-D or /exit to quit)")

    async def turn(self, text: str) -> None:
        self._running = True
        try:
            if self.ui is not None:
                await self.ui.turn(self.agent.send(text), self._tool_result)
                return
            printer = EventPrinter(sys.stdout, color=self.color)
            async for event in self.agent.send(text):
                printer.handle(event)
        finally:
            self._running = False

    def _tool_result(self, call_id: str) -> str | None:
        """What tool call ``call_id`` returned, once the run has recorded it."""
        for message in reversed(self.agent.history()):
            if message.role == "tool" and message.tool_call_id == call_id:
                return None if message.content == INTERRUPTED_RESULT else message.content
        return None

    def command(self, line: str) -> bool:
        """Handle a slash command; False means quit."""
        name, _, arg = line.partition(" ")
        arg = arg.strip()
        try:
            if name in ("/exit", "/quit"):
                return False
            if name == "/new":
                self.say(f"new session {self.agent.new_session()}")
            elif name == "/sessions":
                self._list_sessions()
            elif name == "/resume":
                self._resume(arg)
            elif name == "/help":
                self.say(HELP)
            else:
                self.say(f"unknown command {name}; /help lists them")
        except ShiyiError as exc:
            self.say(f"error: {exc}")
        return True

    def _list_sessions(self) -> None:
        for info in self.agent.log.list_sessions(15):
            current = "*" if info.id == self.agent.session_id else " "
            self.say(f"{current} {info.id}  {info.message_count:>4} msgs  {info.title}")

    def _resume(self, session_id: str) -> None:
        if not session_id:
            self.say("usage: /resume ID (see /sessions)")
            return
        info = self.agent.resume(session_id)
        self.say(f"resumed {info.id} · {info.title} · {info.message_count} messages")
