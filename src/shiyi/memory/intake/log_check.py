"""Does memory hold what the session log says was said?  (``shiyi doctor``)

Reconciliation (:mod:`shiyi.memory.intake.reconcile`) queues what a kill lost on every start,
but only for rows after its watermark, and only by id: it cannot see a message whose id another turn
already holds.  That happened when a session log was moved aside or lost before logs had an
epoch (:mod:`shiyi.memory.intake.segments`): the new log's rows started at 1 again, their legacy ids
``ev_<row>_<segment>`` were the old log's turns', and the new messages were never stored.
This check compares every logged message of a run with memory:

* *missing*: neither stored nor queued (repair: queue it);
* *taken*: its id holds another turn (repair: store it under the log's epoch id, which no
  turn of another log can hold);
* *foreign*: memory's turns made from rows of another session log (moved aside or lost).
  They stay searchable, but their sessions cannot be resumed without that log: not a fault,
  said so the user knows where those conversations came from.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from shiyi.memory.intake.reconcile import expected_events
from shiyi.memory.intake.segments import event_id, parse_event_id
from shiyi.memory.intake.worker import INGEST, event_payload
from shiyi.memory.jobs import JobQueue
from shiyi.memory.models import EventRecord
from shiyi.memory.protocol import MemoryStore
from shiyi.sessions.log import SessionLog

_CHUNK = 500


@dataclass(slots=True)
class LogAgreement:
    messages: int = 0
    """Logged messages of runs compared with memory."""
    missing: list[EventRecord] = field(default_factory=list)
    taken: list[EventRecord] = field(default_factory=list)
    """Expected events whose id another turn holds, already renamed to their epoch id."""
    foreign: int = 0
    """Memory's turns made from rows of another session log."""

    def rows(self, events: Sequence[EventRecord]) -> int:
        """How many messages ``events`` (some of ``missing`` or ``taken``) come from."""
        return len({e.id.rsplit("_", 1)[0] for e in events})


def check_log(
    log: SessionLog,
    store: MemoryStore,
    jobs: JobQueue,
    stored_ids: Iterable[str],
    *,
    user_id: str = "default",
    agent_id: str = "shiyi",
) -> LogAgreement:
    """Compare every logged message of a run with ``store`` (``stored_ids``: all its event
    ids) and the queue; ``user_id``/``agent_id`` own sessions logged before owners were."""
    identity = log.identity
    by_row = expected_events(log.run_messages_after(0), 0, user_id, agent_id, identity)
    expected = [e for events in by_row.values() for e in events]
    queued = {str(raw.get("id")) for p in jobs.open_payloads(INGEST) for raw in p["events"]}
    found = _stored(store, [e.id for e in expected])
    report = LogAgreement(messages=len(by_row))
    ours: set[str] = set()
    taken: list[EventRecord] = []
    for event in expected:
        held = found.get(event.id)
        if held is None:
            if event.id not in queued:
                report.missing.append(event)
        elif _same_turn(held, event):
            ours.add(event.id)
        else:
            taken.append(_renamed(event, identity.epoch))
    renamed = _stored(store, [e.id for e in taken])
    for event in taken:
        if event.id in renamed and _same_turn(renamed[event.id], event):
            ours.add(event.id)  # an earlier repair stored it under its epoch id
        elif event.id not in queued:
            report.taken.append(event)
    report.foreign = sum(1 for i in stored_ids if i not in ours and parse_event_id(i))
    return report


def queue_repairs(jobs: JobQueue, agreement: LogAgreement) -> int:
    """Queue the missing and the renamed taken turns; returns how many messages."""
    events = [*agreement.missing, *agreement.taken]
    for start in range(0, len(events), _CHUNK):
        jobs.enqueue(INGEST, event_payload(events[start : start + _CHUNK]))
    return agreement.rows(events)


def _stored(store: MemoryStore, ids: Sequence[str]) -> dict[str, EventRecord]:
    found: dict[str, EventRecord] = {}
    for start in range(0, len(ids), _CHUNK):
        found.update((e.id, e) for e in store.get_events(ids[start : start + _CHUNK]))
    return found


def _same_turn(held: EventRecord, expected: EventRecord) -> bool:
    """Sessions (and runs) are named at random by each log: an older log's turn under the
    same id is in another session."""
    return (held.session_id, held.run_id) == (expected.session_id, expected.run_id)


def _renamed(event: EventRecord, epoch: str) -> EventRecord:
    """The event under its log's epoch id (a legacy id holding another log's turn)."""
    parsed = parse_event_id(event.id)
    if parsed is None or parsed.epoch:
        return event  # already an epoch id: nothing fresher to give it
    return dataclasses.replace(event, id=event_id(parsed.row, parsed.segment, epoch))
