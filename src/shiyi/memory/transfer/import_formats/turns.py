"""One exported conversation's messages as imported turns: sessions, runs and ids.

A run is one calendar day (UTC) of a conversation, as for JSONL imports: an export's chat
that went on for weeks becomes one run per day it was used, each archived on its own.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from datetime import UTC, datetime

from shiyi.memory.transfer.import_formats.records import ImportedConversation, make_event

_UNSAFE = re.compile(r"\s+")
MAX_TURN_CHARS = 100_000
"""The import API's limit per turn (``ImportTurnIn.content``): a longer message (a pasted
log, a whole file) is split into turns of this size, so a served import takes all of it."""


@dataclass(frozen=True, slots=True)
class Turn:
    message_id: str
    role: str
    text: str
    ts: float


def session_name(source: str, conversation_id: str, fallback: str) -> str:
    """``<source>-<conversation id>``; without an id, a hash of ``fallback`` (stable)."""
    raw = conversation_id or hashlib.sha1(fallback.encode()).hexdigest()[:16]
    return f"{source}-{_UNSAFE.sub('_', raw.strip())}"


def conversation(session: str, title: str, turns: list[Turn]) -> ImportedConversation:
    events = []
    per_run: dict[str, int] = {}
    for turn in turns:
        run_id = f"{session}:{datetime.fromtimestamp(turn.ts, UTC).date().isoformat()}"
        iteration = per_run.get(run_id, 0)
        base = f"{session}:{_UNSAFE.sub('_', turn.message_id.strip())}"
        for part, start in enumerate(range(0, len(turn.text), MAX_TURN_CHARS)):
            piece = turn.text[start : start + MAX_TURN_CHARS]
            event_id = base if part == 0 else f"{base}.part{part + 1}"
            events.append(
                make_event(event_id, session, run_id, turn.ts, turn.role, piece, iteration)
            )
            iteration += 1
        per_run[run_id] = iteration
    return ImportedConversation(session_id=session, title=title or session, events=events)
