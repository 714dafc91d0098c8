"""Session consolidation (what a session decided, agreed and left to do) and run archives
(each finished run as one anchored episodic memory)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from shiyi.memory.lifecycle.extraction import EXTRACTION_PROMPT
from shiyi.memory.lifecycle.observations import Observation
from shiyi.memory.models import EventRecord

CONSOLIDATION_PROMPT = (
    EXTRACTION_PROMPT
    + """

This is the end of a session: consolidate the WHOLE conversation. Record its decisions \
(kind decision), conventions agreed for the work (convention), the user's preferences \
(preference), open todos (todo) and reusable procedures (procedural, with trigger and steps) \
— how a task was successfully done, so it can be repeated. Skip small talk."""
)
FACT_ID = re.compile(r"\bfact_[0-9a-f]{12}\b")
OUTCOME_CHARS = 300


def archive_fact(run_id: str, goal: str, status: str, events: Sequence[EventRecord]) -> Observation:
    """The run as an episodic observation: its goal, outcome and tools, anchored at its start."""
    tools = sorted({e.content.split("(", 1)[0] for e in events if e.segment_type == "tool_call"})
    answers = [e.content for e in events if e.segment_type == "response" and e.content.strip()]
    outcome = " ".join(answers[-1].split())[:OUTCOME_CHARS] if answers else ""
    parts = [f"{' '.join(goal.split())} ({status}"]
    parts.append(f", {len(events)} segments")
    if tools:
        parts.append(f", tools: {', '.join(tools)}")
    value = "".join(parts) + ")" + (f" -> {outcome}" if outcome else "")
    first = events[0]
    return Observation(
        key=f"run {run_id.removeprefix('run_')}",  # the key is stored as words
        value=value,
        confidence=1.0,
        kind="episodic",
        source="archive",
        anchor=first.anchor.key(),
        source_events=[e.id for e in events],
        valid_from=first.ts,
        said_at=first.ts,  # when the run happened, not when its archive job ran
    )


def used_fact_ids(events: Sequence[EventRecord]) -> list[str]:
    """Fact ids the run's memory tool results showed the model."""
    found: dict[str, None] = {}
    for event in events:
        if event.segment_type == "tool_result" and "memory" in event.content[:40]:
            found.update(dict.fromkeys(FACT_ID.findall(event.content)))
    return list(found)
