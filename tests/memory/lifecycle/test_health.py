"""Memory health: exact counts over a real store, on both backends."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest

from shiyi.config import load_settings
from shiyi.memory.lifecycle.health import MemoryHealth, health_lines
from shiyi.memory.models import EventRecord, FactRecord
from shiyi.memory.service import Memory


@pytest.fixture
def memory(tmp_path: Path, memory_store: str) -> Iterator[Memory]:
    """Once per backend (``memory_store``: 'embedded' or a PostgreSQL URL)."""
    settings = load_settings(cwd=tmp_path, workspace=tmp_path)
    settings.memory.store = memory_store
    opened = Memory.open(settings, start_worker=False)
    yield opened
    opened.close()


FACTS = [
    FactRecord(id="f1", key="a", value="tabs", kind="preference", confidence=0.9),
    FactRecord(id="f2", key="b", value="spaces", kind="preference", confidence=0.7),
    FactRecord(
        id="f3",
        key="c",
        value="make release",
        kind="procedural",
        tier="long",
        confidence=1.0,
        scope="workspace",
    ),
    FactRecord(
        id="f4",
        key="b",
        value="four spaces",
        kind="preference",
        status="pending",
        confidence=0.6,
        conflicts_with="f2",
    ),
    FactRecord(id="f5", key="d", value="buy milk", kind="todo", status="expired", confidence=0.8),
    FactRecord(
        id="f6",
        key="e",
        value="old",
        kind="semantic",
        status="superseded",
        tier="long",
        scope="agent",
        confidence=0.5,
    ),
    FactRecord(id="f7", key="f", value="maybe", kind="semantic", status="pending", confidence=0.58),
]


def test_health_counts_facts_by_kind_tier_scope_and_status(memory: Memory) -> None:
    memory.store.upsert_facts(FACTS)
    memory.store.add_events(
        [
            EventRecord(
                id=f"e{i}",
                session_id="s1",
                run_id="r1",
                ts=1_700_000_000.0 + i,
                role="user",
                content=f"message {i}",
                segment_type="user_message",
            )
            for i in range(3)
        ]
    )
    memory.jobs.enqueue("embed", {"node": "fact", "ids": ["f1"]})
    failing = memory.jobs.enqueue("embed", {"node": "fact", "ids": ["f2"]}, max_attempts=1)
    claimed = memory.jobs.claim(["embed"], limit=2)
    assert (
        memory.jobs.fail(next(j for j in claimed if j.id == failing), "boom", retry_in=0) is False
    )

    health = memory.health()
    assert [rate.name for rate in health.caches] == [
        "retrieval results", "embeddings", "summaries", "system prompt"
    ]  # fmt: skip

    assert dataclasses.replace(health, caches=[]) == MemoryHealth(
        facts=7,
        by_kind={"preference": 3, "procedural": 1, "semantic": 2, "todo": 1},
        by_tier={"long": 2, "short": 5},
        by_scope={"agent": 1, "user": 5, "workspace": 1},
        by_status={"active": 3, "expired": 1, "pending": 2, "superseded": 1},
        active_confidence=round((0.9 + 0.7 + 1.0) / 3, 4),
        expired=1,
        pending=2,
        open_conflicts=1,
        events=3,
        entities=0,
        relations=0,
        sessions=1,
        embedded={"events": 0, "facts": 0, "entities": 0},
        keyword_docs=10,
        jobs_pending=1,  # the other one is running (claimed), which counts as pending
        jobs_failed=1,
    )
    rows = [line.split() for line in health_lines(health)]
    assert ["open", "conflicts", "1"] in rows
    assert [
        "by",
        "status",
        "active",
        "3",
        "expired",
        "1",
        "pending",
        "2",
        "superseded",
        "1",
    ] in rows


def test_health_of_an_empty_store_has_no_confidence(memory: Memory) -> None:
    health = memory.health()
    assert (health.facts, health.events, health.active_confidence) == (0, 0, None)
    assert ["active", "confidence", "-"] in [line.split() for line in health_lines(health)]
