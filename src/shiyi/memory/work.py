"""The memory's background work as the processes owning it drive it: the server deferring
it while it greets, ``shiyi run`` stopping it at exit, ``shiyi memory import`` doing it in
the foreground, ``shiyi worker`` looping over the queue.  Here, so the interfaces call
memory's functions and never reach its worker or queue themselves."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from shiyi.errors import StorageError

if TYPE_CHECKING:
    from shiyi.memory.intake.worker import MemoryWorker
    from shiyi.memory.jobs import JobQueue
    from shiyi.memory.service import Memory

RETRY_AFTER_ERROR = 2.0
"""Seconds a worker waits after the database failed, before trying again."""


def defer_work_while(memory: Memory, busy: Callable[[], bool]) -> None:
    """The worker starts no batch while ``busy()`` (a server greeting a new session)."""
    memory.worker.defer_while = busy


def ready_work(memory: Memory) -> int:
    """Jobs due now (or running) that this process's worker can run."""
    return memory.jobs.ready_count(memory.worker.ready_kinds())


def stop_work(memory: Memory) -> None:
    """Finish the batch in hand and flush the graph: what waits is what the next owner finds."""
    memory.worker.stop()
    memory.worker.flush_graph()


def process_queue(
    memory: Memory, progress: Callable[[int], None], *, embed_jobs: int, timeout: float
) -> None:
    """Run the queue here until it is empty (or ``timeout``), telling ``progress`` how many
    turns are done so far."""
    deadline = time.monotonic() + timeout
    worker = memory.worker
    base = worker.events_done
    while time.monotonic() < deadline and worker.run_once(embed_jobs=embed_jobs):
        progress(worker.events_done - base)
    progress(worker.events_done - base)


def queue_location(memory: Memory) -> str:
    where = getattr(memory.jobs, "where", None)
    return str(where) if where else str(getattr(memory.jobs, "path", "the memory store"))


def serve_memory(
    memory: Memory, *, drain: bool, stop: threading.Event, poll: float, say: Callable[[str], None]
) -> int:
    return serve(memory.worker, memory.jobs, drain=drain, stop=stop, poll=poll, say=say)


def serve(
    worker: MemoryWorker,
    jobs: JobQueue,
    *,
    drain: bool,
    stop: threading.Event,
    poll: float,
    say: Callable[[str], None] = lambda message: None,
) -> int:
    """The worker loop: batch after batch until ``stop`` is set; with ``drain``, also until
    no job this worker can handle is ready or running anywhere (a running one may still
    queue follow-ups).  Returns how many jobs were handled."""
    handled = 0
    while not stop.is_set():
        try:
            worker.run_periodic()
            done = worker.run_once()
            if not done and drain and jobs.ready_count(worker.ready_kinds()) == 0:
                break
        except StorageError as exc:  # the database restarts or is unreachable: wait, retry
            say(f"the job queue failed ({exc}); retrying in {RETRY_AFTER_ERROR:.0f} s")
            stop.wait(RETRY_AFTER_ERROR)
            continue
        handled += done
        if not done:
            stop.wait(poll)
    return handled
