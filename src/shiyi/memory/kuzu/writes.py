"""Write steps of the graph, each run inside the caller's write transaction
(:class:`~shiyi.memory.kuzu.connection.KuzuGraph` holds the lock and the transaction):
committing through a checkpoint that waits for readers, new events with their sessions,
and the NEXT chains that keep a session's order."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from contextlib import suppress
from itertools import pairwise
from typing import Any

import kuzu

from shiyi.errors import StorageError
from shiyi.memory.kuzu import queries as q
from shiyi.memory.kuzu import schema
from shiyi.memory.models import EventRecord

log = logging.getLogger(__name__)

COPY_THRESHOLD = 1000
"""Event batches from this size go in with ``COPY ... FROM`` a pyarrow table."""
COPY_EDGES_THRESHOLD = 100
"""Edge batches from this size go in with ``COPY`` too (see :func:`sync_next_chains`)."""


def touch_params(ids: Sequence[str], at: float) -> list[dict[str, Any]]:
    return [{"id": key, "at": at} for key in dict.fromkeys(ids)]


CHECKPOINT_TIMED_OUT = "Timeout waiting for active transactions"


def commit(conn: kuzu.Connection) -> None:
    """COMMIT; a checkpoint that could not wait for readers does not undo it.

    Kuzu 0.11.3 forces a checkpoint when a transaction that wrote a vector-indexed table
    commits, after the commit is durable in its log.  If a reader holds a transaction past
    the checkpoint's wait (~5 s) the COMMIT statement raises, yet the rows are there
    (measured: the count read right after includes them) and the next commit checkpoints.
    Raising would make a worker job fail and retry work that is already stored."""
    try:
        schema.execute(conn, "COMMIT")
    except StorageError as exc:
        if CHECKPOINT_TIMED_OUT not in str(exc):
            raise
        log.info("graph committed; its checkpoint waits for readers: %s", exc)


def rollback(conn: kuzu.Connection) -> None:
    # A failed statement already rolls the transaction back in Kuzu; ROLLBACK then errors.
    with suppress(RuntimeError):
        conn.execute("ROLLBACK")


def existing(conn: kuzu.Connection, table: str, key: str, ids: list[str]) -> set[str]:
    rows = schema.execute(
        conn, f"MATCH (n:{table}) WHERE n.{key} IN $ids RETURN n.{key}", {"ids": ids}
    )
    return {str(r[0]) for r in rows}


def merge_sessions(conn: kuzu.Connection, events: list[EventRecord]) -> None:
    first: dict[str, EventRecord] = {}
    for event in sorted(events, key=lambda e: e.ts):
        first.setdefault(event.session_id, event)
    rows = [
        {"id": sid, "created_at": e.ts, "user_id": e.user_id, "agent_id": e.agent_id}
        for sid, e in first.items()
    ]
    schema.execute(conn, q.MERGE_SESSIONS, {"rows": rows})


def insert_events(conn: kuzu.Connection, events: list[EventRecord]) -> None:
    if len(events) >= COPY_THRESHOLD:
        schema.execute(conn, "COPY Event FROM $t", {"t": q.events_arrow(events)})
        schema.execute(conn, "COPY IN_SESSION FROM $t", {"t": q.in_session_arrow(events)})
        return
    schema.execute(conn, q.CREATE_EVENTS, {"rows": [q.event_row(e) for e in events]})
    schema.execute(conn, q.LINK_SESSIONS, {"ids": [e.id for e in events]})


def sync_next_chains(conn: kuzu.Connection, session_ids: set[str]) -> None:
    """Make NEXT follow (ts, iteration, segment) order in these sessions, touching only diffs.

    Recomputing the whole session keeps the chain right when imported or late events land
    between existing ones; appends (the common case) change one or two edges.
    """
    params = {"sids": sorted(session_ids)}
    order = q.chain_order(schema.execute(conn, q.SESSION_EVENTS, params))
    wanted = {(a, b) for ids in order.values() for a, b in pairwise(ids)}
    present = {(str(r[0]), str(r[1])) for r in schema.execute(conn, q.SESSION_NEXT, params)}
    stale = [list(p) for p in present - wanted]
    missing = [list(p) for p in wanted - present]
    if stale:
        schema.execute(conn, q.DELETE_NEXT, {"pairs": stale})
    if len(missing) >= COPY_EDGES_THRESHOLD:
        # UNWIND + MATCH by id scans the Event table per pair here (quadratic in bulk
        # imports: 2,000 events into 6,000 took 2.2 s); COPY resolves ids by primary key.
        schema.execute(conn, "COPY NEXT FROM $t", {"t": q.pairs_arrow(missing)})
    elif missing:
        schema.execute(conn, q.CREATE_NEXT, {"pairs": missing})
