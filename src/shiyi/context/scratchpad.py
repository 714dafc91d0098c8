"""The working notes of a multi-step task (seed 001, 2.1.3): goal, steps, decisions, blockers.

The scratchpad is rendered into the working notes that close every request, so the model keeps its
bearings after older turns were trimmed or summarised.  It is persisted per session with
:meth:`Scratchpad.to_dict` / :meth:`Scratchpad.from_dict`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from shiyi.errors import StorageError

MAX_GOAL_CHARS = 200
"""The goal is often the raw user message; the prompt only needs its gist."""

MAX_RENDERED_DECISIONS = 8
"""Older decisions stay stored but drop out of the prompt to keep it compact."""


class Decision(BaseModel):
    model_config = ConfigDict(extra="forbid")

    what: str
    why: str = ""


class Scratchpad(BaseModel):
    """Mutable task state; every method keeps the lists free of duplicates."""

    # Unknown keys are ignored so a session saved by a newer shiyi still loads.
    model_config = ConfigDict(extra="ignore", validate_assignment=True)

    current_goal: str | None = None
    sub_goals: list[str] = Field(default_factory=list)
    completed: list[str] = Field(default_factory=list)
    current_step: str | None = None
    decisions: list[Decision] = Field(default_factory=list)
    blockers: list[str] = Field(default_factory=list)

    # --- goal and plan -----------------------------------------------------------------

    def set_goal(self, goal: str) -> None:
        """Start a new task: steps and blockers belong to the old one and are dropped.

        Decisions are kept: they are settled choices (a library, a naming rule) that the
        model should not reopen just because the user asked for the next thing.
        """
        self.current_goal = goal.strip() or None
        self.sub_goals = []
        self.completed = []
        self.current_step = None
        self.blockers = []

    def from_plan(self, goal: str, step_titles: Sequence[str]) -> None:
        """Replace goal and steps with a freshly created plan (keeps decisions)."""
        self.set_goal(goal)
        self.sub_goals = _unique(step_titles)

    # --- step progress -----------------------------------------------------------------

    def step_started(self, title: str) -> None:
        self._know_step(title)
        self.current_step = title

    def step_completed(self, title: str) -> None:
        self._know_step(title)
        if title not in self.completed:
            self.completed = [*self.completed, title]
        self._leave_step(title)
        # A retried step that now succeeded is no longer blocking anything.
        self.blockers = [b for b in self.blockers if not b.startswith(_failure_prefix(title))]

    def step_failed(self, title: str, why: str) -> None:
        self._know_step(title)
        self._leave_step(title)
        reason = why.strip() or "no reason given"
        self.blockers = [
            *[b for b in self.blockers if not b.startswith(_failure_prefix(title))],
            f"{_failure_prefix(title)}{reason}",
        ]

    # --- decisions and blockers --------------------------------------------------------

    def add_decision(self, what: str, why: str) -> None:
        """Record a decision; deciding the same thing again updates its reason."""
        kept = [d for d in self.decisions if d.what != what]
        self.decisions = [*kept, Decision(what=what, why=why)]

    def add_blocker(self, text: str) -> None:
        if text not in self.blockers:
            self.blockers = [*self.blockers, text]

    def clear_blocker(self, text: str) -> bool:
        """Remove ``text``; returns whether it was there."""
        if text not in self.blockers:
            return False
        self.blockers = [b for b in self.blockers if b != text]
        return True

    # --- output ------------------------------------------------------------------------

    def is_empty(self) -> bool:
        return not (
            self.current_goal
            or self.sub_goals
            or self.current_step
            or self.decisions
            or self.blockers
        )

    def only_goal(self) -> bool:
        """Nothing besides the goal (which is usually the user's own message)."""
        return not (self.sub_goals or self.current_step or self.decisions or self.blockers)

    def render(self) -> str:
        """A compact block for the working notes, or "" when there is nothing to say."""
        if self.is_empty():
            return ""
        lines = ["Scratchpad (your working notes for this task):"]
        if self.current_goal:
            lines.append(f"Goal: {_clip(self.current_goal, MAX_GOAL_CHARS)}")
        lines.extend(self._render_steps())
        lines.extend(self._render_decisions())
        lines.extend(f"Blocker: {b}" for b in self.blockers)
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-serialisable data."""
        return self.model_dump(mode="json")

    @classmethod
    def from_dict(cls, data: object) -> Scratchpad:
        """Inverse of :meth:`to_dict`; raises :class:`StorageError` on malformed data."""
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise StorageError(f"the saved scratchpad is malformed: {exc}") from exc

    # --- helpers -----------------------------------------------------------------------

    def _know_step(self, title: str) -> None:
        # The model may work on a step it never announced; track it rather than lose it.
        if title not in self.sub_goals:
            self.sub_goals = [*self.sub_goals, title]

    def _leave_step(self, title: str) -> None:
        if self.current_step == title:
            self.current_step = None

    def _render_steps(self) -> list[str]:
        if not self.sub_goals:
            return [f"Current step: {self.current_step}"] if self.current_step else []
        lines = ["Steps:"]
        for title in self.sub_goals:
            lines.append(f"  {self._mark(title)} {title}")
        return lines

    def _mark(self, title: str) -> str:
        if title in self.completed:
            return "[x]"
        if title == self.current_step:
            return "[>]"
        if any(b.startswith(_failure_prefix(title)) for b in self.blockers):
            return "[!]"
        return "[ ]"

    def _render_decisions(self) -> list[str]:
        recent = self.decisions[-MAX_RENDERED_DECISIONS:]
        if not recent:
            return []
        return ["Decisions:", *(_render_decision(d) for d in recent)]


def _render_decision(decision: Decision) -> str:
    return f"  - {decision.what} ({decision.why})" if decision.why else f"  - {decision.what}"


def _failure_prefix(title: str) -> str:
    return f"step '{title}' failed: "


def _unique(items: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _clip(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
