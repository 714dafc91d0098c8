"""A session's messages in memory, written through to the session log and to memory."""

from __future__ import annotations

import logging
from typing import Protocol

from shiyi.agent.history import repair, sanitize_arguments
from shiyi.llm.types import Message
from shiyi.sessions.log import SessionLog

log = logging.getLogger(__name__)


class MessageSink(Protocol):
    """Where a run's messages go after the log (the memory: it only queues them)."""

    def record_message(
        self,
        message: Message,
        *,
        message_id: int,
        session_id: str,
        run_id: str,
        iteration: int,
        log_epoch: str = "",
    ) -> None: ...


class Transcript:
    """Loaded once per session; every append goes to SQLite first, then to the list, then
    (for a run's messages) to ``memory``.

    Keeping the list in memory makes each iteration's history cost the window's size
    instead of re-reading the whole session from disk.
    """

    def __init__(self, log: SessionLog, session_id: str, memory: MessageSink | None = None) -> None:
        self._log = log
        self.session_id = session_id
        self._memory = memory
        self._messages = [sanitize_arguments(e.message) for e in log.messages(session_id)]

    def append(self, message: Message, *, run_id: str | None = None, iteration: int = 0) -> None:
        """Log ``message``, then queue it for memory: one call writes both, in that order."""
        row = self._log.append(self.session_id, message, run_id=run_id, iteration=iteration)
        self._messages.append(sanitize_arguments(message))
        if self._memory is not None and run_id is not None:
            self._remember(message, row, run_id, iteration)

    def _remember(self, message: Message, row: int, run_id: str, iteration: int) -> None:
        assert self._memory is not None
        try:
            self._memory.record_message(
                message,
                message_id=row,
                session_id=self.session_id,
                run_id=run_id,
                iteration=iteration,
                log_epoch=self._log.identity.epoch_for(row),
            )
        except Exception:  # memory must never break the conversation; the log has it all
            log.exception("could not queue message %s for memory", row)

    def end_run(
        self,
        run_id: str,
        status: str,
        *,
        iterations: int,
        prompt_tokens: int = 0,
        completion_tokens: int = 0,
        cost: float | None = None,
        detail: str = "",
    ) -> None:
        """Record how the run ended (the run loop's one other write to the log)."""
        self._log.end_run(
            run_id,
            status,
            iterations=iterations,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            cost=cost,
            detail=detail,
        )

    def all(self) -> list[Message]:
        return repair(self._messages)

    def __len__(self) -> int:
        return len(self._messages)
