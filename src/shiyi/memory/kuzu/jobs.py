"""The embedded store's job queue, in a local SQLite file.

Jobs survive ``kill -9``: a job claimed by a process that died is ``running`` in the file,
and :meth:`SqliteJobQueue.recover` puts it back to ``pending`` when the store is opened again
(the store lock guarantees no other live process is working on it).
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from shiyi.errors import StorageError
from shiyi.memory.jobs import FailedJob, Job, JobBacklog, JobSummary

_SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL,
    payload TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'pending',
    attempts INTEGER NOT NULL DEFAULT 0,
    max_attempts INTEGER NOT NULL DEFAULT 5,
    run_after REAL NOT NULL DEFAULT 0,
    last_error TEXT NOT NULL DEFAULT '',
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS jobs_ready ON jobs(status, kind, run_after);
"""


class SqliteJobQueue:
    """Thread-safe: one connection guarded by a lock (jobs are tiny; contention is low)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        try:
            self._db = sqlite3.connect(
                path, timeout=10.0, isolation_level=None, check_same_thread=False
            )
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise StorageError(
                f"the job queue {path} cannot be opened ({exc}); if it is corrupt, move it "
                "aside and run `shiyi memory reindex` to rebuild derived data."
            ) from exc

    def enqueue(self, kind: str, payload: dict[str, Any], *, max_attempts: int = 5) -> int:
        now = time.time()
        with self._lock:
            cursor = self._db.execute(
                "INSERT INTO jobs (kind, payload, max_attempts, created_at, updated_at)"
                " VALUES (?, ?, ?, ?, ?)",
                (kind, json.dumps(payload, ensure_ascii=False), max_attempts, now, now),
            )
        return int(cursor.lastrowid or 0)

    def enqueue_once(self, kind: str, payload: dict[str, Any], *, max_attempts: int = 5) -> bool:
        """Enqueue unless a job of this kind with the same payload exists (in any state), so a
        re-run handler that queues follow-up work does not queue it twice."""
        text = json.dumps(payload, ensure_ascii=False, sort_keys=True)
        now = time.time()
        with self._lock:
            cursor = self._db.execute(
                "INSERT INTO jobs (kind, payload, max_attempts, created_at, updated_at)"
                " SELECT ?, ?, ?, ?, ? WHERE NOT EXISTS"
                " (SELECT 1 FROM jobs WHERE kind = ? AND payload = ?)",
                (kind, text, max_attempts, now, now, kind, text),
            )
        return cursor.rowcount > 0

    def claim(self, kinds: Sequence[str], limit: int = 1) -> list[Job]:
        """Take up to ``limit`` ready jobs of these kinds (oldest first) and mark them running."""
        now = time.time()
        marks = ",".join("?" for _ in kinds)
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                rows = self._db.execute(
                    f"SELECT id, kind, payload, attempts, max_attempts FROM jobs"
                    f" WHERE status='pending' AND run_after <= ? AND kind IN ({marks})"
                    f" ORDER BY id LIMIT ?",
                    (now, *kinds, limit),
                ).fetchall()
                self._db.executemany(
                    "UPDATE jobs SET status='running', updated_at=? WHERE id=?",
                    [(now, row[0]) for row in rows],
                )
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
        return [Job(r[0], r[1], json.loads(r[2]), r[3], r[4]) for r in rows]

    def complete(self, ids: Sequence[int]) -> int:
        with self._lock:
            cursor = self._db.executemany(
                "UPDATE jobs SET status='done', updated_at=? WHERE id=? AND status='running'",
                [(time.time(), job_id) for job_id in ids],
            )
        return cursor.rowcount

    def fail(self, job: Job, error: str, *, retry_in: float) -> bool:
        """Record a failure; the job retries after ``retry_in`` s until its attempts run out.

        Returns True when the job will be retried, False when it is now ``failed``.
        """
        attempts = job.attempts + 1
        final = attempts >= job.max_attempts
        with self._lock:
            self._db.execute(
                "UPDATE jobs SET status=?, attempts=?, last_error=?, run_after=?, updated_at=?"
                " WHERE id=?",
                (
                    "failed" if final else "pending",
                    attempts,
                    error[:2000],
                    time.time() + retry_in,
                    time.time(),
                    job.id,
                ),
            )
        return not final

    def defer(self, job: Job, reason: str, *, retry_in: float) -> None:
        """Put the job back without using up an attempt: it waits for something outside it
        (an extraction model that is not configured or not reachable yet)."""
        with self._lock:
            self._db.execute(
                "UPDATE jobs SET status='pending', last_error=?, run_after=?, updated_at=?"
                " WHERE id=?",
                (reason[:2000], time.time() + retry_in, time.time(), job.id),
            )

    def recover(self) -> int:
        """Put jobs left ``running`` by a dead process back in the queue."""
        with self._lock:
            cursor = self._db.execute(
                "UPDATE jobs SET status='pending', updated_at=? WHERE status='running'",
                (time.time(),),
            )
        return cursor.rowcount

    def retry_failed(self) -> int:
        with self._lock:
            cursor = self._db.execute(
                "UPDATE jobs SET status='pending', attempts=0, run_after=0, updated_at=?"
                " WHERE status='failed'",
                (time.time(),),
            )
        return cursor.rowcount

    def pending_count(self, kinds: Sequence[str] | None = None) -> int:
        query = "SELECT COUNT(*) FROM jobs WHERE status IN ('pending', 'running')"
        params: tuple[str, ...] = ()
        if kinds:
            query += f" AND kind IN ({','.join('?' for _ in kinds)})"
            params = tuple(kinds)
        with self._lock:
            return int(self._db.execute(query, params).fetchone()[0])

    def ready_count(self, kinds: Sequence[str] | None = None) -> int:
        query = (
            "SELECT COUNT(*) FROM jobs"
            " WHERE (status='running' OR (status='pending' AND run_after <= ?))"
        )
        params: tuple[object, ...] = (time.time(),)
        if kinds:
            query += f" AND kind IN ({','.join('?' for _ in kinds)})"
            params += tuple(kinds)
        with self._lock:
            return int(self._db.execute(query, params).fetchone()[0])

    def summary(self) -> list[JobSummary]:
        with self._lock:
            rows = self._db.execute(
                "SELECT kind, status, COUNT(*) FROM jobs GROUP BY kind, status ORDER BY kind"
            ).fetchall()
        return [JobSummary(*row) for row in rows]

    def backlog(self) -> list[JobBacklog]:
        now = time.time()
        with self._lock:
            rows = self._db.execute(
                "SELECT kind, status, COUNT(*), SUM(run_after <= ?), MIN(created_at),"
                " MIN(run_after), (SELECT last_error FROM jobs AS j WHERE j.kind = jobs.kind"
                "  AND j.status = jobs.status AND j.last_error <> ''"
                "  ORDER BY j.updated_at DESC LIMIT 1)"
                " FROM jobs WHERE status <> 'done' GROUP BY kind, status ORDER BY kind, status",
                (now,),
            ).fetchall()
        return [
            JobBacklog(
                kind,
                status,
                count,
                ready if status == "pending" else 0,
                max(0.0, now - oldest),
                max(0.0, next_try - now) if status == "pending" else 0.0,
                reason or "",
            )
            for kind, status, count, ready, oldest, next_try, reason in rows
        ]

    def failed(self, limit: int = 20) -> list[FailedJob]:
        with self._lock:
            rows = self._db.execute(
                "SELECT id, kind, attempts, last_error, updated_at FROM jobs"
                " WHERE status='failed' ORDER BY updated_at DESC LIMIT ?",
                (limit,),
            ).fetchall()
        return [FailedJob(*row) for row in rows]

    def purge_done(self, older_than: float) -> int:
        with self._lock:
            cursor = self._db.execute(
                "DELETE FROM jobs WHERE status='done' AND updated_at < ?", (older_than,)
            )
        return cursor.rowcount

    def open_payloads(self, kind: str) -> list[dict[str, Any]]:
        with self._lock:
            rows = self._db.execute(
                "SELECT payload FROM jobs WHERE kind=? AND status IN ('pending', 'running')",
                (kind,),
            ).fetchall()
        return [json.loads(row[0]) for row in rows]

    def discard(self, kinds: Sequence[str]) -> int:
        marks = ",".join("?" for _ in kinds)
        with self._lock:
            cursor = self._db.execute(
                f"DELETE FROM jobs WHERE kind IN ({marks}) AND status <> 'done'", tuple(kinds)
            )
        return cursor.rowcount

    def rewrite_payloads(
        self, edit: Callable[[dict[str, Any]], dict[str, Any] | None]
    ) -> tuple[int, int]:
        """Pass every job's payload (any status) through ``edit``: a changed payload is stored,
        ``None`` deletes the job.  Used by ``forget`` to take forgotten memories out of the
        queue; deleted bytes are zeroed (``secure_delete``).  Returns (edited, deleted)."""
        with self._lock:
            self._db.execute("PRAGMA secure_delete=ON")
            rows = self._db.execute("SELECT id, payload FROM jobs").fetchall()
            changed: list[tuple[str, float, int]] = []
            dropped: list[tuple[int]] = []
            for job_id, raw in rows:
                payload = json.loads(raw)
                new = edit(payload)
                if new is None:
                    dropped.append((job_id,))
                elif new != payload:
                    changed.append((json.dumps(new, ensure_ascii=False), time.time(), job_id))
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.executemany("UPDATE jobs SET payload=?, updated_at=? WHERE id=?", changed)
                self._db.executemany("DELETE FROM jobs WHERE id=?", dropped)
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
        return len(changed), len(dropped)

    def close(self) -> None:
        with self._lock:
            self._db.close()
