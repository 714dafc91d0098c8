"""Fixtures of the memory page's tests: the API server of ``tests/interfaces/server`` and
helpers that seed memories through the real Memory API and store."""

from __future__ import annotations

import time
import uuid

from shiyi.memory.lifecycle.observations import Observation
from shiyi.memory.models import EventRecord, FactKind, FactRecord, Scope
from shiyi.memory.scopes import Viewer
from shiyi.memory.service import Memory
from tests.interfaces.server.conftest import live  # noqa: F401  (a shared fixture)


def observe(
    memory: Memory,
    value: str,
    *,
    key: str = "",
    confidence: float = 0.9,
    kind: FactKind = "semantic",
    scope: Scope = "user",
    about: list[str] | None = None,
    anchor: str = "",
    source_events: list[str] | None = None,
    viewer: Viewer | None = None,
    now: float | None = None,
) -> FactRecord:
    """A fact as extraction writes it (short term, confidence bands, conflicts)."""
    observation = Observation(
        key=key,
        value=value,
        confidence=confidence,
        kind=kind,
        scope=scope,
        about=list(about or []),
        anchor=anchor,
        source_events=list(source_events or []),
    )
    report = memory.lifecycle.facts.write([observation], viewer or memory.viewer, now=now)
    assert report.written, report
    return memory.store.get_facts(report.written[:1])[0]


def add_turns(
    memory: Memory,
    session_id: str,
    texts: list[tuple[str, str]],
    *,
    user_id: str = "default",
    start: float | None = None,
) -> list[EventRecord]:
    """Events of one run of ``session_id`` (role, text), one iteration each, in the graph."""
    run_id = f"run_{uuid.uuid4().hex[:8]}"
    base = time.time() - 600 if start is None else start
    events = [
        EventRecord(
            id=f"ev_{uuid.uuid4().hex[:10]}",
            session_id=session_id,
            run_id=run_id,
            ts=base + i,
            role=role,
            content=text,
            segment_type="user_message" if role == "user" else "response",
            iteration=i + 1,
            segment=0,
            user_id=user_id,
        )
        for i, (role, text) in enumerate(texts)
    ]
    memory.store.add_events(events)
    return events
