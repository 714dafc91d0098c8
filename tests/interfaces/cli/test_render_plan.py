from __future__ import annotations

import io

from shiyi.agent.plan import PlanState, PlanStepInput
from shiyi.events import (
    Event,
    PlanCreated,
    PlanStep,
    StepComplete,
    StepStart,
    ToolResultEvent,
    UsageEvent,
)
from shiyi.interfaces.cli.render import EventPrinter, progress_bar


def walk() -> list[Event]:
    state = PlanState()
    state.create(
        "find bottlenecks",
        [
            PlanStepInput(title="Read core modules"),
            PlanStepInput(title="Analyse hot spots"),
            PlanStepInput(title="Suggest"),
        ],
    )
    state.update(0, "completed")
    state.update(1, "in_progress")
    state.update(1, "failed")
    state.update(2, "in_progress")
    state.finish("completed")
    return state.drain_events()


def printed(events: list[Event], *, color: bool = False) -> str:
    out = io.StringIO()
    printer = EventPrinter(out, color=color)
    for event in events:
        printer.handle(event)
    return out.getvalue()


def test_plain_output_is_one_line_per_event() -> None:
    assert printed(walk()).splitlines() == [
        "Plan:",
        "  1. Read core modules",
        "  2. Analyse hot spots",
        "  3. Suggest",
        "[1/3 Read core modules…]  ░░░░░░░░░░",
        "[1/3 Read core modules]   ███░░░░░░░ done ✓",
        "[2/3 Analyse hot spots…]  ███░░░░░░░",
        "[2/3 Analyse hot spots]   ██████░░░░ failed ✗",
        "[3/3 Suggest…]            ██████░░░░",
        "[3/3 Suggest]             ██████████ done ✓",
    ]


def test_tool_lines_sit_between_a_step_start_and_its_completion() -> None:
    events: list[Event] = [
        PlanCreated(steps=[PlanStep(title="Read"), PlanStep(title="Fix")]),
        StepStart(index=0),
        ToolResultEvent(call_id="c1", name="read_file", ok=True, summary="40 lines"),
        StepComplete(index=0, status="skipped"),
    ]
    assert printed(events).splitlines() == [
        "Plan:",
        "  1. Read",
        "  2. Fix",
        "[1/2 Read…]  ░░░░░░░░░░",
        "  ✓ read_file (malformed arguments) · 0 ms · 40 lines",
        "[1/2 Read]   █████░░░░░ skipped",
    ]


def test_colour_rewrites_the_open_progress_line() -> None:
    events: list[Event] = [
        PlanCreated(steps=[PlanStep(title="Read")]),
        StepStart(index=0),
        StepComplete(index=0),
    ]
    assert printed(events, color=True) == (
        "Plan:\n"
        "  1. Read\n"
        "\x1b[36m[1/1 Read…]  ░░░░░░░░░░\x1b[0m"
        "\r\x1b[K[1/1 Read]   ██████████ \x1b[32mdone ✓\x1b[0m\n"
    )


def test_colour_closes_the_progress_line_before_other_output() -> None:
    events: list[Event] = [
        PlanCreated(steps=[PlanStep(title="Read")]),
        StepStart(index=0),
        ToolResultEvent(call_id="c1", name="grep", ok=False, summary="no match"),
        StepComplete(index=0, status="failed"),
    ]
    lines = printed(events, color=True).split("\n")
    assert lines[2] == "\x1b[36m[1/1 Read…]  ░░░░░░░░░░\x1b[0m"
    assert lines[3].startswith("  \x1b[31m✗\x1b[0m grep")
    assert lines[4] == "[1/1 Read]   ██████████ \x1b[31mfailed ✗\x1b[0m"


def test_a_step_unknown_to_the_printer_still_prints() -> None:
    assert printed([StepStart(index=1)]) == "[2/2 step 2…]  ░░░░░░░░░░\n"


def test_long_titles_are_shortened() -> None:
    events: list[Event] = [PlanCreated(steps=[PlanStep(title="x" * 60)])]
    assert printed(events).splitlines()[1] == "  1. " + "x" * 39 + "…"


def test_progress_bar_fills_by_finished_share() -> None:
    assert progress_bar(0, 3) == "░" * 10
    assert progress_bar(2, 3) == "█" * 6 + "░" * 4
    assert progress_bar(3, 3) == "█" * 10
    assert progress_bar(0, 0) == "░" * 10


def test_the_footer_marks_estimated_usage() -> None:
    """A server that reports no usage gets the local tokenizer's count, shown with ``~``."""
    out = io.StringIO()
    printer = EventPrinter(out, color=False)
    printer.handle(UsageEvent(prompt_tokens=700, completion_tokens=20, estimated=True))
    printer.handle(UsageEvent(prompt_tokens=100, completion_tokens=5))
    assert printer.footer() == "~800 in / ~25 out tokens"
    exact = EventPrinter(io.StringIO(), color=False)
    exact.handle(UsageEvent(prompt_tokens=7, completion_tokens=2))
    assert exact.footer() == "7 in / 2 out tokens"
