"""The durable job queue: what the memory worker still has to do.

:class:`JobQueue` is the interface each backend implements:
:class:`~shiyi.memory.kuzu.jobs.SqliteJobQueue` keeps the jobs in a local SQLite file (the
embedded store: one owning process), and
:class:`~shiyi.memory.postgres.jobs.PostgresJobQueue` keeps them in PostgreSQL, where workers
on several machines claim them with leases.  :func:`~shiyi.memory.backends.open_job_queue`
picks the configured one.  Handlers are idempotent, so re-running a half-done job neither
loses nor duplicates anything.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol


@dataclass(slots=True, frozen=True)
class Job:
    id: int
    kind: str
    payload: dict[str, Any]
    attempts: int
    max_attempts: int


@dataclass(slots=True, frozen=True)
class JobSummary:
    kind: str
    status: str
    count: int


@dataclass(slots=True, frozen=True)
class JobBacklog:
    """The jobs of one kind in one unfinished state (pending, running or failed)."""

    kind: str
    status: str
    count: int
    ready: int
    """Of ``count``, how many may run now (pending ones past their retry time)."""
    oldest_age: float
    """Seconds since the oldest of them was queued."""
    retry_in: float
    """Seconds until the next deferred one may run again (0: one is ready now)."""
    reason: str
    """Why they wait: the latest deferral reason or error recorded ('' when none)."""


@dataclass(slots=True, frozen=True)
class FailedJob:
    id: int
    kind: str
    attempts: int
    last_error: str
    updated_at: float


class JobQueue(Protocol):
    """What the worker, the writer and the lifecycle need from a job queue."""

    def enqueue(self, kind: str, payload: dict[str, Any], *, max_attempts: int = 5) -> int:
        """Queue a job; returns its id."""
        ...

    def enqueue_once(self, kind: str, payload: dict[str, Any], *, max_attempts: int = 5) -> bool:
        """Queue unless a job of this kind with the same payload exists (in any state)."""
        ...

    def claim(self, kinds: Sequence[str], limit: int = 1) -> list[Job]:
        """Take up to ``limit`` ready jobs of these kinds, oldest first, for this process."""
        ...

    def complete(self, ids: Sequence[int]) -> int:
        """Mark claimed jobs done; returns how many were (a lost claim is not)."""
        ...

    def fail(self, job: Job, error: str, *, retry_in: float) -> bool:
        """Record a failure; True when the job will be retried, False when now ``failed``."""
        ...

    def defer(self, job: Job, reason: str, *, retry_in: float) -> None:
        """Put a claimed job back without using up an attempt."""
        ...

    def recover(self) -> int:
        """Put jobs claimed by dead processes back in the queue; returns how many."""
        ...

    def retry_failed(self) -> int: ...

    def pending_count(self, kinds: Sequence[str] | None = None) -> int:
        """Jobs pending or running (of these kinds)."""
        ...

    def ready_count(self, kinds: Sequence[str] | None = None) -> int:
        """Jobs claimable now or running (which may queue follow-ups): a draining worker
        is done when this is 0; jobs waiting out a retry delay do not count."""
        ...

    def summary(self) -> list[JobSummary]: ...

    def failed(self, limit: int = 20) -> list[FailedJob]: ...

    def backlog(self) -> list[JobBacklog]:
        """What is still to do, by kind and state, with how long and why it waits."""
        ...

    def purge_done(self, older_than: float) -> int:
        """Delete done jobs last updated before ``older_than`` (epoch seconds)."""
        ...

    def open_payloads(self, kind: str) -> list[dict[str, Any]]:
        """The payloads of this kind's jobs still to do (pending or running)."""
        ...

    def discard(self, kinds: Sequence[str]) -> int:
        """Delete the jobs of these kinds not yet done (work that can never happen, such as
        extraction turned off); returns how many."""
        ...

    def rewrite_payloads(
        self, edit: Callable[[dict[str, Any]], dict[str, Any] | None]
    ) -> tuple[int, int]:
        """Pass every payload through ``edit`` (None deletes the job); (edited, deleted)."""
        ...

    def close(self) -> None: ...
