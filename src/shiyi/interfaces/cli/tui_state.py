"""What the terminal UI shows for one turn, folded from agent events (no rendering here).

:class:`TurnState` keeps the turn in arrival order as blocks (answer text, reasoning, tool
lines, notices; the plan is one block updated in place), plus the memories ``query_memory``
returned and the token counts.  :func:`parse_memory_block` reads the ``<memory>`` block that
``query_memory`` answers with (see ``shiyi.memory.recall.present``).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from shiyi.events import Event, PlanCreated, RunEnd, StepComplete, StepStart, ToolResultEvent
from shiyi.interfaces.cli.render import describe_args

MEMORY_TOOL = "query_memory"
PLAN_TOOLS = frozenset({"create_plan", "update_plan"})

StepStatus: TypeAlias = Literal["pending", "running", "done", "failed", "skipped"]


@dataclass(slots=True)
class TextBlock:
    text: str
    reasoning: bool = False


@dataclass(slots=True)
class ToolLine:
    call_id: str
    name: str
    args: str
    status: Literal["running", "ok", "failed"] = "running"
    duration_ms: float = 0.0
    summary: str = ""
    cached: bool = False


@dataclass(slots=True)
class Notice:
    text: str
    style: Literal["note", "error"] = "note"


@dataclass(slots=True)
class Step:
    title: str
    status: StepStatus = "pending"
    finished_before: int = 0
    """Steps finished when this one last changed: its bar shows the plan's share then."""
    tools: list[ToolLine] = field(default_factory=list)
    """Tool calls made while this step was running, shown under it."""


@dataclass(slots=True)
class PlanBlock:
    steps: list[Step] = field(default_factory=list)

    @property
    def finished(self) -> int:
        return sum(step.status in ("done", "failed", "skipped") for step in self.steps)


Block: TypeAlias = TextBlock | ToolLine | Notice | PlanBlock


@dataclass(slots=True, frozen=True)
class MemoryLine:
    kind: str
    text: str
    confidence: int | None = None
    """Percent; episodes have none."""
    memory_id: str = ""
    anchor: str = ""
    note: str = ""
    """``unconfirmed`` or ``no longer true``, when the memory says so."""


@dataclass(slots=True)
class Totals:
    """Token counts and cost summed over the whole chat."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = None


@dataclass
class TurnState:
    blocks: list[Block] = field(default_factory=list)
    memories: list[MemoryLine] = field(default_factory=list)
    memory_calls: int = 0
    pending_memory: list[str] = field(default_factory=list)
    """Ids of ``query_memory`` calls whose full result has not been read yet."""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = None
    estimated: bool = False
    """The server sent no usage: the counts are the local tokenizer's."""
    status: str = "running"
    detail: str = ""
    started: float = field(default_factory=time.monotonic)
    ended: float | None = None
    totals: Totals = field(default_factory=Totals)

    @property
    def plan(self) -> PlanBlock | None:
        return next((b for b in self.blocks if isinstance(b, PlanBlock)), None)

    @property
    def elapsed(self) -> float:
        return (self.ended or time.monotonic()) - self.started

    def handle(self, event: Event) -> None:
        match event.type:
            case "text_delta":
                self._text(event.text, reasoning=False)
            case "reasoning_delta":
                self._text(event.text, reasoning=True)
            case "tool_call":
                if event.name not in PLAN_TOOLS:
                    self._add_tool(ToolLine(event.call_id, event.name, describe_args(event.args)))
            case "tool_result":
                self._tool_result(event)
            case "plan_created":
                self._plan(event)
            case "step_start" | "step_complete":
                self._step(event)
            case "usage":
                self.prompt_tokens += event.prompt_tokens
                self.completion_tokens += event.completion_tokens
                self.estimated = self.estimated or event.estimated
                self.totals.prompt_tokens += event.prompt_tokens
                self.totals.completion_tokens += event.completion_tokens
                if event.cost is not None:
                    self.cost = (self.cost or 0.0) + event.cost
                    self.totals.cost = (self.totals.cost or 0.0) + event.cost
            case "user_message":
                self.blocks.append(Notice(f"↳ added to the run: {event.text}"))
            case "error":
                self.blocks.append(Notice(f"error: {event.message}", "error"))
            case "run_end":
                self._run_end(event)
            case _:
                pass

    def add_memories(self, call_id: str, content: str) -> None:
        """The full result of ``query_memory`` call ``call_id`` (read from the transcript)."""
        if call_id in self.pending_memory:
            self.pending_memory.remove(call_id)
        known = {(m.memory_id, m.text) for m in self.memories}
        for line in parse_memory_block(content):
            if (line.memory_id, line.text) not in known:
                self.memories.append(line)
                known.add((line.memory_id, line.text))

    def _text(self, text: str, *, reasoning: bool) -> None:
        last = self.blocks[-1] if self.blocks else None
        if isinstance(last, TextBlock) and last.reasoning == reasoning:
            last.text += text
        elif text.strip():
            self.blocks.append(TextBlock(text.lstrip(), reasoning))

    def tool_lines(self) -> list[ToolLine]:
        lines = [b for b in self.blocks if isinstance(b, ToolLine)]
        plan = self.plan
        return lines + [t for step in plan.steps for t in step.tools] if plan else lines

    def _add_tool(self, line: ToolLine) -> None:
        plan = self.plan
        running = [s for s in plan.steps if s.status == "running"] if plan else []
        if running:
            running[-1].tools.append(line)
        else:
            self.blocks.append(line)

    def _tool_result(self, event: ToolResultEvent) -> None:
        line = next((t for t in self.tool_lines() if t.call_id == event.call_id), None)
        if line is None:
            if event.ok and event.name in PLAN_TOOLS:
                return  # the plan block shows it
            line = ToolLine(event.call_id, event.name, "")
            self._add_tool(line)
        line.status = "ok" if event.ok else "failed"
        line.duration_ms = event.duration_ms
        line.summary = event.summary
        line.cached = event.cached
        if event.ok and event.name == MEMORY_TOOL:
            self.memory_calls += 1
            self.pending_memory.append(event.call_id)

    def _plan(self, event: PlanCreated) -> None:
        steps = [Step(" ".join(step.title.split())) for step in event.steps]
        if self.plan is not None:
            self.plan.steps = steps
        else:
            self.blocks.append(PlanBlock(steps))

    def _step(self, event: StepStart | StepComplete) -> None:
        plan = self.plan
        if plan is None:
            plan = PlanBlock()
            self.blocks.append(plan)
        while len(plan.steps) <= event.index:
            plan.steps.append(Step(f"step {len(plan.steps) + 1}"))
        step = plan.steps[event.index]
        step.status = "running" if event.type == "step_start" else event.status
        step.finished_before = plan.finished

    def _run_end(self, event: RunEnd) -> None:
        self.status = event.status
        self.detail = event.detail
        self.ended = time.monotonic()
        for line in self.tool_lines():
            if line.status == "running":
                line.status = "failed"
                line.summary = line.summary or "did not finish"


_FACT = re.compile(r"^-\s+(?P<text>.*)\s+\((?P<notes>[^()]*)\)$")
_EPISODE = re.compile(r"^-\s+\[(?P<meta>[^\]]*)\]\s+(?P<text>.*)$")
_GROUP_KINDS = {
    "user_preferences": "preference",
    "project_context": "context",
    "relevant_procedures": "procedure",
    "todos": "todo",
    "facts": "fact",
    "user_state": "mood",
    "recent_episodes": "episode",
}


def parse_memory_block(content: str) -> list[MemoryLine]:
    """One :class:`MemoryLine` per memory in ``content``'s ``<memory>`` block (none if absent)."""
    start = content.find("<memory>")
    if start < 0:
        return []
    end = content.find("</memory>", start)
    body = content[start + len("<memory>") : end if end >= 0 else len(content)]
    kind = "memory"
    lines: list[MemoryLine] = []
    for raw in body.splitlines():
        line = raw.strip()
        if tag := re.fullmatch(r"<(\w+)>", line):
            kind = _GROUP_KINDS.get(tag.group(1), tag.group(1))
        elif line.startswith("- "):
            lines.append(_memory_line(kind, line))
    return lines


def _memory_line(kind: str, line: str) -> MemoryLine:
    if kind == "episode" and (episode := _EPISODE.match(line)):
        anchor = re.search(r"anchor (\S+)", episode.group("meta"))
        return MemoryLine(kind, episode.group("text"), anchor=anchor.group(1) if anchor else "")
    fact = _FACT.match(line)
    if fact is None:
        return MemoryLine(kind, line[2:])
    notes = fact.group("notes")
    confidence = re.search(r"confidence (\d+)%", notes)
    memory_id = re.search(r"(?:^|, )id (\S+)", notes)
    anchor = re.search(r"anchor (\S+?)(?:,|$)", notes)
    note = next((word for word in ("unconfirmed", "no longer true") if word in notes), "")
    return MemoryLine(
        kind,
        fact.group("text"),
        confidence=int(confidence.group(1)) if confidence else None,
        memory_id=memory_id.group(1) if memory_id else "",
        anchor=anchor.group(1) if anchor else "",
        note=note,
    )
