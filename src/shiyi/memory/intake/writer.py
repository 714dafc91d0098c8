"""The reply-path side of memory: queue what was said, durably and in well under 10 ms.

No graph write, no embedding and no LLM happens here; the worker does all of that after
the reply.  A queued job survives ``kill -9``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from shiyi.llm.types import Message
from shiyi.memory.intake.segments import to_events
from shiyi.memory.intake.worker import INGEST, event_payload
from shiyi.memory.jobs import JobQueue
from shiyi.memory.models import EventRecord
from shiyi.memory.text.echoes import Echoes


class MemoryWriter:
    def __init__(
        self,
        jobs: JobQueue,
        wake: Callable[[], None],
        *,
        user_id: str = "default",
        agent_id: str = "shiyi",
        echoes: Echoes | None = None,
    ) -> None:
        self.jobs = jobs
        self.echoes = echoes or Echoes()
        """What memory showed each run's model: the turns repeating it are marked derived."""
        self.wake = wake
        self.user_id = user_id
        self.agent_id = agent_id
        self._next_segment: dict[tuple[str, int], int] = {}

    def record(
        self,
        message: Message,
        *,
        message_id: int,
        session_id: str,
        run_id: str,
        iteration: int,
        ts: float | None = None,
        log_epoch: str = "",
    ) -> list[EventRecord]:
        key = (run_id, iteration)
        events = to_events(
            message,
            message_id=message_id,
            session_id=session_id,
            run_id=run_id,
            iteration=iteration,
            first_segment=self._next_segment.get(key, 0),
            ts=time.time() if ts is None else ts,
            user_id=self.user_id,
            agent_id=self.agent_id,
            log_epoch=log_epoch,
        )
        if events:
            self._next_segment[key] = events[-1].segment + 1
            self.echoes.mark(events)
            self.record_events(events)
        return events

    def shown(self, run_id: str, texts: Sequence[str]) -> None:
        """Memory texts the run's model was shown outside a tool (its hint): a reply
        quoting them is an echo (:mod:`shiyi.memory.text.echoes`)."""
        self.echoes.show(run_id, texts)

    def record_events(self, events: list[EventRecord]) -> None:
        self.jobs.enqueue(INGEST, event_payload(events))
        self.wake()
