"""``shiyi doctor``'s look at the session log beside the memory store: every logged message of
a run should be remembered (see :mod:`shiyi.memory.intake.log_check`), and a log that cannot be
opened is reported with its fix instead of failing the whole check."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from shiyi.config import Settings
    from shiyi.memory.intake.log_check import LogAgreement
    from shiyi.memory.kuzu.doctor import DoctorOptions, DoctorReport
    from shiyi.memory.models import EventRecord
    from shiyi.sessions.log import SessionLog

LOG = "sessions.sqlite3"
STORE_FILES = ("graph.kuzu", "memory.sqlite3")


def check_session_log(settings: Settings, report: DoctorReport, options: DoctorOptions) -> None:
    """Compare the log with the memory store (left alone when the store itself is damaged:
    its findings come first)."""
    from shiyi.errors import StorageError
    from shiyi.sessions.log import SessionLog

    path = settings.sessions_db
    if not path.exists() or any(f.where in STORE_FILES for f in report.remaining):
        return
    try:
        log = SessionLog(path)
    except StorageError as exc:
        report.add(LOG, str(exc))
        return
    try:
        agreement = _agreement(settings, log, options)
    finally:
        log.close()
    _report(agreement, report, options.repairing, settings)


def _agreement(settings: Settings, log: SessionLog, options: DoctorOptions) -> LogAgreement:
    from shiyi.memory.intake.log_check import check_log
    from shiyi.memory.kuzu.jobs import SqliteJobQueue
    from shiyi.memory.kuzu.store import EmbeddedStore

    store = EmbeddedStore(
        settings.memory_dir,
        dimension=options.dimension,
        embedding_model=options.embedding_model,
        lock_timeout=options.lock_timeout,
    )
    try:
        jobs = SqliteJobQueue(store.sqlite_path)
        try:
            who = settings.memory
            return check_log(
                log, store, jobs, store.event_rows.ids(), user_id=who.user_id,
                agent_id=who.agent_id,
            )  # fmt: skip
        finally:
            jobs.close()
    finally:
        store.close()


def _report(
    agreement: LogAgreement, report: DoctorReport, repair: bool, settings: Settings
) -> None:
    line = f"{agreement.messages:,} logged messages of runs"
    if agreement.foreign:
        line += (
            f"; memory also holds {agreement.foreign:,} turns of messages this log no longer "
            "has (an older log moved aside or lost, or deleted sessions): they stay "
            "searchable, and resuming their sessions needs that log back"
        )
    report.counts.append((LOG, line))
    if agreement.missing:
        report.add(
            LOG,
            f"{agreement.rows(agreement.missing):,} logged messages are not in memory "
            "(neither stored nor queued)",
            (lambda: _queue(settings, agreement.missing)) if repair else None,
        )
    if agreement.taken:
        report.add(
            LOG,
            f"{agreement.rows(agreement.taken):,} logged messages never reached memory: "
            "their ids are held by turns of an older session log (the log was moved aside "
            "or lost while shiyi named events by log row alone)",
            (lambda: _queue(settings, agreement.taken)) if repair else None,
        )


def _queue(settings: Settings, events: list[EventRecord]) -> str:
    from shiyi.memory.intake.log_check import LogAgreement, queue_repairs
    from shiyi.memory.kuzu.jobs import SqliteJobQueue
    from shiyi.memory.kuzu.store import SQLITE_NAME

    jobs = SqliteJobQueue(settings.memory_dir / SQLITE_NAME)
    try:
        queued = queue_repairs(jobs, LogAgreement(taken=events))
    finally:
        jobs.close()
    return (
        f"queued {queued:,} messages under ids of this log; the worker stores them at the "
        "next start, or now with `shiyi memory jobs --run`"
    )
