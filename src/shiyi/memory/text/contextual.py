"""What an event is indexed as: its text in context, not bare.

Questions about a conversation name people and times ("When did Caroline go to the support
group?"), but a turn's text rarely says who speaks or when.  So both the keyword index and the
embedding see ``"(8 May 2023) Caroline: I went to a support group yesterday"``.

Measured on the LoCoMo dev conversations (each alone, recall@10 of evidence turns): MiniLM
over the bare text 0.249, with day and speaker 0.505; BM25 0.606 -> 0.652 with day and speaker
(and stems, see :mod:`shiyi.index.text`).

The keyword index reads a turn alone: its words are its own.  A short message's *vector*
also carries the end of the message before it (:mod:`shiyi.memory.intake.event_vectors`),
and at query time a turn's score borrows from its neighbours'
(:mod:`shiyi.memory.recall.boosts`).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from shiyi.memory.models import EventRecord


def speaker_name(role: str) -> str:
    """How a role reads in indexed text: ``caroline`` -> ``Caroline``."""
    return role[:1].upper() + role[1:]


def event_day(ts: float) -> str:
    """``8 May 2023``: the day an event happened (UTC), as questions write dates."""
    moment = datetime.fromtimestamp(ts, UTC)
    return f"{moment.day} {moment:%B %Y}"


def indexed_text(event: EventRecord) -> str:
    """``(day) Speaker: text``: what the keyword index and the embedding see of an event."""
    return f"({event_day(event.ts)}) {speaker_name(event.role)}: {event.content}"


def indexed_texts(events: Sequence[EventRecord]) -> list[str]:
    return [indexed_text(event) for event in events]
