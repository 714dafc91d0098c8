"""On start, memory catches up with the session log.

The agent logs a message and then queues it for memory (two SQLite files, two commits): a
process killed between the two leaves a logged message memory never hears of.  The log is
the source of truth, and event ids derive from its rows (``ev_{epoch}_{row}_{index}``, see
:mod:`shiyi.memory.intake.segments`), so on start
the messages logged since the last reconciliation are compared with the graph and the
ingest queue, and what neither holds is queued again.  Ingest is idempotent, so a message
counted missing by a race is stored once anyway.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

from shiyi.memory.intake.segments import to_events
from shiyi.memory.intake.worker import INGEST, event_payload
from shiyi.memory.jobs import JobQueue
from shiyi.memory.models import EventRecord
from shiyi.memory.protocol import MemoryStore
from shiyi.sessions.log import SessionLog
from shiyi.sessions.records import LoggedMessage, LogIdentity, RunMessageOwner

log = logging.getLogger(__name__)

WATERMARK = "memory_reconciled_row"
"""Session-log meta key: every message row up to this one is in memory or queued for it."""
_CHUNK = 500


@dataclass(slots=True, frozen=True)
class Reconciliation:
    checked: int
    """Logged messages compared (those after the watermark)."""
    queued: int
    """Messages memory had neither stored nor queued: queued again now."""
    events: int


def reconcile(
    log_: SessionLog,
    store: MemoryStore,
    jobs: JobQueue,
    *,
    user_id: str = "default",
    agent_id: str = "shiyi",
) -> Reconciliation:
    """Queue the logged messages memory lacks, then move the watermark to the log's end.

    Must run before this process logs anything (on start, holding the data dir's lock)."""
    after = int(log_.get_meta(WATERMARK) or 0)
    end = log_.last_message_id()
    if end <= after:
        return Reconciliation(0, 0, 0)
    rows = log_.run_messages_after(after)
    expected = expected_events(rows, after, user_id, agent_id, log_.identity)
    missing = _missing(expected, store, jobs)
    for start in range(0, len(missing), _CHUNK):
        jobs.enqueue(INGEST, event_payload(missing[start : start + _CHUNK]))
    queued = len({e.id.rsplit("_", 1)[0] for e in missing})
    if queued:
        log.warning("memory: reconciled %d logged messages it had not stored", queued)
    log_.set_meta(WATERMARK, str(end))
    return Reconciliation(len(expected), queued, len(missing))


def mark_reconciled(log_: SessionLog) -> None:
    """On a clean close: every message this process logged was queued in the same call, so
    the next start need not compare them (a kill skips this, and the next start does)."""
    log_.set_meta(WATERMARK, str(log_.last_message_id()))


def expected_events(
    rows: Sequence[tuple[RunMessageOwner, LoggedMessage]],
    after: int,
    user_id: str,
    agent_id: str,
    identity: LogIdentity,
) -> dict[int, list[EventRecord]]:
    """The events each message after ``after`` became, segments numbered as the writer
    numbers them: continuing through the messages of the same run and iteration.  Owned
    by the session's owner; a session from before owners were logged ('default') by the
    configured user, as the writer recorded it."""
    next_segment: dict[tuple[str, int], int] = {}
    out: dict[int, list[EventRecord]] = {}
    for owner, logged in rows:
        legacy = owner.user_id == "default"
        assert logged.run_id is not None  # only runs' messages are recorded
        key = (logged.run_id, logged.iteration)
        events = to_events(
            logged.message,
            message_id=logged.id,
            session_id=owner.session_id,
            run_id=logged.run_id,
            iteration=logged.iteration,
            first_segment=next_segment.get(key, 0),
            ts=logged.created_at,
            user_id=user_id if legacy else owner.user_id,
            agent_id=agent_id if legacy else owner.agent_id,
            log_epoch=identity.epoch_for(logged.id),
        )
        if events:
            next_segment[key] = events[-1].segment + 1
            if logged.id > after:
                out[logged.id] = events
    return out


def _missing(
    expected: dict[int, list[EventRecord]], store: MemoryStore, jobs: JobQueue
) -> list[EventRecord]:
    queued = {
        str(raw.get("id")) for payload in jobs.open_payloads(INGEST) for raw in payload["events"]
    }
    wanted = [e for events in expected.values() for e in events if e.id not in queued]
    stored: set[str] = set()
    for start in range(0, len(wanted), _CHUNK):
        ids = [e.id for e in wanted[start : start + _CHUNK]]
        stored.update(e.id for e in store.get_events(ids))
    return [e for e in wanted if e.id not in stored]
