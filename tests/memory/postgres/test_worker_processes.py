"""Four real worker processes drain 10,000 jobs from PostgreSQL: every job completed exactly
once, none lost, although one worker is killed (SIGKILL) in the middle of a job."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest

from shiyi.memory.postgres.jobs import PostgresJobQueue
from tests.memory.postgres.drain_worker import BATCH, KIND

ROOT = Path(__file__).resolve().parents[3]
JOBS = 10_000
WORKERS = 4
SLOW = 2_500  # index of the job whose worker gets killed
LEASE = 3.0
"""Seconds; a heartbeat delayed past a 1 s lease on a loaded CI machine let a survivor re-run
a live worker's batch."""

# Every write that marks a job done leaves a row here, so a job completed twice shows up
# even if the second write changed nothing visible.
AUDIT = """
CREATE TABLE handled (job_id bigint NOT NULL, pid integer NOT NULL);
CREATE TABLE completions (job_id bigint NOT NULL, worker text NOT NULL);
CREATE FUNCTION audit_done() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO completions VALUES (NEW.id, NEW.claimed_by);
    RETURN NULL;
END $$;
CREATE TRIGGER audit_done AFTER UPDATE ON shiyi_jobs
    FOR EACH ROW WHEN (NEW.status = 'done') EXECUTE FUNCTION audit_done();
"""


def start_worker(url: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.memory.postgres.drain_worker", url, str(LEASE), "0.05"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )


def wait_for_handler_of(conn: psycopg.Connection, job_id: int, timeout: float = 60) -> int:
    """The pid of the worker that started handling ``job_id``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = conn.execute("SELECT pid FROM handled WHERE job_id = %s", (job_id,)).fetchone()
        if found:
            return int(found[0])
        time.sleep(0.02)
    pytest.fail(f"no worker took job {job_id} within {timeout} s")


def test_four_workers_complete_every_job_once_though_one_is_killed(postgres_url: str) -> None:
    setup = PostgresJobQueue(postgres_url, lease=LEASE)  # creates the queue's tables
    payloads = [{"n": n, "slow": n == SLOW} for n in range(JOBS)]
    setup.enqueue_many(KIND, payloads)
    setup.close()
    conn = psycopg.connect(postgres_url, autocommit=True)
    conn.execute(AUDIT)
    slow_id = conn.execute(
        "SELECT id FROM shiyi_jobs WHERE payload->>'n' = %s", (str(SLOW),)
    ).fetchone()[0]  # type: ignore[index]

    workers = [start_worker(postgres_url) for _ in range(WORKERS)]
    try:
        victim_pid = wait_for_handler_of(conn, slow_id)
        (victim,) = [w for w in workers if w.pid == victim_pid]
        victim.send_signal(signal.SIGKILL)
        assert victim.wait(10) == -signal.SIGKILL
        survivors = [w for w in workers if w is not victim]
        for survivor in survivors:
            assert survivor.wait(90) == 0
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.kill()
                worker.wait()

    rows = conn.execute("SELECT status, count(*) FROM shiyi_jobs GROUP BY 1").fetchall()
    statuses = {str(status): int(count) for status, count in rows}
    assert statuses == {"done": JOBS}
    completed, distinct = conn.execute(
        "SELECT count(*), count(DISTINCT job_id) FROM completions"
    ).fetchone()  # type: ignore[misc]
    assert (completed, distinct) == (JOBS, JOBS)  # each job marked done once, none lost
    assert conn.execute("SELECT count(DISTINCT job_id) FROM handled").fetchone() == (JOBS,)

    # Only the batch the killed worker held ran twice, and it completed none of that batch.
    repeated = sorted(
        row[0] for row in conn.execute("SELECT job_id FROM handled GROUP BY 1 HAVING count(*) > 1")
    )
    victims = {
        row[0] for row in conn.execute("SELECT job_id FROM handled WHERE pid = %s", (victim_pid,))
    }
    assert slow_id in repeated
    assert set(repeated) <= victims
    assert len(repeated) <= BATCH
    suffix = f"%:{victim_pid}"
    assert conn.execute(
        "SELECT count(*) FROM completions WHERE job_id = ANY(%s) AND worker LIKE %s",
        (repeated, suffix),
    ).fetchone() == (0,)
    finisher, attempts = conn.execute(
        "SELECT claimed_by, attempts FROM shiyi_jobs WHERE id = %s", (slow_id,)
    ).fetchone()  # type: ignore[misc]
    assert not finisher.endswith(f":{victim_pid}")  # re-claimed after the lease expired,
    assert attempts == 1  # which counted an attempt
    workers_done = conn.execute("SELECT count(DISTINCT worker) FROM completions").fetchone()
    assert workers_done is not None and workers_done[0] >= 3  # the work was shared
    conn.close()
