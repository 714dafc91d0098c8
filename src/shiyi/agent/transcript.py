"""A session's messages in memory, written through to the session log."""

from __future__ import annotations

from collections.abc import Callable

from shiyi.agent.history import repair, sanitize_arguments
from shiyi.llm.types import Message
from shiyi.sessions.log import SessionLog

# (message, session-log row id, run id, iteration): lets memory queue what was said.
AppendHook = Callable[[Message, int, str, int], None]


class Transcript:
    """Loaded once per session; every append goes to SQLite first, then to the list.

    Keeping the list in memory makes each iteration's history cost the window's size
    instead of re-reading the whole session from disk.
    """

    def __init__(
        self, log: SessionLog, session_id: str, on_append: AppendHook | None = None
    ) -> None:
        self._log = log
        self.session_id = session_id
        self._on_append = on_append
        self._messages = [sanitize_arguments(e.message) for e in log.messages(session_id)]

    def append(self, message: Message, *, run_id: str | None = None, iteration: int = 0) -> None:
        row = self._log.append(self.session_id, message, run_id=run_id, iteration=iteration)
        self._messages.append(sanitize_arguments(message))
        if self._on_append is not None and run_id is not None:
            self._on_append(message, row, run_id, iteration)

    def all(self) -> list[Message]:
        return repair(self._messages)

    def __len__(self) -> int:
        return len(self._messages)
