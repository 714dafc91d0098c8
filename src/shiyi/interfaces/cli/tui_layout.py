"""Lay a :class:`TurnState` out as terminal lines with rich (16 colours, any width >= 20).

Top to bottom: the turn in arrival order (answer text, one line per tool call, the plan's
progress lines), the memory panel (what ``query_memory`` returned this turn) and a footer
with tokens, cost and status.  While a run is live the body is cut to its last lines so the
panel and footer stay on screen; the final print shows everything.
"""

from __future__ import annotations

from collections.abc import Iterable

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.segment import Segment
from rich.text import Text

from shiyi.interfaces.cli.render import BAR_CELLS, progress_bar
from shiyi.interfaces.cli.terminal_safe import shown
from shiyi.interfaces.cli.tui_state import (
    MEMORY_TOOL,
    MemoryLine,
    Notice,
    PlanBlock,
    Step,
    TextBlock,
    ToolLine,
    TurnState,
)

_ENDINGS = {
    "done": ("done ✓", "green"),
    "failed": ("failed ✗", "red"),
    "skipped": ("skipped", "dim"),
}
_MAX_TITLE = 40
_STATUS_WORDS = {
    "max_iterations": "stopped: too many steps",
    "stuck": "stopped: repeating itself",
    "usage_limit": "stopped: limit reached",
}


def _line(text: str | Text, style: str = "") -> Text:
    line = text if isinstance(text, Text) else Text(shown(text, colours=False), style=style)
    line.no_wrap = True
    line.overflow = "ellipsis"
    return line


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(0, width - 1)] + "…"


def _took(ms: float) -> str:
    return f"{ms:.0f} ms" if ms < 1000 else f"{ms / 1000:.1f} s"


def tool_line(tool: ToolLine, indent: str = "  ") -> Text:
    mark, style = {"running": ("⋯", "cyan"), "ok": ("✓", "green"), "failed": ("✗", "red")}[
        tool.status
    ]
    line = Text(indent)
    line.append(mark, style=style)
    line.append(f" {tool.name}")
    if tool.args:
        line.append(f" {tool.args}")
    if tool.status == "running":
        line.append(" · running", style="dim")
        return _line(line)
    line.append(f" · {_took(tool.duration_ms)}{' · cached' if tool.cached else ''}")
    summary = "→ memory panel" if tool.name == MEMORY_TOOL and tool.status == "ok" else tool.summary
    if summary:
        line.append(f" · {summary}", style="dim")
    return _line(line)


def plan_lines(plan: PlanBlock, width: int) -> list[Text]:
    """``[2/3 title…]  ██████░░░░`` per step, like seed 000's sketch; bars go on narrow screens."""
    total = len(plan.steps)
    bar_cells = BAR_CELLS if width >= 44 else 0
    fixed = 2 + len(f"[{total}/{total} …]") + 2 + bar_cells + len(" failed ✗")
    title_width = max(8, min(_MAX_TITLE, width - fixed))
    titles = [_clip(step.title, title_width) for step in plan.steps]
    label_width = max((len(f"[{total}/{total} {t}…]") for t in titles), default=0)
    lines = [_line("Plan:", "bold")]
    for number, (step, title) in enumerate(zip(plan.steps, titles, strict=True), start=1):
        lines.append(_step_line(step, f"[{number}/{total} {title}", label_width, bar_cells, total))
        lines += [tool_line(tool, indent="      ") for tool in step.tools]
    return lines


def _step_line(step: Step, label: str, label_width: int, bar_cells: int, total: int) -> Text:
    running = step.status == "running"
    label = (label + ("…]" if running else "]")).ljust(label_width)
    style = {"pending": "dim", "running": "cyan"}.get(step.status, "")
    line = Text("  ")
    line.append(label, style=style)
    if bar_cells:
        filled = step.finished_before if step.status != "pending" else 0
        line.append("  " + progress_bar(filled, total, bar_cells), style=style)
    if step.status in _ENDINGS:
        word, word_style = _ENDINGS[step.status]
        line.append(" ")
        line.append(word, style=word_style)
    return _line(line)


def body(state: TurnState, width: int) -> list[RenderableType]:
    out: list[RenderableType] = []
    for block in state.blocks:
        if isinstance(block, TextBlock):
            text = block.text.rstrip()
            if text:
                style = "dim italic" if block.reasoning else ""
                out.append(Text(shown(text, colours=False), style=style))
        elif isinstance(block, ToolLine):
            out.append(tool_line(block))
        elif isinstance(block, PlanBlock):
            out.extend(plan_lines(block, width))
        elif isinstance(block, Notice):
            style = "red" if block.style == "error" else "dim"
            out.append(Text(shown(block.text, colours=False), style=style))
    return out


def memory_lines(state: TurnState, width: int) -> list[Text]:
    """The memory panel: empty unless ``query_memory`` ran this turn."""
    if not state.memory_calls:
        return []
    calls = "1 query" if state.memory_calls == 1 else f"{state.memory_calls} queries"
    head = f"── memory · {len(state.memories)} from {calls} "
    lines = [_line(head + "─" * max(0, width - len(head)), "magenta")]
    if not state.memories and not state.pending_memory:
        lines.append(_line("  (nothing relevant remembered)", "dim"))
    for memory in state.memories:
        lines.append(_memory_line(memory, show_id=width >= 60))
    return lines


def _memory_line(memory: MemoryLine, *, show_id: bool) -> Text:
    line = Text("  ")
    line.append(f"{memory.kind:<10}", style="magenta")
    confidence = f"{memory.confidence}%" if memory.confidence is not None else "–"
    line.append(f" {confidence:>4}")
    ref = memory.memory_id or memory.anchor
    if show_id and ref:
        line.append(f" {ref}", style="dim")
    if memory.note:
        line.append(f" ({memory.note})", style="yellow")
    line.append(f"  {' '.join(memory.text.split())}")
    return _line(line)


def footer(state: TurnState, width: int) -> Text:
    """Tokens and cost of the turn, the chat's total and the run's status, cut to fit."""
    about = "~" if state.estimated else ""  # counted here: the server reported no usage
    parts = [f"{about}{state.prompt_tokens} in / {about}{state.completion_tokens} out tokens"]
    if state.cost:
        parts.append(f"${state.cost:.4f}")
    totals = state.totals
    chat_cost = f" ${totals.cost:.4f}" if totals.cost else ""
    parts.append(f"chat {totals.prompt_tokens + totals.completion_tokens} tokens{chat_cost}")
    status = _STATUS_WORDS.get(state.status, state.status)
    if state.detail:  # "cancelled by the user", not "cancelled: cancelled by the user"
        detail = state.detail
        status = detail if detail.startswith(status) else f"{status}: {detail}"
    parts.append(f"{status} {state.elapsed:.1f} s")
    while len(parts) > 1 and len("── " + " · ".join(parts)) > width:
        parts.pop(1)  # the first part (the turn's tokens) stays
    text = "── " + " · ".join(parts) + " "
    style = "red" if state.status in ("failed", "cancelled") else "dim"
    return _line(text + "─" * max(0, width - len(text)), style)


class TurnView:
    """A renderable for rich's ``Live``: the body's tail above the panel and footer."""

    def __init__(self, state: TurnState, *, full: bool = False) -> None:
        self.state = state
        self.full = full

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = options.max_width
        opts = options.update(width=width, height=None)
        bottom = console.render_lines(
            Group(*memory_lines(self.state, width), footer(self.state, width)), opts, pad=False
        )
        lines = console.render_lines(Group(*body(self.state, width)), opts, pad=False)
        if not self.full:
            height = options.height or console.size.height
            room = max(1, height - len(bottom) - 1)
            lines = lines[-room:]
        yield from _segments([*lines, *bottom])


def _segments(lines: Iterable[list[Segment]]) -> Iterable[Segment]:
    for line in lines:
        yield from line
        yield Segment.line()
