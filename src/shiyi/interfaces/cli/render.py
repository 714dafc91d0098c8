"""Print agent events for people: streamed text, one line per tool call, a usage footer."""

from __future__ import annotations

import json
from typing import Any, TextIO

from shiyi.events import Event, RunEnd, ToolCallEvent, ToolResultEvent, UsageEvent

_STATUS_WORDS = {
    "completed": "",
    "max_iterations": "stopped: too many steps",
    "cancelled": "cancelled",
    "failed": "failed",
    "stuck": "stopped: repeating itself",
    "usage_limit": "stopped: token limit",
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

    def _style(self, text: str, code: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.color else text

    def _write(self, text: str) -> None:
        if text:
            self.out.write(text)
            self._at_line_start = text.endswith("\n")
            self.out.flush()

    def _line(self, text: str) -> None:
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
            case "run_end":
                self._run_end(event)
            case _:
                pass

    def _end_reasoning(self) -> None:
        if self._in_reasoning:
            self._in_reasoning = False
            self._line("")

    def _tool_line(self, event: ToolResultEvent) -> None:
        call = self._calls.pop(event.call_id, None)
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

    def _add_usage(self, event: UsageEvent) -> None:
        self.prompt_tokens += event.prompt_tokens
        self.completion_tokens += event.completion_tokens
        if event.cost is not None:
            self.cost = (self.cost or 0.0) + event.cost

    def footer(self) -> str:
        cost = f" · ${self.cost:.4f}" if self.cost else ""
        return f"{self.prompt_tokens} in / {self.completion_tokens} out tokens{cost}"

    def _run_end(self, event: RunEnd) -> None:
        words = _STATUS_WORDS.get(event.status, event.status)
        note = f"[{words}{': ' + event.detail if event.detail and words else ''}] " if words else ""
        self._line(self._style(f"{note}{self.footer()}", "2"))
