"""The memory job queue in PostgreSQL: many worker processes, on many machines, one queue.

A claim is one statement: ``SELECT ... FOR UPDATE SKIP LOCKED`` picks ready rows no other
transaction is claiming, and the ``UPDATE`` around it marks them ``running`` under a *lease*:
this queue's ``worker_id``, a fresh ``lease_token`` and ``lease_expires_at``.  Two workers
never get the same job, and none waits for another's claim.

While jobs are held, a heartbeat thread pushes their leases forward.  A worker that dies
(``kill -9``, a lost machine) stops heartbeating; once its lease expires, any worker's next
claim puts the job back (counting an attempt, so a job that kills every worker that takes
it ends ``failed`` instead of circling forever).  Completing, failing or deferring a job
needs the lease token of the claim: a worker that lost its lease - it stalled past the
expiry and another worker re-claimed the job - cannot mark that job done.  A claimant on
this machine whose process is gone is noticed without waiting for its lease.  Handlers are
idempotent, so a job re-run after an expiry changes nothing already done.

Every statement runs in autocommit (one round trip); the few that need two statements use
an explicit transaction.
"""

from __future__ import annotations

import io
import json
import logging
import os
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg.types.json import Jsonb
from psycopg_pool import PoolTimeout

from shiyi.errors import StorageError
from shiyi.memory.jobs import FailedJob, Job, JobBacklog, JobSummary
from shiyi.memory.postgres.connect import open_pool, unreachable
from shiyi.memory.postgres.jobs_schema import JOBS_TABLE, migrate
from shiyi.memory.postgres.leases import (
    Heartbeat,
    Leases,
    dead_pids,
    default_worker_id,
    machine_identity,
)
from shiyi.memory.postgres.nul import nul_free
from shiyi.memory.postgres.schema import Conn
from shiyi.memory.postgres.store import check_url, redacted

log = logging.getLogger(__name__)

DEFAULT_LEASE = 60.0
"""Seconds a claim stays valid without a heartbeat (the heartbeat renews it every third)."""
_T = JOBS_TABLE
_ONCE_LOCK = 0x5348_4A42  # advisory lock class of enqueue_once: one key per (kind, payload)

_CLAIM = f"""
WITH picked AS (
    SELECT id FROM {_T}
    WHERE status = 'pending' AND kind = ANY(%(kinds)s) AND run_after <= now()
    ORDER BY id LIMIT %(limit)s
    FOR UPDATE SKIP LOCKED
)
UPDATE {_T} AS j SET status = 'running', claimed_by = %(worker)s, claimed_host = %(host)s,
    claimed_pid = %(pid)s, lease_token = %(token)s,
    lease_expires_at = now() + make_interval(secs => %(lease)s), updated_at = now()
FROM picked WHERE j.id = picked.id
RETURNING j.id, j.kind, j.payload, j.attempts, j.max_attempts
"""

# {where}: which running jobs to take back; {why}: what last_error says happened.
_REAP = """
WITH lost AS (
    SELECT id FROM {table} WHERE status = 'running' AND {where}
    ORDER BY id FOR UPDATE SKIP LOCKED
)
UPDATE {table} AS j SET
    status = CASE WHEN j.attempts + 1 >= j.max_attempts THEN 'failed' ELSE 'pending' END,
    attempts = j.attempts + 1,
    last_error = coalesce(j.claimed_by, 'a worker') || {why},
    lease_token = NULL, lease_expires_at = NULL, run_after = now(), updated_at = now()
FROM lost WHERE j.id = lost.id
RETURNING j.id
"""
_REAP_EXPIRED = _REAP.format(
    table=_T,
    where="lease_expires_at < now()",
    why="' stopped renewing its lease (it died or stalled) while handling the job'",
)
_REAP_DEAD = _REAP.format(
    table=_T,
    where="claimed_host = %(host)s AND claimed_pid = ANY(%(pids)s)",
    why="' died while handling the job (its process is gone from this machine)'",
)

# ``held``: the (id, token) pairs this queue claimed; a row matches only under its lease.
_HELD = "FROM unnest(%s::bigint[], %s::uuid[]) AS held(id, token)"
_MINE = "j.id = held.id AND j.lease_token = held.token AND j.status = 'running'"


def _split(pairs: Sequence[tuple[int, uuid.UUID]]) -> tuple[list[int], list[uuid.UUID]]:
    return [job_id for job_id, _ in pairs], [token for _, token in pairs]


class PostgresJobQueue:
    """A :class:`~shiyi.memory.jobs.JobQueue` shared by every worker of one database."""

    def __init__(
        self,
        url: str,
        *,
        lease: float = DEFAULT_LEASE,
        worker_id: str | None = None,
        pool_size: int = 4,
        connect_timeout: float = 10.0,
    ) -> None:
        check_url(url)
        if lease <= 0:
            raise ValueError("a job lease must be positive")
        self.where = redacted(url)
        self.lease = lease
        self.worker_id = worker_id or default_worker_id()
        self.machine = machine_identity()
        self._leases = Leases()
        self._heartbeat: Heartbeat | None = None
        self._start_lock = threading.Lock()
        # Expired leases are looked for at most this often (each claim would be a wasted
        # round trip); a dead worker's jobs are back within lease + this.
        self._reap_every = min(lease / 4, 5.0)
        self._last_reap = float("-inf")
        self._closed = False
        _migrate(url, self.where, connect_timeout)
        self._pool = open_pool(
            url,
            "job queue",
            self.where,
            name="shiyi-jobs",
            min_size=1,
            max_size=max(2, pool_size),  # the heartbeat must not wait behind a long claim
            timeout=connect_timeout,
            autocommit=True,
        )

    # --- plumbing ----------------------------------------------------------------------

    @contextmanager
    def _conn(self) -> Iterator[Conn]:
        if self._closed:
            raise StorageError(f"the job queue in {self.where} is closed")
        try:
            with self._pool.connection() as conn:
                yield conn
        except PoolTimeout as exc:
            raise StorageError(
                f"no connection to the job queue database {self.where} could be had ({exc}); "
                "is the server up?"
            ) from exc
        except psycopg.OperationalError as exc:
            raise StorageError(f"the job queue database {self.where} failed: {exc}") from exc

    def _start_heartbeat(self) -> None:
        with self._start_lock:
            if self._heartbeat is None and not self._closed:
                self._heartbeat = Heartbeat(self.renew_leases, self.lease / 3)

    # --- queueing ----------------------------------------------------------------------

    def enqueue(self, kind: str, payload: dict[str, Any], *, max_attempts: int = 5) -> int:
        with self._conn() as conn:
            row = conn.execute(
                f"INSERT INTO {_T} (kind, payload, max_attempts) VALUES (%s, %s, %s) RETURNING id",
                (kind, Jsonb(nul_free(payload)), max_attempts),
            ).fetchone()
        assert row is not None
        return int(row[0])

    def enqueue_once(self, kind: str, payload: dict[str, Any], *, max_attempts: int = 5) -> bool:
        """Enqueue unless a job of this kind with the same payload exists (in any state).

        An advisory lock on (kind, payload) makes the check and the insert atomic against
        another worker enqueueing the same follow-up at the same moment."""
        text = json.dumps(nul_free(payload), sort_keys=True, ensure_ascii=False)
        with self._conn() as conn, conn.transaction():
            conn.execute(
                "SELECT pg_advisory_xact_lock(%s, hashtext(%s || md5(%s::jsonb::text)))",
                (_ONCE_LOCK, kind, text),
            )
            cursor = conn.execute(
                f"INSERT INTO {_T} (kind, payload, max_attempts) SELECT %s, %s::jsonb, %s"
                f" WHERE NOT EXISTS (SELECT 1 FROM {_T} WHERE kind = %s"
                " AND md5(payload::text) = md5(%s::jsonb::text) AND payload = %s::jsonb)",
                (kind, text, max_attempts, kind, text, text),
            )
            return cursor.rowcount > 0

    def enqueue_many(
        self, kind: str, payloads: Sequence[dict[str, Any]], *, max_attempts: int = 5
    ) -> int:
        """Bulk load with ``COPY`` (imports, benchmarks); returns how many were queued."""
        buffer = io.StringIO()
        for payload in payloads:
            text = json.dumps(nul_free(payload), ensure_ascii=False)
            buffer.write(f"{kind}\t{_copy_escape(text)}\t{max_attempts}\n")
        with (
            self._conn() as conn,
            conn.transaction(),
            conn.cursor().copy(f"COPY {_T} (kind, payload, max_attempts) FROM STDIN") as copy,
        ):
            copy.write(buffer.getvalue())
        return len(payloads)

    # --- claiming and leases -------------------------------------------------------------

    def claim(self, kinds: Sequence[str], limit: int = 1) -> list[Job]:
        """Take up to ``limit`` ready jobs of these kinds (oldest first) under a new lease."""
        if not kinds or limit < 1:
            return []
        if time.monotonic() - self._last_reap >= self._reap_every:
            self.recover()
        token = uuid.uuid4()
        params = {
            "kinds": list(kinds),
            "limit": limit,
            "worker": self.worker_id,
            "host": self.machine or None,
            "pid": os.getpid(),
            "token": token,
            "lease": self.lease,
        }
        with self._conn() as conn:
            rows = conn.execute(_CLAIM, params).fetchall()
        if not rows:
            return []
        jobs = sorted((Job(int(r[0]), r[1], r[2], r[3], r[4]) for r in rows), key=lambda j: j.id)
        self._leases.add([job.id for job in jobs], token)
        self._start_heartbeat()
        return jobs

    def recover(self) -> int:
        """Put back jobs whose worker is gone: its lease expired (it stopped heartbeating),
        or it ran on this machine and its process no longer exists (found at once, without
        waiting for the lease).  Each counts an attempt.  Returns how many came back."""
        self._last_reap = time.monotonic()
        with self._conn() as conn:
            reaped = len(conn.execute(_REAP_EXPIRED).fetchall())
            dead = self._dead_local_workers(conn)
            if dead:
                params = {"host": self.machine, "pids": dead}
                reaped += len(conn.execute(_REAP_DEAD, params).fetchall())
        if reaped:
            log.warning("re-queued %d job(s) of workers that died or stalled", reaped)
        return reaped

    def _dead_local_workers(self, conn: Conn) -> list[int]:
        if not self.machine:
            return []
        rows = conn.execute(
            f"SELECT DISTINCT claimed_pid FROM {_T}"
            " WHERE status = 'running' AND claimed_host = %s AND claimed_pid <> %s",
            (self.machine, os.getpid()),
        ).fetchall()
        return dead_pids([int(r[0]) for r in rows if r[0] is not None])

    def renew_leases(self) -> int:
        """Extend the leases of the jobs this queue holds (the heartbeat calls it); leases
        that were lost meanwhile are dropped.  Returns how many were renewed."""
        held = self._leases.snapshot()
        if not held:
            return 0
        with self._conn() as conn:
            rows = conn.execute(
                f"UPDATE {_T} AS j SET lease_expires_at = now() + make_interval(secs => %s)"
                f" {_HELD} WHERE {_MINE} RETURNING j.id",
                (self.lease, *_split(held)),
            ).fetchall()
        renewed = {int(r[0]) for r in rows}
        # Not renewed: finished meanwhile (no longer held: nothing to say), or lost.
        lost = self._leases.forget([pair for pair in held if pair[0] not in renewed])
        if lost:
            log.warning("lost the lease of job(s) %s: another worker may run them now", lost)
        return len(renewed)

    def release(self) -> int:
        """Hand the jobs this queue holds back to the queue at once (no attempt used): for
        a worker that stops before finishing them."""
        held = self._leases.pop([job_id for job_id, _ in self._leases.snapshot()])
        if not held:
            return 0
        with self._conn() as conn:
            cursor = conn.execute(
                f"UPDATE {_T} AS j SET status = 'pending', lease_token = NULL,"
                f" lease_expires_at = NULL, run_after = now(), updated_at = now()"
                f" {_HELD} WHERE {_MINE}",
                _split(held),
            )
        return cursor.rowcount

    # --- finishing ---------------------------------------------------------------------

    def complete(self, ids: Sequence[int]) -> int:
        """Mark done the jobs among ``ids`` this queue still holds the lease of."""
        held = self._leases.pop(ids)
        if held:
            with self._conn() as conn:
                done = conn.execute(
                    f"UPDATE {_T} AS j SET status = 'done', lease_token = NULL,"
                    f" lease_expires_at = NULL, updated_at = now() {_HELD} WHERE {_MINE}"
                    " RETURNING j.id",
                    _split(held),
                ).fetchall()
        else:
            done = []
        if len(done) < len(ids):
            finished = {int(r[0]) for r in done}
            log.warning(
                "job(s) %s were not completed by %s: their lease was lost (another worker "
                "re-claimed them) or they were never claimed here",
                [i for i in ids if i not in finished],
                self.worker_id,
            )
        return len(done)

    def fail(self, job: Job, error: str, *, retry_in: float) -> bool:
        """Record a failure; the job retries after ``retry_in`` s until its attempts run out.

        Returns True when the job will be retried (or another worker holds it now: its lease
        here was lost), False when it is now ``failed``."""
        held = self._leases.pop([job.id])
        if not held:
            return True
        with self._conn() as conn:
            row = conn.execute(
                f"UPDATE {_T} AS j SET attempts = j.attempts + 1, last_error = %s,"
                " status = CASE WHEN j.attempts + 1 >= j.max_attempts"
                " THEN 'failed' ELSE 'pending' END,"
                " run_after = now() + make_interval(secs => %s), lease_token = NULL,"
                f" lease_expires_at = NULL, updated_at = now() {_HELD} WHERE {_MINE}"
                " RETURNING j.status",
                (error[:2000], retry_in, *_split(held)),
            ).fetchone()
        return row is None or row[0] != "failed"

    def defer(self, job: Job, reason: str, *, retry_in: float) -> None:
        """Put the job back without using up an attempt (it waits for something outside)."""
        held = self._leases.pop([job.id])
        if not held:
            return
        with self._conn() as conn:
            conn.execute(
                f"UPDATE {_T} AS j SET status = 'pending', last_error = %s,"
                " run_after = now() + make_interval(secs => %s), lease_token = NULL,"
                f" lease_expires_at = NULL, updated_at = now() {_HELD} WHERE {_MINE}",
                (reason[:2000], retry_in, *_split(held)),
            )

    # --- inspection and maintenance ------------------------------------------------------

    def retry_failed(self) -> int:
        with self._conn() as conn:
            cursor = conn.execute(
                f"UPDATE {_T} SET status = 'pending', attempts = 0, run_after = '-infinity',"
                " updated_at = now() WHERE status = 'failed'"
            )
        return cursor.rowcount

    def pending_count(self, kinds: Sequence[str] | None = None) -> int:
        # Two counts, so each uses its partial index (an OR would scan the done rows too).
        only = " AND kind = ANY(%(kinds)s)" if kinds else ""
        with self._conn() as conn:
            row = conn.execute(
                f"SELECT (SELECT count(*) FROM {_T} WHERE status = 'pending'{only})"
                f" + (SELECT count(*) FROM {_T} WHERE status = 'running'{only})",
                {"kinds": list(kinds or ())},
            ).fetchone()
        return int(row[0]) if row else 0

    def ready_count(self, kinds: Sequence[str] | None = None) -> int:
        only = " AND kind = ANY(%(kinds)s)" if kinds else ""
        with self._conn() as conn:
            row = conn.execute(
                f"SELECT (SELECT count(*) FROM {_T}"
                f" WHERE status = 'pending' AND run_after <= now(){only})"
                f" + (SELECT count(*) FROM {_T} WHERE status = 'running'{only})",
                {"kinds": list(kinds or ())},
            ).fetchone()
        return int(row[0]) if row else 0

    def summary(self) -> list[JobSummary]:
        with self._conn() as conn:
            rows = conn.execute(
                f"SELECT kind, status, count(*) FROM {_T} GROUP BY kind, status ORDER BY kind"
            ).fetchall()
        return [JobSummary(str(k), str(s), int(n)) for k, s, n in rows]

    def backlog(self) -> list[JobBacklog]:
        # Ages and waits are computed by the server: its clock stamped the rows.
        with self._conn() as conn:
            rows = conn.execute(
                f"SELECT kind, status, count(*), count(*) FILTER (WHERE run_after <= now()),"
                f" extract(epoch FROM now() - min(created_at))::float8,"
                f" extract(epoch FROM greatest(min(run_after), now()) - now())::float8,"
                f" (array_agg(last_error ORDER BY updated_at DESC)"
                f"  FILTER (WHERE last_error <> ''))[1]"
                f" FROM {_T} WHERE status <> 'done' GROUP BY kind, status ORDER BY kind, status"
            ).fetchall()
        return [
            JobBacklog(
                str(kind),
                str(status),
                int(count),
                int(ready) if status == "pending" else 0,
                max(0.0, float(age)),
                float(wait) if status == "pending" else 0.0,
                str(reason or ""),
            )
            for kind, status, count, ready, age, wait, reason in rows
        ]

    def failed(self, limit: int = 20) -> list[FailedJob]:
        with self._conn() as conn:
            rows = conn.execute(
                f"SELECT id, kind, attempts, last_error, extract(epoch FROM updated_at)::float8"
                f" FROM {_T} WHERE status = 'failed' ORDER BY updated_at DESC LIMIT %s",
                (limit,),
            ).fetchall()
        return [FailedJob(int(r[0]), r[1], r[2], r[3], float(r[4])) for r in rows]

    def purge_done(self, older_than: float) -> int:
        with self._conn() as conn:
            cursor = conn.execute(
                f"DELETE FROM {_T} WHERE status = 'done' AND updated_at < to_timestamp(%s)",
                (older_than,),
            )
        return cursor.rowcount

    def open_payloads(self, kind: str) -> list[dict[str, Any]]:
        with self._conn() as conn:
            rows = conn.execute(
                f"SELECT payload FROM {_T} WHERE kind = %s AND status IN ('pending', 'running')",
                (kind,),
            ).fetchall()
        return [dict(row[0]) for row in rows]

    def discard(self, kinds: Sequence[str]) -> int:
        with self._conn() as conn:
            cursor = conn.execute(
                f"DELETE FROM {_T} WHERE kind = ANY(%s) AND status <> 'done'", (list(kinds),)
            )
        return cursor.rowcount

    def rewrite_payloads(
        self, edit: Callable[[dict[str, Any]], dict[str, Any] | None]
    ) -> tuple[int, int]:
        """Pass every job's payload (any status) through ``edit``: a changed payload is stored,
        ``None`` deletes the job.  Used by ``forget``.  Returns (edited, deleted)."""
        changed: list[tuple[Jsonb, int]] = []
        dropped: list[int] = []
        with self._conn() as conn, conn.transaction():
            # Locked, so no worker finishes or re-queues a job between reading and writing it.
            with conn.cursor(name="shiyi_job_payloads") as rows:
                rows.execute(f"SELECT id, payload FROM {_T} ORDER BY id FOR UPDATE")
                for job_id, payload in rows:
                    new = edit(payload)
                    if new is None:
                        dropped.append(int(job_id))
                    elif new != payload:
                        changed.append((Jsonb(nul_free(new)), int(job_id)))
            with conn.cursor() as cursor:
                cursor.executemany(
                    f"UPDATE {_T} SET payload = %s, updated_at = now() WHERE id = %s", changed
                )
                cursor.execute(f"DELETE FROM {_T} WHERE id = ANY(%s)", (dropped,))
        return len(changed), len(dropped)

    def close(self) -> None:
        """Idempotent: stops the heartbeat, hands back unfinished jobs, closes the pool."""
        if self._closed:
            return
        if self._heartbeat is not None:
            self._heartbeat.stop()
        try:
            released = self.release()
            if released:
                log.info("handed %d unfinished job(s) back to the queue", released)
        except StorageError as exc:  # their leases expire instead
            log.warning("could not hand jobs back: %s", exc)
        finally:
            self._closed = True
            self._pool.close()


def _copy_escape(text: str) -> str:
    """A value for COPY's text format: backslash, tab and newlines escaped."""
    return text.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")


def _migrate(url: str, where: str, timeout: float) -> None:
    try:
        with psycopg.connect(url, connect_timeout=max(1, int(timeout))) as conn:
            migrate(conn, where)
    except psycopg.OperationalError as exc:
        raise unreachable("job queue", where, exc) from exc
    except psycopg.Error as exc:
        raise StorageError(f"could not set up the job queue in {where}: {exc}") from exc
