"""The system prompt of a run: persona, time, workspace and how to use the tools."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from shiyi.llm.types import ToolSpec

TOOL_GUIDANCE = (
    "Call tools when you need facts you do not have; several independent calls may go in one "
    "turn. Read files before editing them, and prefer small exact edits. When you have what "
    "you need, answer the user directly without calling tools."
)


MEMORY_HINT = (
    "Possibly relevant memories (a keyword match, not a full search; call query_memory for more):"
)


def system_prompt(
    persona: str,
    workspace: Path,
    tools: Sequence[ToolSpec],
    now: datetime | None = None,
    memory_hint: str = "",
) -> str:
    now = now or datetime.now().astimezone()
    parts = [
        persona.strip(),
        f"Current time: {now.strftime('%Y-%m-%d %H:%M %Z (%A)')}.",
        f"Workspace: {workspace}",
    ]
    if tools:
        names = ", ".join(spec.name for spec in tools)
        parts.append(f"Tools: {names}. {TOOL_GUIDANCE}")
    if memory_hint:
        parts.append(f"{MEMORY_HINT}\n{memory_hint}")
    return "\n\n".join(parts)
