"""Leases of the PostgreSQL job queue, with real processes: a worker that dies or stalls
loses its jobs to the others once its lease expires, and cannot complete them afterwards."""

from __future__ import annotations

import signal
import time
from collections.abc import Callable, Iterator

import psycopg
import pytest

from shiyi.errors import StorageError
from shiyi.memory.postgres.jobs import PostgresJobQueue
from tests.memory.queue_client import QueueProcess

LEASE = 1.5
"""Seconds; long enough that a loaded machine's stalls do not expire a live lease (a CI run that
took twice its usual time once saw a 0.5 s lease lapse between a kill and the next claim)."""

Factory = Callable[..., PostgresJobQueue]


@pytest.fixture
def open_queue(postgres_url: str) -> Iterator[Factory]:
    opened: list[PostgresJobQueue] = []

    def factory(**options: object) -> PostgresJobQueue:
        lease = float(options.pop("lease", LEASE))  # type: ignore[arg-type]
        queue = PostgresJobQueue(postgres_url, lease=lease, **options)  # type: ignore[arg-type]
        opened.append(queue)
        return queue

    yield factory
    for queue in opened:
        queue.close()


@pytest.fixture
def client(postgres_url: str) -> Iterator[QueueProcess]:
    process = QueueProcess("postgres", postgres_url, str(LEASE))
    yield process
    process.close()


def row(url: str, job_id: int) -> tuple[str, int, str, str | None]:
    with psycopg.connect(url) as conn:
        found = conn.execute(
            "SELECT status, attempts, last_error, claimed_by FROM shiyi_jobs WHERE id = %s",
            (job_id,),
        ).fetchone()
    assert found is not None
    status, attempts, error, claimed_by = found
    return str(status), int(attempts), str(error), claimed_by


def test_the_heartbeat_keeps_a_long_job_claimed(open_queue: Factory, postgres_url: str) -> None:
    worker, other = open_queue(), open_queue()
    job_id = worker.enqueue("embed", {})
    assert [j.id for j in worker.claim(["embed"])] == [job_id]
    time.sleep(LEASE * 3)  # three leases long: only the heartbeat keeps it
    assert other.claim(["embed"]) == []
    assert other.recover() == 0
    assert worker.complete([job_id]) == 1
    assert row(postgres_url, job_id)[:2] == ("done", 0)


def test_a_killed_workers_jobs_come_back_after_its_lease(
    open_queue: Factory, client: QueueProcess, postgres_url: str
) -> None:
    queue = open_queue()
    queue.machine = "another-machine"  # cannot see the client's pid: only the lease tells
    poison = queue.enqueue("ingest", {"n": 1}, max_attempts=1)
    normal = queue.enqueue("ingest", {"n": 2})
    assert client.send("claim ingest 5") == [[poison, 0], [normal, 0]]
    client.signal(signal.SIGKILL)
    client.process.wait(10)
    assert queue.claim(["ingest"]) == []  # still leased to the dead process
    time.sleep(LEASE + 0.2)
    (again,) = queue.claim(["ingest"], limit=5)
    assert (again.id, again.attempts) == (normal, 1)  # an expiry counts as an attempt
    status, attempts, error, _ = row(postgres_url, poison)
    assert (status, attempts) == ("failed", 1)  # a job that kills its workers stops circling
    assert "stopped renewing its lease" in error


def test_a_dead_worker_on_this_machine_is_noticed_before_its_lease_ends(
    open_queue: Factory, postgres_url: str
) -> None:
    queue = open_queue()
    job_id = queue.enqueue("ingest", {})
    client = QueueProcess("postgres", postgres_url, "3600")
    try:
        assert client.send("claim ingest 1") == [[job_id, 0]]
        client.signal(signal.SIGKILL)
        client.process.wait(10)
    finally:
        client.close()
    assert queue.recover() == 1
    assert [(j.id, j.attempts) for j in queue.claim(["ingest"])] == [(job_id, 1)]
    assert "process is gone" in row(postgres_url, job_id)[2]


def test_a_live_worker_on_this_machine_keeps_its_jobs(
    open_queue: Factory, client: QueueProcess
) -> None:
    queue = open_queue()
    job_id = queue.enqueue("ingest", {})
    assert client.send("claim ingest 1") == [[job_id, 0]]
    assert queue.recover() == 0
    assert queue.claim(["ingest"]) == []


def test_a_stale_worker_cannot_complete_a_reclaimed_job(
    open_queue: Factory, client: QueueProcess, postgres_url: str
) -> None:
    queue = open_queue()
    job_id = queue.enqueue("embed", {})
    assert client.send("claim embed 1") == [[job_id, 0]]
    client.signal(signal.SIGSTOP)  # stalls: no heartbeat
    try:
        time.sleep(LEASE + 0.2)
        (job,) = queue.claim(["embed"])
        assert (job.id, job.attempts) == (job_id, 1)
    finally:
        client.signal(signal.SIGCONT)
    assert client.send(f"complete {job_id}") == 0  # its lease is gone
    assert row(postgres_url, job_id)[0] == "running"
    assert queue.complete([job_id]) == 1
    status, _, _, claimed_by = row(postgres_url, job_id)
    assert (status, claimed_by) == ("done", queue.worker_id)


def test_closing_hands_unfinished_jobs_back_without_an_attempt(open_queue: Factory) -> None:
    stopping, other = open_queue(worker_id="stopping"), open_queue()
    job_id = stopping.enqueue("embed", {})
    assert len(stopping.claim(["embed"])) == 1
    stopping.close()
    assert [(j.id, j.attempts) for j in other.claim(["embed"])] == [(job_id, 0)]


def test_two_queues_in_threads_never_share_a_job(open_queue: Factory) -> None:
    import threading

    first, second = open_queue(), open_queue()
    first.enqueue_many("embed", [{"n": n} for n in range(2000)])
    taken: dict[str, list[int]] = {"first": [], "second": []}

    def drain(name: str, queue: PostgresJobQueue) -> None:
        while jobs := queue.claim(["embed"], limit=7):
            taken[name] += [j.id for j in jobs]
            queue.complete([j.id for j in jobs])

    threads = [
        threading.Thread(target=drain, args=item) for item in (("first", first), ("second", second))
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    every = taken["first"] + taken["second"]
    assert len(every) == len(set(every)) == 2000
    assert taken["first"] and taken["second"]


def test_an_unreachable_database_is_named_without_its_password() -> None:
    url = "postgresql://shiyi:hunter2@127.0.0.1:1/memory"
    with pytest.raises(StorageError) as caught:
        PostgresJobQueue(url, connect_timeout=1)
    message = str(caught.value)
    assert "postgresql://127.0.0.1:1/memory" in message
    assert "hunter2" not in message
    assert "memory.store" in message
