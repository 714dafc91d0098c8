"""Which session and event ids an imported conversation may use.

Imported ids come from the file (``conv-26:D1:3``, ``imp_<sha1(session, line)>``), so two
users who import the same file, or a user who picks another's session name on purpose, would
name records that already exist.  The stores keep the first record of an id, so the second
import would be dropped silently; worse, a session holding two owners' turns would hand one
owner's words to the other's extraction window.  A conversation is therefore written under
its own names only while nothing of another owner's uses them; otherwise the session, its
runs and its event ids get the importer's tag (``conv-26~1a2b3c4d:D1:3``).  The tag is the
same on every run, so importing the same file twice still yields the same ids.

"Uses" covers every kind of record an id names: events stored or still queued (of another
owner) and facts (of anyone: an event under a fact's id would hide the fact from reads, and
deleting the event would delete the fact).  Names with the shape of the ids shiyi makes itself
(``ev_...``, ``fact_...``, ``ses_...``, ``run_...``; :func:`is_internal_id`) are never used
as they are, even while free: a chat's next message would find its id already taken and be
lost.  The tag's ``~`` keeps every tagged name out of that shape.
"""

from __future__ import annotations

import dataclasses
import hashlib
import threading
from collections.abc import Sequence
from dataclasses import dataclass

from shiyi.errors import Conflict, ImportFormatError
from shiyi.memory.intake.segments import is_internal_id
from shiyi.memory.intake.worker import INGEST
from shiyi.memory.jobs import JobQueue
from shiyi.memory.models import EventRecord
from shiyi.memory.protocol import MemoryStore
from shiyi.memory.scopes import Viewer

_ATTEMPTS = 4  # the plain names, the tag, and two numbered tags (names squatted on purpose)

CLAIMS = threading.Lock()
"""Held from a claim's check until its turns are queued: two imports claiming the same names
at once would both find them free, and the store keeps only the first record of an id."""


@dataclass(frozen=True, slots=True)
class ClaimedConversation:
    """One conversation as it will be stored."""

    session_id: str
    original: str
    """The session's name in the file."""
    events: list[EventRecord]

    @property
    def renamed(self) -> bool:
        return self.session_id != self.original


def claim_conversation(
    store: MemoryStore,
    session_id: str,
    events: Sequence[EventRecord],
    who: Viewer,
    jobs: JobQueue | None = None,
) -> ClaimedConversation:
    """``events`` (one conversation, ``session_id``'s) owned by ``who``, under names that no
    other owner's record (stored, or queued in ``jobs``) uses and no internal id can take.
    Raises :class:`Conflict` when even the tagged names are taken, :class:`ImportFormatError`
    for a turn whose run is not the session's (``<session>:...``).  Hold :data:`CLAIMS` until
    the claimed turns are queued."""
    check_runs(session_id, events)
    owned = [
        dataclasses.replace(e, session_id=session_id, user_id=who.user_id, agent_id=who.agent_id)
        for e in events
    ]
    for attempt in range(_ATTEMPTS):
        tagged = session_id + importer_tag(who, attempt) if attempt else session_id
        candidate = [_renamed(e, session_id, tagged, attempt, who) for e in owned]
        if not _reserved(tagged, candidate) and not _taken(store, jobs, tagged, candidate, who):
            return ClaimedConversation(tagged, session_id, candidate)
    raise Conflict(
        f"cannot import conversation {session_id!r}: other users' memories use its names; "
        "rename its session in the file"
    )


def check_runs(session_id: str, events: Sequence[EventRecord]) -> None:
    """Runs are named inside their session, so claiming the session claims its runs (an
    archive reads a whole run: a run shared with another owner would mix their turns)."""
    for event in events:
        if not event.run_id.startswith(session_id + ":"):
            raise ImportFormatError(
                f"turn {event.id!r}: run {event.run_id!r} must start with its session "
                f"{session_id!r} and a colon, like {session_id}:2024-05-01"
            )


def importer_tag(who: Viewer, attempt: int = 1) -> str:
    """``~`` and 8 hex digits of the owner's hash (and ``-n`` on later attempts)."""
    digest = hashlib.sha1(f"{who.user_id}\0{who.agent_id}".encode()).hexdigest()[:8]
    return f"~{digest}" if attempt <= 1 else f"~{digest}-{attempt}"


def _renamed(
    event: EventRecord, session_id: str, tagged: str, attempt: int, who: Viewer
) -> EventRecord:
    if not attempt:
        return event
    suffix = importer_tag(who, attempt)

    def retag(value: str) -> str:  # keep the file's id readable: conv-26~tag:D1:3
        inside = value.startswith(session_id + ":")
        return tagged + value[len(session_id) :] if inside else value + suffix

    return dataclasses.replace(
        event, session_id=tagged, run_id=retag(event.run_id), id=retag(event.id)
    )


def _reserved(session_id: str, events: Sequence[EventRecord]) -> bool:
    """Whether a name has the shape of an id shiyi makes (which it may make next)."""
    names = [session_id, *(e.run_id for e in events), *(e.id for e in events)]
    return any(is_internal_id(name) for name in names)


def _taken(
    store: MemoryStore,
    jobs: JobQueue | None,
    session_id: str,
    events: Sequence[EventRecord],
    who: Viewer,
) -> bool:
    """Whether another owner's event (stored or queued) or anyone's fact uses a name."""
    ids = [e.id for e in events]
    mine = (who.user_id, who.agent_id)
    if store.event_owners(ids, session_id) - {mine}:
        return True
    if store.get_facts(ids):
        return True
    return jobs is not None and bool(_queued_owners(jobs, set(ids), session_id) - {mine})


def _queued_owners(jobs: JobQueue, ids: set[str], session_id: str) -> set[tuple[str, str]]:
    """The owners of queued, not yet stored events with one of ``ids`` or in the session."""
    return {
        (str(raw.get("user_id")), str(raw.get("agent_id")))
        for payload in jobs.open_payloads(INGEST)
        for raw in payload.get("events", [])
        if raw.get("id") in ids or raw.get("session_id") == session_id
    }
