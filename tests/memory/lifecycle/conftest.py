"""Lifecycle fixtures: a real store on disk, the real embedder, a scripted extraction model."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from shiyi.config import Settings, load_settings
from shiyi.llm.scripted import ScriptedModel, ScriptedReply, ScriptStep, call
from shiyi.memory.models import EventRecord, FactRecord
from shiyi.memory.service import Memory
from tests.support.records import seed

# Monday 2026-11-23 10:00 UTC.
MONDAY = 1_795_428_000.0


def extraction(
    facts: list[dict[str, Any]] | None = None,
    entities: list[dict[str, Any]] | None = None,
    relations: list[dict[str, Any]] | None = None,
) -> ScriptedReply:
    """A scripted ``record_memories`` tool call."""
    arguments = {"entities": entities or [], "relations": relations or [], "facts": facts or []}
    return ScriptedReply(tool_calls=(call("record_memories", arguments),))


def fact(key: str, value: str, confidence: float = 0.9, **extra: Any) -> dict[str, Any]:
    return {"key": key, "value": value, "confidence": confidence, **extra}


def user_event(
    i: int, text: str, *, session: str = "s1", ts: float | None = None, user: str = "default"
) -> EventRecord:
    return EventRecord(
        id=f"u{session}{i}",
        session_id=session,
        run_id=f"run_{session}_{i}",
        ts=ts if ts is not None else MONDAY + i * 60,
        role="user",
        content=text,
        segment_type="user_message",
        user_id=user,
    )


@pytest.fixture
def settings(tmp_path: Path, memory_store: str) -> Settings:
    """Once per backend (``memory_store``: 'embedded' or a PostgreSQL URL)."""
    loaded = load_settings(cwd=tmp_path, workspace=tmp_path)
    loaded.memory.store = memory_store
    return loaded


MemoryFactory = Callable[..., Memory]


@pytest.fixture
def open_memory(settings: Settings) -> Iterator[MemoryFactory]:
    opened: list[Memory] = []

    def factory(*script: ScriptStep, model: ScriptedModel | None = None) -> Memory:
        """A memory whose extraction model replays ``script`` (no script: no model at all)."""
        scripted = model if model is not None else ScriptedModel(script) if script else None
        memory = Memory.open(settings, start_worker=False, extraction_model=lambda: scripted)
        memory.scripted = scripted  # type: ignore[attr-defined]
        opened.append(memory)
        return memory

    yield factory
    for memory in opened:
        memory.close()


def say(memory: Memory, *events: EventRecord) -> None:
    """Record user turns and run every queued job (ingest, entities, embed, extract)."""
    seed(memory, list(events))


EVERY_STATUS = ["active", "pending", "superseded", "expired"]


def statuses(memory: Memory) -> dict[str, str]:
    """Every stored fact's text and status (up to 100 facts)."""
    facts: list[FactRecord] = memory.store.get_facts(
        memory.store.facts_by_status(EVERY_STATUS, 100)
    )
    return {f.value: f.status for f in facts}
