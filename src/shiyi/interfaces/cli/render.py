"""Print agent events for people: streamed text, one line per tool call, a usage footer."""

from __future__ import annotations

import json
from typing import Any, TextIO

from shiyi.events import (
    Event,
    PlanCreated,
    RunEnd,
    StepComplete,
    StepStart,
    ToolCallEvent,
    ToolResultEvent,
    UsageEvent,
)
from shiyi.interfaces.cli.terminal_safe import shown

_STATUS_WORDS = {
    "completed": "",
    "max_iterations": "stopped: too many steps",
    "cancelled": "cancelled",
    "failed": "failed",
    "stuck": "stopped: repeating itself",
    "usage_limit": "stopped: limit reached",
}


def describe_args(args: dict[str, Any] | None, width: int = 60) -> str:
    if args is None:
        return "(malformed arguments)"
    parts = []
    for key, value in args.items():
        shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        shown = " ".join(str(shown).split())
        parts.append(f"{key}={shown[:40] + '…' if len(shown) > 40 else shown}")
    text = " ".join(parts)
    return text if len(text) <= width else text[: width - 1] + "…"


BAR_CELLS = 10
_TITLE_WIDTH = 40
_STEP_ENDINGS = {
    "done": ("done ✓", "32"),
    "failed": ("failed ✗", "31"),
    "skipped": ("skipped", "2"),
}


def progress_bar(done: int, total: int, cells: int = BAR_CELLS) -> str:
    """``cells`` blocks, the filled share rounded down so a bar is full only at the end."""
    filled = cells * done // total if total > 0 else 0
    return "█" * filled + "░" * (cells - filled)


def _short_title(title: str) -> str:
    title = " ".join(title.split())
    return title if len(title) <= _TITLE_WIDTH else title[: _TITLE_WIDTH - 1] + "…"


_PLAN_TOOLS = frozenset({"create_plan", "update_plan"})


class EventPrinter:
    """Turns events into terminal output; colour only when ``color`` is set."""

    def __init__(self, out: TextIO, *, color: bool = False) -> None:
        self.out = out
        self.color = color
        self._calls: dict[str, ToolCallEvent] = {}
        self._at_line_start = True
        self._in_reasoning = False
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.cost: float | None = None
        self.estimated = False
        self._plan_titles: list[str] = []
        self._steps_finished = 0
        self._open_step: int | None = None
        """With colour, the step whose progress line is still open for its completion."""
        self._errors_shown: set[str] = set()

    def _style(self, text: str, code: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.color else text

    def _write(self, text: str) -> None:
        if text:
            self._close_progress_line()
            self.out.write(shown(text))  # a model's words are not the terminal's commands
            self._at_line_start = text.endswith("\n")
            self.out.flush()

    def _close_progress_line(self) -> None:
        # Anything else that prints ends the open progress line instead of joining it.
        if self._open_step is not None:
            self._open_step = None
            self.out.write("\n")
            self._at_line_start = True

    def _line(self, text: str) -> None:
        self._close_progress_line()
        if not self._at_line_start:
            self._write("\n")
        self._write(text + "\n")

    def handle(self, event: Event) -> None:
        match event.type:
            case "text_delta":
                self._end_reasoning()
                self._write(event.text)
            case "reasoning_delta":
                if not self._in_reasoning:
                    self._line(self._style("thinking…", "2"))
                    self._in_reasoning = True
                self._write(self._style(event.text, "2"))
            case "tool_call":
                self._end_reasoning()
                self._calls[event.call_id] = event
            case "tool_result":
                self._tool_line(event)
            case "usage":
                self._add_usage(event)
            case "user_message":
                self._line(self._style(f"  ↳ added to the run: {event.text}", "2"))
            case "error":
                self._line(self._style(f"error: {event.message}", "31"))
                self._errors_shown.add(event.message)
            case "run_end":
                self._run_end(event)
            case "plan_created":
                self._plan(event)
            case "step_start":
                self._step_start(event)
            case "step_complete":
                self._step_complete(event)
            case _:
                pass

    def _end_reasoning(self) -> None:
        if self._in_reasoning:
            self._in_reasoning = False
            self._line("")

    def _tool_line(self, event: ToolResultEvent) -> None:
        call = self._calls.pop(event.call_id, None)
        if event.ok and event.name in _PLAN_TOOLS:
            return  # the plan's own progress lines already say it
        mark = self._style("✓", "32") if event.ok else self._style("✗", "31")
        args = describe_args(call.args if call else None)
        took = (
            f"{event.duration_ms:.0f} ms"
            if event.duration_ms < 1000
            else (f"{event.duration_ms / 1000:.1f} s")
        )
        summary = self._style(event.summary[:70], "2")
        shown = f"{event.name} {args}" if args else event.name
        self._line(f"  {mark} {shown} · {took} · {summary}")

    def _plan(self, event: PlanCreated) -> None:
        self._plan_titles = [_short_title(step.title) for step in event.steps]
        self._steps_finished = 0
        self._line("Plan:")
        for number, title in enumerate(self._plan_titles, start=1):
            self._line(f"  {number}. {title}")

    def _step_label(self, index: int, running: bool) -> str:
        total = max(len(self._plan_titles), index + 1)
        title = self._plan_titles[index] if index < len(self._plan_titles) else f"step {index + 1}"
        label = f"[{index + 1}/{total} {title}{'…' if running else ''}]"
        # Pad to the longest possible label so the bars of all steps line up.
        width = max((len(f"[{total}/{total} {t}…]") for t in self._plan_titles), default=0)
        return label.ljust(width)

    def _step_bar(self) -> str:
        return progress_bar(self._steps_finished, len(self._plan_titles))

    def _step_start(self, event: StepStart) -> None:
        text = f"{self._step_label(event.index, running=True)}  {self._step_bar()}"
        if not self.color:
            self._line(text)
            return
        # On a terminal the line stays open so the step's completion can rewrite it in place.
        if not self._at_line_start:
            self._write("\n")
        self._write(self._style(text, "36"))
        self._open_step = event.index

    def _step_complete(self, event: StepComplete) -> None:
        self._steps_finished += 1
        word, code = _STEP_ENDINGS[event.status]
        label = self._step_label(event.index, running=False)
        text = f"{label}  {self._step_bar()} {self._style(word, code)}"
        if self._open_step == event.index:
            self._open_step = None
            self._write("\r\x1b[K" + text + "\n")
        else:
            self._line(text)

    def _add_usage(self, event: UsageEvent) -> None:
        self.prompt_tokens += event.prompt_tokens
        self.completion_tokens += event.completion_tokens
        if event.cost is not None:
            self.cost = (self.cost or 0.0) + event.cost
        self.estimated = self.estimated or event.estimated

    def footer(self) -> str:
        cost = f" · ${self.cost:.4f}" if self.cost else ""
        about = "~" if self.estimated else ""  # the server sent no usage: our tokenizer's count
        return f"{about}{self.prompt_tokens} in / {about}{self.completion_tokens} out tokens{cost}"

    def _run_end(self, event: RunEnd) -> None:
        words = _STATUS_WORDS.get(event.status, event.status)
        # the error line above already said why: the reason twice had read as two failures
        said = event.detail and event.detail not in self._errors_shown
        note = f"[{words}{': ' + event.detail if said and words else ''}] " if words else ""
        self._line(self._style(f"{note}{self.footer()}", "2"))
