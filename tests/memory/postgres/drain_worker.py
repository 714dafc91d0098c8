"""One real worker process for the multi-process tests (run by them, not by pytest).

    python -m tests.memory.postgres.drain_worker URL LEASE POLL

A :class:`~shiyi.memory.intake.worker.MemoryWorker` on a :class:`PostgresJobQueue`, running the
loop and signal handling of ``shiyi worker --drain``, with one cheap job kind: ``record``
writes (job id, pid) to the ``handled`` table for every job of a batch, then - for a job
marked ``slow`` on its first attempt - sleeps long enough for the test to kill it mid-job.

Each process poses as a machine of its own (``queue.machine``): a dead worker's jobs then
come back only when its lease expires, as across machines.
"""

from __future__ import annotations

import os
import sys
import threading
import time

import psycopg

from shiyi.interfaces.cli.worker_cmd import install_stop_handlers, serve
from shiyi.memory.intake.worker import MemoryWorker
from shiyi.memory.jobs import Job
from shiyi.memory.postgres.jobs import PostgresJobQueue

KIND = "record"
BATCH = 16
SLOW_SECONDS = 120.0


def main(url: str, lease: float, poll: float) -> None:
    queue = PostgresJobQueue(url, lease=lease)
    queue.machine = f"test-machine-{os.getpid()}"
    log = psycopg.connect(url, autocommit=True)

    def record(jobs: list[Job]) -> None:
        log.execute(
            "INSERT INTO handled (job_id, pid) SELECT unnest(%s::bigint[]), %s",
            ([job.id for job in jobs], os.getpid()),
        )
        if any(job.payload.get("slow") and job.attempts == 0 for job in jobs):
            time.sleep(SLOW_SECONDS)  # the test SIGKILLs this process in here

    # Only ``record`` jobs are queued, so the built-in kinds never reach the store.
    worker = MemoryWorker(store=None, jobs=queue, embedder=None)  # type: ignore[arg-type]
    worker.register(KIND, record, batch=BATCH)
    stop = threading.Event()
    install_stop_handlers(stop)
    print("ready", flush=True)
    try:
        handled = serve(worker, queue, drain=True, stop=stop, poll=poll)
    finally:
        queue.close()
        log.close()
    print(f"handled {handled}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], float(sys.argv[2]), float(sys.argv[3]))
