"""What an importer yields, whatever the file's format: conversations of imported turns."""

from __future__ import annotations

from dataclasses import dataclass, field

from shiyi.memory.models import EventRecord


@dataclass(slots=True)
class QAItem:
    """One benchmark question; ``evidence`` holds dia_ids such as ``"D1:3"``."""

    question: str
    answer: str
    evidence: list[str] = field(default_factory=list)
    category: int | str = 0


@dataclass(slots=True)
class ImportedConversation:
    session_id: str
    title: str
    events: list[EventRecord]
    qa: list[QAItem] = field(default_factory=list)


def make_event(
    event_id: str, session: str, run_id: str, ts: float, speaker: str, text: str, iteration: int
) -> EventRecord:
    return EventRecord(
        id=event_id,
        session_id=session,
        run_id=run_id,
        ts=ts,
        role=speaker.strip().lower(),
        content=text,
        segment_type="imported",
        iteration=iteration,
        segment=0,
    )
