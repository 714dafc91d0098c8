"""The plan of a run: the steps the model announced and how far it has got.

The model drives the plan through the ``create_plan`` / ``update_plan`` tools; this state
checks each transition and queues the protocol events (``plan_created``, ``step_start``,
``step_complete``) that describe it.  Tools stay plain functions: the run loop takes the
queued events with :meth:`PlanState.drain_events` after tool results and emits them.

Indices are 0-based in the Python API and in events; every message meant for the model
says "step N" with N counted from 1, the same numbering :meth:`PlanState.render` shows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field

from shiyi.errors import ToolError
from shiyi.events import (
    Event,
    PlanCreated,
    PlanStep,
    ResponseStart,
    RunStatus,
    StepComplete,
    StepStart,
)

StepStatus: TypeAlias = Literal["pending", "in_progress", "completed", "failed", "skipped"]
UpdateStatus: TypeAlias = Literal["in_progress", "completed", "failed", "skipped"]

MAX_STEPS = 20
"""More steps than this is a to-do list, not a plan the user can follow."""

_CLOSED: dict[StepStatus, Literal["done", "failed", "skipped"]] = {
    "completed": "done",
    "failed": "failed",
    "skipped": "skipped",
}
_MARKS: dict[StepStatus, str] = {
    "pending": "[ ]",
    "in_progress": "[>]",
    "completed": "[x]",
    "failed": "[!]",
    "skipped": "[-]",
}


class PlanStepInput(BaseModel):
    """One step of the plan: what to do, and with which tools."""

    model_config = ConfigDict(extra="forbid")

    title: str = Field(min_length=1, max_length=120, description="Short imperative title.")
    description: str = Field(default="", description="What this step does and why.")
    expected_tools: list[str] = Field(
        default_factory=list, description="Tools you expect to use, e.g. ['read_file']."
    )


@dataclass(slots=True)
class PlanItem:
    """One step of the current plan and where it stands."""

    title: str
    description: str = ""
    expected_tools: list[str] = field(default_factory=list)
    status: StepStatus = "pending"
    note: str = ""


@dataclass(slots=True)
class PlanState:
    """The plan of one run; invariant: at most one step is ``in_progress``.

    Every mutating method returns the events it caused *and* queues them; the run loop
    should emit only what :meth:`drain_events` hands over, so nothing is emitted twice.
    """

    goal: str = ""
    steps: list[PlanItem] = field(default_factory=list)
    _queue: list[Event] = field(default_factory=list, init=False, repr=False)
    _announced: bool = field(default=False, init=False, repr=False)

    @property
    def active(self) -> bool:
        """True once a plan exists in this run."""
        return bool(self.steps)

    def create(self, goal: str, steps: Sequence[PlanStepInput]) -> list[Event]:
        """Start (or replace) the plan; step 0 becomes in progress."""
        if not steps:
            raise ToolError("A plan needs at least one step; pass the steps in order.")
        if len(steps) > MAX_STEPS:
            raise ToolError(f"A plan may have at most {MAX_STEPS} steps; merge small steps.")
        # A replaced plan's running step is closed as skipped: the new plan supersedes it,
        # and claiming it "done" would be a guess.
        events = self._close_active("skipped")
        if not self._announced:
            # The mode is announced once per run, before the first plan reaches the UI.
            events.append(ResponseStart(mode="plan"))
            self._announced = True
        self.goal = goal
        self.steps = [PlanItem(s.title, s.description, list(s.expected_tools)) for s in steps]
        events.append(
            PlanCreated(steps=[PlanStep(title=s.title, description=s.description) for s in steps])
        )
        events.extend(self._start(0))
        return self._queued(events)

    def update(self, index: int, status: UpdateStatus, note: str = "") -> list[Event]:
        """Move step ``index`` to ``status``; repeating the current status changes nothing.

        Starting a step while another one runs completes the running one as done first:
        models move on without always saying so, and a step left "in progress" behind the
        current one would break the one-step-at-a-time picture the user sees.
        """
        item = self._item(index)
        events: list[Event] = []
        if item.status != status and status == "in_progress":
            events = self._close_active("completed") + self._start(index)
        elif item.status != status:
            events = self._close(index, status)
        if note:
            item.note = note
        return self._queued(events)

    def complete_and_advance(self, note: str = "") -> list[Event]:
        """Complete the running step and start the next pending one, if any."""
        current = self.current_index()
        if current is None:
            raise ToolError("No step is in progress; start one with status in_progress.")
        events = self.update(current, "completed", note)
        following = self._next_pending(current)
        if following is not None:
            events += self.update(following, "in_progress")
        return events

    def finish(self, run_status: RunStatus) -> list[Event]:
        """Close the running step when the run ends: done if it completed, else failed."""
        closing: StepStatus = "completed" if run_status == "completed" else "failed"
        return self._queued(self._close_active(closing))

    def drain_events(self) -> list[Event]:
        """Hand over the queued events, oldest first, and forget them."""
        events, self._queue = self._queue, []
        return events

    def current_index(self) -> int | None:
        return next((i for i, s in enumerate(self.steps) if s.status == "in_progress"), None)

    def progress(self) -> tuple[int, int]:
        """(finished steps, all steps); completed, failed and skipped count as finished."""
        finished = sum(1 for s in self.steps if s.status in _CLOSED)
        return finished, len(self.steps)

    def render(self) -> str:
        """The plan as the model should see it, or "" when there is none."""
        if not self.steps:
            return ""
        done, total = self.progress()
        lines = [f"Plan ({done}/{total} finished): {self.goal}"]
        for number, item in enumerate(self.steps, start=1):
            note = f" — {item.note}" if item.note else ""
            lines.append(f"{number}. {_MARKS[item.status]} {item.title}{note}")
        return "\n".join(lines)

    def _item(self, index: int) -> PlanItem:
        if not self.steps:
            raise ToolError("There is no plan yet; call create_plan first.")
        if not 0 <= index < len(self.steps):
            raise ToolError(
                f"Step {index + 1} does not exist; the plan has steps 1-{len(self.steps)}."
            )
        return self.steps[index]

    def _start(self, index: int) -> list[Event]:
        self.steps[index].status = "in_progress"
        return [StepStart(index=index)]

    def _close(self, index: int, status: StepStatus) -> list[Event]:
        item = self.steps[index]
        if item.status in _CLOSED:
            raise ToolError(
                f"Step {index + 1} is already {item.status}; set it to in_progress first "
                f"if you want to redo it, or use one of: in_progress, completed, failed, skipped."
            )
        item.status = status
        return [StepComplete(index=index, status=_CLOSED[status])]

    def _close_active(self, status: StepStatus) -> list[Event]:
        current = self.current_index()
        return [] if current is None else self._close(current, status)

    def _next_pending(self, after: int) -> int | None:
        return next(
            (i for i in range(after + 1, len(self.steps)) if self.steps[i].status == "pending"),
            None,
        )

    def _queued(self, events: list[Event]) -> list[Event]:
        self._queue.extend(events)
        return events


class CurrentPlan:
    """The plan of an agent's current run, in one object for the agent's lifetime.

    The plan tools are built before the agent (by the app) and act on :attr:`state`; the
    agent's session context puts a fresh :class:`PlanState` there for each session and run.
    """

    def __init__(self) -> None:
        self.state = PlanState()
