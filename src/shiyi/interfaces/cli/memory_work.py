"""What ``shiyi run`` says about its memory work after the reply, and ``memory jobs``' table.

The reply never waits for memory: it is printed first.  Then ``shiyi run`` gives the memory
worker up to ``memory.run_wait`` seconds (``--memory-wait``) to embed, extract, consolidate
and archive, and says in one line on stderr what was learned or what still waits, why, and
what will process it (with ``--json``, also as a ``memory_work`` event).
"""

from __future__ import annotations

import asyncio
import signal
import sys
import time
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING

from shiyi.events import MemoryWork

if TYPE_CHECKING:
    from shiyi.client.owner import Owner
    from shiyi.memory.jobs import JobBacklog, JobSummary
    from shiyi.memory.service import Memory
    from shiyi.memory.settle import Settled, Waiting

PROCESSED_BY = (
    "they run on the next `shiyi chat` or `shiyi serve`, under `shiyi worker`, or now with"
    " `shiyi memory jobs --run`"
)
"""What processes queued memory jobs (every entry point that owns the store)."""
NO_MODEL = "no usable `fast` model to extract with (configure models.fast)"


async def finish_memory_work(
    memory: Memory, session_id: str, since: float, wait: float
) -> MemoryWork:
    """Wait up to ``wait`` s for the queued memory work (Ctrl-C ends the wait and leaves
    the jobs queued), then describe it."""
    from shiyi.memory.settle import Settled, learned_since, settle, waiting_work
    from shiyi.memory.work import ready_work, stop_work

    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    started = time.monotonic()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        if wait > 0 and ready_work(memory):
            _say("memory: finishing this run's memory work (Ctrl-C leaves it queued)…")
        outcome = await settle(memory, wait, stop) if wait > 0 else "waiting"
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
    if outcome != "done":
        # The batch in hand finishes and the graph is flushed (closing does both anyway), so
        # what is reported as waiting is what the next owner will find.
        stop_work(memory)
    waiting = waiting_work(memory)
    if outcome != "interrupted" or not waiting:  # what could not start (no model) waits too
        outcome = "waiting" if waiting else "done"
    learned, replaced = learned_since(memory, session_id, since)
    settled = Settled(outcome, time.monotonic() - started, learned, replaced, waiting)
    return describe(settled, wait)


def describe(settled: Settled, timeout: float) -> MemoryWork:
    learned = _learned(settled.learned, settled.replaced)
    waits = {w.kind: w.count for w in settled.waiting}
    reason = _reasons(settled.waiting, settled.outcome, timeout)
    how = _how(settled.waiting)
    if settled.outcome == "done":
        message = f"memory: {learned}; this run's memory work is done"
    elif settled.outcome == "interrupted":
        message = f"memory: {learned}; interrupted: {_jobs(settled.waiting)} stay queued; {how}"
    else:
        message = f"memory: {learned}; {_jobs(settled.waiting)} wait — {reason}; {how}"
    return MemoryWork(
        outcome=settled.outcome,
        learned=settled.learned,
        replaced=settled.replaced,
        waiting=waits,
        reason=reason if settled.outcome != "done" else "",
        how=how if waits else "",
        waited_seconds=round(settled.waited, 2),
        message=message,
    )


def handed_off(owner: Owner | None) -> MemoryWork:
    """The run went through the service that owns the store: its worker does the rest."""
    who = f"`{owner.command or 'shiyi'}` (pid {owner.pid})" if owner else "the running service"
    message = (
        f"memory: {who} owns the memory store and processes this run's memory work "
        "(extraction, consolidation, the run's archive); `shiyi memory jobs` shows what waits"
    )
    return MemoryWork(outcome="handed_off", message=message, how=who)


def _learned(count: int, replaced: int) -> str:
    if count == 0:
        return "nothing new learned"
    text = f"{count} fact{'s' if count != 1 else ''} learned"
    return text + (f" ({replaced} replaced an older value)" if replaced else "")


def _how(waiting: Sequence[Waiting]) -> str:
    if any(w.why == "no_model" for w in waiting):
        return "once models.fast is configured, " + PROCESSED_BY
    return PROCESSED_BY


def _jobs(waiting: Sequence[Waiting]) -> str:
    total = sum(w.count for w in waiting)
    parts = ", ".join(f"{w.count} {w.kind}" for w in waiting)
    return f"{total} job{'s' if total != 1 else ''} ({parts})"


def _reasons(waiting: Sequence[Waiting], outcome: str, timeout: float) -> str:
    """Each distinct cause once, the most actionable first."""
    causes: list[str] = []
    deferred_said = False
    for item in sorted(waiting, key=lambda w: ("no_model", "deferred", "out_of_time").index(w.why)):
        if item.why == "deferred" and deferred_said:
            continue  # one deferral reason is enough: the others are in `shiyi memory jobs`
        deferred_said = deferred_said or item.why == "deferred"
        if item.why == "no_model":
            cause = NO_MODEL
        elif item.why == "deferred":
            cause = f"{item.reason or 'deferred'} (next try in {age(item.retry_in)})"
        elif outcome == "interrupted":
            cause = "interrupted by Ctrl-C"
        elif timeout <= 0:
            cause = "not waited for (--memory-wait 0)"
        else:
            cause = f"timed out after {timeout:g} s (memory.run_wait / --memory-wait)"
        if cause not in causes:
            causes.append(cause)
    return "; ".join(causes)


def emit(work: MemoryWork, json_lines: bool) -> None:
    """The line on stderr; with ``--json`` the event on stdout too (a reader that went away
    is not an error here: the run is over)."""
    _say(work.message)
    if json_lines:
        try:
            sys.stdout.write(work.model_dump_json() + "\n")
            sys.stdout.flush()
        except (BrokenPipeError, ValueError):
            pass


def queue_lines(
    summary: Sequence[JobSummary],
    backlog: Sequence[JobBacklog],
    runnable: Collection[str] | None = None,
    *,
    served: bool = False,
) -> list[str]:
    """``shiyi memory jobs``: per kind, counts by state, the oldest waiting job's age, why it
    waits (the reason the queue recorded, the next try), then what processes them.
    ``runnable``: the kinds the store's owner can run now (None: unknown); the others wait
    for a usable ``fast`` model.  ``served``: a running service owns the queue."""
    counts: dict[str, dict[str, int]] = {}
    for row in summary:
        counts.setdefault(row.kind, {})[row.status] = row.count
    waits = {r.kind: r for r in backlog if r.status == "pending"}
    header = f"{'kind':<12} {'pending':>7} {'running':>7} {'failed':>6} {'done':>6}  {'oldest':>7}"
    lines = [header + "  why it waits"]
    for kind, states in counts.items():
        open_rows = [r for r in backlog if r.kind == kind]
        oldest = age(max(r.oldest_age for r in open_rows)) if open_rows else "-"
        numbers = " ".join(
            f"{states.get(s, 0):>{w}}" for s, w in (("pending", 7), ("running", 7), ("failed", 6))
        )
        why = _why(waits[kind], runnable) if kind in waits else ""
        lines.append(f"{kind:<12} {numbers} {states.get('done', 0):>6}  {oldest:>7}  {why}")
    lines.append(_waiting_line(backlog, runnable, served))
    if any(r.status == "failed" for r in backlog):
        lines.append("failed jobs run again after `shiyi memory jobs --retry`")
    return lines


def _waiting_line(
    backlog: Sequence[JobBacklog], runnable: Collection[str] | None, served: bool
) -> str:
    open_rows = [r for r in backlog if r.status in ("pending", "running")]
    waiting = sum(r.count for r in open_rows)
    if not waiting:
        return "nothing waits"
    stuck = runnable is not None and any(r.kind not in runnable for r in open_rows)
    if served:
        how = "the service's worker runs them as they come due"
        how += "; extraction also needs models.fast configured (then restart it)" if stuck else ""
    else:
        how = ("once models.fast is configured, " if stuck else "") + PROCESSED_BY
    return f"{waiting} job{'s' if waiting != 1 else ''} wait; {how}"


def _why(row: JobBacklog, runnable: Collection[str] | None) -> str:
    if runnable is not None and row.kind not in runnable:
        return NO_MODEL
    if row.ready:
        deferred = row.count - row.ready
        return "ready to run" + (f"; {deferred} deferred" if deferred else "")
    reason = row.reason or "deferred"
    return f"{reason} (next try in {age(row.retry_in)})"


def age(seconds: float) -> str:
    """A duration in its largest whole unit: ``45 s``, ``3 min``, ``2 h``, ``4 d``."""
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{int(seconds // size)} {unit}"
    return f"{int(seconds)} s"


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)
