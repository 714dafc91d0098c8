"""A short-lived process finishing its own memory work before it exits.

``shiyi run`` answers and exits.  The jobs its run queued - embedding the turns, extracting
facts, consolidating the session, archiving the run - used to wait for the next ``chat``,
``serve`` or worker, so a user working only with ``shiyi run`` had a memory without facts.
:func:`settle` lets the memory worker (already running in its thread) go on after the reply
for a bounded time; :func:`learned_since` and :func:`waiting_work` say what came of it.

Nothing here cancels a job: a wait that ends early (time out, Ctrl-C) leaves the worker to
finish the batch in hand as the store closes, and everything else queued, durably.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from shiyi.memory.lifecycle.pipeline import CONVERSATION

if TYPE_CHECKING:
    from shiyi.memory.service import Memory

POLL = 0.05
"""Seconds between looks at the queue while waiting."""
SESSION_EVENTS = 100_000
"""Turns of the session whose facts :func:`learned_since` considers (all, in practice)."""

Outcome = Literal["done", "waiting", "interrupted"]


@dataclass(frozen=True, slots=True)
class Waiting:
    """Jobs of one kind still queued after the wait, and why."""

    kind: str
    count: int
    why: Literal["no_model", "deferred", "out_of_time"]
    reason: str
    """The reason the queue recorded (a deferral or an error), '' when none."""
    retry_in: float = 0.0


@dataclass(frozen=True, slots=True)
class Settled:
    outcome: Outcome
    waited: float
    learned: int
    replaced: int
    waiting: list[Waiting]


async def settle(memory: Memory, seconds: float, stop: asyncio.Event) -> Outcome:
    """Let the worker run until nothing it can do now is left, ``seconds`` pass or
    ``stop`` is set.  Jobs that cannot run now (no extraction model, a retry delay) do not
    hold the wait: they are what :func:`waiting_work` reports."""
    worker = memory.worker
    worker.hold_heavy_while = None  # the reply is out: nothing is left to give way to
    worker.start()
    deadline = time.monotonic() + seconds
    while memory.jobs.ready_count(worker.ready_kinds()) > 0:
        if stop.is_set():
            return "interrupted"
        left = deadline - time.monotonic()
        if left <= 0:
            return "waiting"
        worker.wake()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), min(POLL, left))
    return "done"


def waiting_work(memory: Memory) -> list[Waiting]:
    """Per kind, the jobs still pending or running, with the most telling reason."""
    ready_kinds = set(memory.worker.ready_kinds())
    counts: dict[str, int] = {}
    why: dict[str, Waiting] = {}
    for row in memory.jobs.backlog():
        if row.status not in ("pending", "running"):
            continue
        counts[row.kind] = counts.get(row.kind, 0) + row.count
        if row.kind not in ready_kinds:
            cause = Waiting(row.kind, 0, "no_model", row.reason)
        elif row.status == "running" or row.ready:
            cause = Waiting(row.kind, 0, "out_of_time", row.reason)
        else:
            cause = Waiting(row.kind, 0, "deferred", row.reason, row.retry_in)
        why.setdefault(row.kind, cause)
    return [
        Waiting(kind, count, why[kind].why, why[kind].reason, why[kind].retry_in)
        for kind, count in counts.items()
    ]


RECENT_FACTS = 50
"""The newest facts read for the explicit ones a run wrote (more than any run writes)."""


def learned_since(memory: Memory, session_id: str, since: float) -> tuple[int, int]:
    """(facts learned, of which replaced an older value) from the session's turns since
    ``since``: what extraction and consolidation wrote, not the run's archive."""
    store = memory.store
    events = store.session_window(session_id, float("inf"), CONVERSATION, SESSION_EVENTS)
    derived = store.facts_derived_from([e.id for e in events]) if events else []
    # and what was remembered explicitly (the remember tool, a request the agent kept):
    # such a fact names no turn it came from
    recent = store.fact_ids(RECENT_FACTS)
    new = [
        f
        for f in store.get_facts(list(dict.fromkeys([*derived, *recent])))
        if f.created_at >= since
        and f.source != "archive"
        and f.status in ("active", "pending")
        and (f.id in derived or (f.source == "explicit" and memory.viewer.sees_fact(f)))
    ]
    replaced = sum(1 for f in new if f.key and _replaced_one(memory, f.key, f.id, since))
    return len(new), replaced


def _replaced_one(memory: Memory, key: str, fact_id: str, since: float) -> bool:
    """Whether another version of ``key`` ended since ``since`` (superseded by this one)."""
    versions = memory.history(key=key)
    return any(
        f.id != fact_id and f.status == "superseded" and f.updated_at >= since for f in versions
    )
