"""Cut logged chat messages into anchored Event segments (no LLM, no embedding)."""

from __future__ import annotations

from shiyi.llm.types import Message
from shiyi.memory.models import EventRecord, SegmentType

# Memory keeps what matters of a tool result; the full text stays in the session log.
MAX_SEGMENT_CHARS = 4000


def _clip(text: str) -> str:
    if len(text) <= MAX_SEGMENT_CHARS:
        return text
    return text[: MAX_SEGMENT_CHARS - 20] + " …[clipped]"


def message_segments(message: Message) -> list[tuple[SegmentType, str]]:
    """The (segment type, text) pieces of one message, in reading order."""
    if message.role == "user":
        return [("user_message", message.content)]
    if message.role == "tool":
        return [("tool_result", _clip(f"{message.name or 'tool'} -> {message.content}"))]
    if message.role != "assistant":
        return []
    pieces: list[tuple[SegmentType, str]] = []
    if message.reasoning:
        pieces.append(("reasoning", _clip(message.reasoning)))
    if message.content:
        pieces.append(("response", message.content))
    pieces += [("tool_call", _clip(f"{c.name}({c.arguments})")) for c in message.tool_calls]
    return pieces


def to_events(
    message: Message,
    *,
    message_id: int,
    session_id: str,
    run_id: str,
    iteration: int,
    first_segment: int,
    ts: float,
    user_id: str = "default",
    agent_id: str = "shiyi",
) -> list[EventRecord]:
    """Events with ids derived from the session-log row, so re-ingesting is idempotent."""
    return [
        EventRecord(
            id=f"ev_{message_id}_{index}",
            session_id=session_id,
            run_id=run_id,
            ts=ts,
            role=message.role,
            content=text,
            segment_type=kind,
            iteration=iteration,
            segment=first_segment + index,
            user_id=user_id,
            agent_id=agent_id,
        )
        for index, (kind, text) in enumerate(message_segments(message))
        if text.strip()
    ]
