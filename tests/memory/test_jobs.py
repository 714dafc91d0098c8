"""One job-queue suite, two queues: the SQLite file of the embedded store and PostgreSQL.

Lease behaviour only PostgreSQL has (heartbeats, expiry, stale workers, many processes) is
in :mod:`tests.memory.postgres`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from shiyi.errors import StorageError
from shiyi.memory.jobs import JobQueue
from shiyi.memory.kuzu.jobs import SqliteJobQueue
from tests.memory.queue_client import QueueProcess

QUEUES = ("sqlite", "postgres")
LEASE = 30.0
"""Seconds: longer than any test here, so no claim expires by accident."""

QueueFactory = Callable[[], JobQueue]


@pytest.fixture(params=QUEUES)
def queue_kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def queue_target(queue_kind: str, request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The SQLite file or the PostgreSQL URL every queue of the test opens."""
    if queue_kind == "postgres":
        return str(request.getfixturevalue("postgres_url"))
    return str(tmp_path / "jobs.sqlite3")


@pytest.fixture
def open_queue(queue_kind: str, queue_target: str) -> Iterator[QueueFactory]:
    opened: list[JobQueue] = []

    def factory() -> JobQueue:
        queue: JobQueue
        if queue_kind == "postgres":
            from shiyi.memory.postgres.jobs import PostgresJobQueue

            queue = PostgresJobQueue(queue_target, lease=LEASE)
        else:
            queue = SqliteJobQueue(Path(queue_target))
        opened.append(queue)
        return queue

    yield factory
    for queue in opened:
        queue.close()


@pytest.fixture
def queue(open_queue: QueueFactory) -> JobQueue:
    return open_queue()


def client_argv(queue_kind: str, queue_target: str) -> list[str]:
    return [queue_kind, queue_target] + ([str(LEASE)] if queue_kind == "postgres" else [])


def test_claim_marks_running_and_complete_finishes(queue: JobQueue) -> None:
    first = queue.enqueue("ingest", {"n": 1})
    queue.enqueue("embed", {"n": 2})
    claimed = queue.claim(["ingest"], limit=5)
    assert [(j.id, j.payload) for j in claimed] == [(first, {"n": 1})]
    assert queue.claim(["ingest"]) == []
    assert queue.complete([first]) == 1
    assert queue.pending_count(["ingest"]) == 0
    assert queue.pending_count() == 1


def test_claims_oldest_first_up_to_the_limit(queue: JobQueue) -> None:
    ids = [queue.enqueue("embed", {"n": n}) for n in range(5)]
    assert [j.id for j in queue.claim(["embed"], limit=3)] == ids[:3]
    assert [j.payload["n"] for j in queue.claim(["embed"], limit=3)] == [3, 4]


def test_completing_a_job_nobody_claimed_does_nothing(queue: JobQueue) -> None:
    job_id = queue.enqueue("ingest", {})
    assert queue.complete([job_id]) == 0
    assert [j.id for j in queue.claim(["ingest"])] == [job_id]


def test_failures_retry_with_delay_then_fail_visibly(queue: JobQueue) -> None:
    queue.enqueue("embed", {}, max_attempts=2)
    job = queue.claim(["embed"])[0]
    assert queue.fail(job, "boom 1", retry_in=0) is True
    again = queue.claim(["embed"])[0]
    assert again.attempts == 1
    assert queue.fail(again, "boom 2", retry_in=0) is False
    assert queue.claim(["embed"]) == []
    failed = queue.failed()
    assert [(f.kind, f.attempts, f.last_error) for f in failed] == [("embed", 2, "boom 2")]
    assert abs(failed[0].updated_at - time.time()) < 60
    assert queue.retry_failed() == 1
    assert len(queue.claim(["embed"])) == 1


def test_retry_delay_is_honoured(queue: JobQueue) -> None:
    queue.enqueue("embed", {})
    job = queue.claim(["embed"])[0]
    queue.fail(job, "later", retry_in=3600)
    assert queue.claim(["embed"]) == []
    assert queue.pending_count() == 1


def test_short_backoff_expires(queue: JobQueue) -> None:
    queue.enqueue("embed", {})
    queue.fail(queue.claim(["embed"])[0], "soon", retry_in=0.2)
    assert queue.claim(["embed"]) == []
    time.sleep(0.3)
    assert [j.attempts for j in queue.claim(["embed"])] == [1]


def test_deferring_waits_without_using_an_attempt(queue: JobQueue) -> None:
    queue.enqueue("extract", {"e": 1}, max_attempts=1)
    job = queue.claim(["extract"])[0]
    queue.defer(job, "no model yet", retry_in=3600)
    assert queue.claim(["extract"]) == []
    assert queue.failed() == []
    queue.enqueue("extract", {"e": 2}, max_attempts=1)
    other = queue.claim(["extract"])[0]
    queue.defer(other, "no model yet", retry_in=0)
    assert [(j.payload, j.attempts) for j in queue.claim(["extract"])] == [({"e": 2}, 0)]


def test_enqueue_once_skips_a_job_that_exists_in_any_state(queue: JobQueue) -> None:
    assert queue.enqueue_once("archive", {"run": "r1", "goal": "x"}) is True
    assert queue.enqueue_once("archive", {"goal": "x", "run": "r1"}) is False
    assert queue.enqueue_once("extract", {"run": "r1", "goal": "x"}) is True  # other kind
    (job,) = queue.claim(["archive"], limit=5)
    queue.complete([job.id])
    assert queue.enqueue_once("archive", {"run": "r1", "goal": "x"}) is False
    assert queue.enqueue_once("archive", {"run": "r2", "goal": "x"}) is True


def test_summary_counts_by_kind_and_status(queue: JobQueue) -> None:
    queue.enqueue("embed", {})
    queue.enqueue("embed", {})
    queue.enqueue("ingest", {})
    queue.complete([queue.claim(["ingest"])[0].id])
    rows = {(row.kind, row.status): row.count for row in queue.summary()}
    assert rows == {("embed", "pending"): 2, ("ingest", "done"): 1}


def test_purge_done_deletes_only_old_done_jobs(queue: JobQueue) -> None:
    queue.enqueue("ingest", {})
    waiting = queue.enqueue("ingest", {})
    queue.complete([queue.claim(["ingest"])[0].id])
    assert queue.purge_done(time.time() - 3600) == 0
    assert queue.purge_done(time.time() + 1) == 1
    assert queue.summary()[0].status == "pending"
    assert [j.id for j in queue.claim(["ingest"])] == [waiting]


def test_rewrite_payloads_edits_and_deletes(queue: JobQueue) -> None:
    keep = queue.enqueue("embed", {"ids": ["a", "b"]})
    queue.enqueue("embed", {"ids": ["b"]})
    queue.enqueue("ingest", {"ids": ["c"]})

    def drop_b(payload: dict[str, object]) -> dict[str, object] | None:
        ids = [i for i in payload["ids"] if i != "b"]  # type: ignore[attr-defined]
        return {"ids": ids} if ids else None

    assert queue.rewrite_payloads(drop_b) == (1, 1)
    claimed = queue.claim(["embed"], limit=5)
    assert [(j.id, j.payload) for j in claimed] == [(keep, {"ids": ["a"]})]
    assert queue.pending_count() == 2


def test_jobs_left_running_by_a_dead_process_are_recovered(
    queue_kind: str, queue_target: str, open_queue: QueueFactory
) -> None:
    queue = open_queue()
    job_id = queue.enqueue("ingest", {"x": 1})
    other = QueueProcess(*client_argv(queue_kind, queue_target))
    try:
        assert other.send("claim ingest 1") == [[job_id, 0]]
        other.send("crash")  # dies holding the job
    finally:
        other.close()
    # Opening the queue again finds it: SQLite because the store has one owner, PostgreSQL
    # because the claimant ran on this machine and its pid is gone (see test_job_leases).
    assert open_queue().recover() == 1
    assert [j.payload for j in queue.claim(["ingest"])] == [{"x": 1}]


def test_corrupt_queue_file(tmp_path: Path) -> None:
    path = tmp_path / "jobs.sqlite3"
    path.write_bytes(b"garbage" * 1000)
    with pytest.raises(StorageError, match="cannot be opened"):
        SqliteJobQueue(path)


def test_ready_count_leaves_out_jobs_waiting_for_a_retry(queue: JobQueue) -> None:
    queue.enqueue("embed", {})
    queue.enqueue("embed", {})
    queue.enqueue("ingest", {})
    first, second = queue.claim(["embed"], limit=2)
    queue.fail(first, "later", retry_in=3600)
    assert queue.ready_count() == 2  # the running one and the ingest job
    assert queue.ready_count(["embed"]) == 1
    queue.complete([second.id])
    assert queue.ready_count(["embed"]) == 0
    assert queue.pending_count(["embed"]) == 1


def test_backlog_says_what_waits_how_long_and_why(queue: JobQueue) -> None:
    for n in range(3):
        queue.enqueue("extract", {"e": n})
    queue.enqueue("embed", {"n": 1})
    done = queue.enqueue("ingest", {})
    queue.complete([j.id for j in queue.claim(["ingest"])])
    deferred = queue.claim(["extract"], limit=2)
    for job in deferred:
        queue.defer(job, "no usable extraction model (configure models.fast)", retry_in=300)
    running = queue.claim(["embed"])
    rows = {(row.kind, row.status): row for row in queue.backlog()}
    assert set(rows) == {("extract", "pending"), ("embed", "running")}  # done jobs left out
    extract = rows["extract", "pending"]
    assert (extract.count, extract.ready) == (3, 1)
    assert extract.reason == "no usable extraction model (configure models.fast)"
    assert extract.retry_in == 0  # one never tried is ready now
    assert 0 <= extract.oldest_age < 60
    assert rows["embed", "running"].count == 1 and running and done
    queue.complete([j.id for j in queue.claim(["extract"])])
    later = {(r.kind, r.status): r for r in queue.backlog()}["extract", "pending"]
    assert (later.count, later.ready) == (2, 0)
    assert 200 < later.retry_in <= 300
