"""Small real-shaped memories for recall tests: a dated chat between two people in LoCoMo's
format (read by the real importer), or a user's work with an assistant over several runs;
each opened on the given backend with extraction off and seeded."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from shiyi.config import load_settings
from shiyi.memory.models import EventRecord
from shiyi.memory.recall.retriever import Retriever
from shiyi.memory.service import Memory
from shiyi.memory.transfer.importers import load_locomo
from tests.support.records import BASE_TS, seed

DAY = 86400.0
Turns = Sequence[tuple[str, str]]
"""``(speaker or role, text)`` in order."""


def open_seeded(
    tmp_path: Path, store: str, events: Sequence[EventRecord], *, lead_in: bool = True
) -> Memory:
    """A memory on ``store`` ("embedded" or "postgres") holding ``events``, indexed;
    ``lead_in=False``: each turn's vector its own text's (a test of a query-time mechanism
    whose fixture a short reply's lead-in would already answer)."""
    settings = load_settings(cwd=tmp_path, workspace=tmp_path)
    settings.memory.store = store
    settings.memory.lead_in = lead_in
    settings.memory.lifecycle.extraction = False
    memory = Memory.open(settings, start_worker=False)
    seed(memory, events)
    return memory


def locomo_chat(
    path: Path, speakers: tuple[str, str], sessions: Mapping[str, Turns]
) -> list[EventRecord]:
    """``sessions`` (LoCoMo date string -> turns) written as LoCoMo sample ``chat`` at
    ``path`` and read back by the importer: turn ids ``chat:D{session}:{turn}``."""
    conversation: dict[str, object] = {"speaker_a": speakers[0], "speaker_b": speakers[1]}
    for number, (date, turns) in enumerate(sessions.items(), start=1):
        conversation[f"session_{number}_date_time"] = date
        conversation[f"session_{number}"] = [
            {"speaker": who, "dia_id": f"D{number}:{i}", "text": text}
            for i, (who, text) in enumerate(turns, start=1)
        ]
    sample = {"sample_id": "chat", "conversation": conversation, "qa": []}
    path.write_text(json.dumps([sample], ensure_ascii=False), encoding="utf-8")
    (imported,) = load_locomo(path)
    return imported.events


def task_runs(runs: Mapping[str, Turns], roles: Mapping[str, str]) -> list[EventRecord]:
    """A user's work with an assistant: each run a week after the one before, its turns a
    minute apart, ids ``{run}-{index}``; ``roles`` renames roles (``{"user": "ana"}`` makes
    the same turns a chat between two people)."""
    return [
        EventRecord(
            id=f"{run}-{index}",
            session_id="trip",
            run_id=run,
            ts=BASE_TS + week * 7 * DAY + index * 60,
            role=roles.get(role, role),
            content=text,
            segment_type="imported",
            iteration=index,
        )
        for week, (run, turns) in enumerate(runs.items())
        for index, (role, text) in enumerate(turns)
    ]


def one_chat(turns: Turns) -> list[EventRecord]:
    """``turns`` as one conversation's run, ten minutes apart, ids ``turn-{index}``."""
    return [
        EventRecord(
            id=f"turn-{index}",
            session_id="friends",
            run_id="friends-1",
            ts=BASE_TS + index * 600,
            role=role,
            content=text,
            segment_type="imported",
            iteration=index,
        )
        for index, (role, text) in enumerate(turns)
    ]


def with_boosts(memory: Memory, **flags: bool) -> Retriever:
    """``memory``'s retriever with these :class:`~shiyi.memory.recall.config.Boosts` set."""
    base = memory.retriever
    boosts = replace(base.boosts, **flags)
    return Retriever(base.store, base.embedder, base.weights, base.candidates, boosts=boosts)


def top_ids(retriever: Retriever, question: str, k: int = 1) -> list[str]:
    return [hit.id for hit in retriever.search(question, limit=k, touch=False)]
