"""The terminal UI's event -> state folding and its layout, rendered without a terminal."""

from __future__ import annotations

import io

from rich.console import Console

from shiyi.events import (
    Event,
    PlanCreated,
    PlanStep,
    RunEnd,
    StepComplete,
    StepStart,
    TextDelta,
    ToolCallEvent,
    ToolResultEvent,
    UsageEvent,
)
from shiyi.interfaces.cli.tui_layout import TurnView
from shiyi.interfaces.cli.tui_state import MemoryLine, ToolLine, TurnState, parse_memory_block
from shiyi.memory.models import Anchor, MemoryHit
from shiyi.memory.recall.present import format_hits

NOW = 1_700_000_000.0


def memory_result() -> str:
    anchor = Anchor("ses_1", "run_ab12", 3, 0, "response", NOW - 7200)
    hits = [
        MemoryHit("fact_pref", "fact", "I prefer short answers (really)", NOW,
                  fact_kind="preference", confidence=0.9),
        MemoryHit("fact_old", "fact", "lives in Berlin", NOW, fact_kind="semantic",
                  confidence=0.8, status="superseded", valid_to=NOW - 86400, anchor=anchor),
        MemoryHit("evt_1", "event", "user: deploy went fine", NOW - 7200, anchor=anchor),
    ]  # fmt: skip
    return format_hits(hits, now=NOW)


def test_memory_block_becomes_one_line_per_memory() -> None:
    assert parse_memory_block(memory_result()) == [
        MemoryLine("preference", "I prefer short answers (really)", 90, "fact_pref"),
        MemoryLine(
            "context", "lives in Berlin", 80, "fact_old", "run_ab12:3:0", note="no longer true"
        ),
        MemoryLine("episode", "user: deploy went fine", anchor="run_ab12:3:0"),
    ]
    assert parse_memory_block("<memory>\n  (nothing relevant remembered)\n</memory>") == []
    assert parse_memory_block("Error: memory is off") == []


def plan_run() -> list[Event]:
    return [
        TextDelta(text="Let me "),
        TextDelta(text="plan."),
        PlanCreated(steps=[PlanStep(title=t) for t in ("Read", "Recall", "Say")]),
        StepStart(index=0),
        ToolCallEvent(call_id="c1", name="read_file", args={"path": "a.txt"}),
        ToolResultEvent(call_id="c1", name="read_file", ok=True, summary="1| x", duration_ms=3),
        StepComplete(index=0),
        StepStart(index=1),
        ToolCallEvent(call_id="c2", name="query_memory", args={"query": "answers"}),
        ToolResultEvent(call_id="c2", name="query_memory", ok=True, summary="<memory>"),
        UsageEvent(prompt_tokens=1200, completion_tokens=30, cost=0.0021),
    ]  # fmt: skip


def screen(state: TurnState, width: int, *, full: bool = True, height: int = 40) -> list[str]:
    out = io.StringIO()
    console = Console(file=out, width=width, height=height, color_system=None)
    console.print(TurnView(state, full=full))
    return out.getvalue().splitlines()


def test_a_plan_run_lays_out_steps_tools_memories_and_footer() -> None:
    state = TurnState()
    for event in plan_run():
        state.handle(event)
    assert state.pending_memory == ["c2"]
    state.add_memories("c2", memory_result())
    lines = screen(state, 80)
    assert lines[:7] == [
        "Let me plan.",
        "Plan:",
        "  [1/3 Read]     ███░░░░░░░ done ✓",
        "      ✓ read_file path=a.txt · 3 ms · 1| x",
        "  [2/3 Recall…]  ███░░░░░░░",
        "      ✓ query_memory query=answers · 0 ms · → memory panel",
        "  [3/3 Say]      ░░░░░░░░░░",
    ]
    assert lines[7].startswith("── memory · 3 from 1 query ──")
    assert lines[8].split() == ["preference", "90%", "fact_pref", "I", "prefer", "short", "answers",
                                "(really)"]  # fmt: skip
    assert "(no longer true)" in lines[9]
    assert lines[11].startswith("── 1200 in / 30 out tokens · $0.0021 · chat 1230 tokens $0.0021")
    assert "running" in lines[11]
    assert all(len(line) <= 80 for line in lines)


def test_run_end_marks_unfinished_tools_and_status() -> None:
    state = TurnState()
    for event in plan_run()[:5]:
        state.handle(event)
    state.handle(RunEnd(run_id="r", status="cancelled", detail="cancelled by the user"))
    [tool] = state.tool_lines()
    assert tool == ToolLine("c1", "read_file", "path=a.txt", "failed", summary="did not finish")
    assert "· cancelled by the user " in screen(state, 80)[-1]
    state.handle(RunEnd(run_id="r", status="failed", detail="model unreachable"))
    assert "· failed: model unreachable " in screen(state, 80)[-1]


def test_narrow_screens_drop_bars_and_ids_but_keep_steps() -> None:
    state = TurnState()
    for event in plan_run():
        state.handle(event)
    state.add_memories("c2", memory_result())
    lines = screen(state, 36)
    assert all(len(line) <= 36 for line in lines)
    assert "  [1/3 Read]    done ✓" in lines
    assert not any("█" in line or "fact_pref" in line for line in lines)
    assert lines[-1].startswith("── 1200 in / 30 out tokens")


def test_live_view_keeps_the_newest_lines_and_the_footer() -> None:
    state = TurnState()
    state.handle(TextDelta(text="\n".join(f"line {n}" for n in range(30))))
    lines = screen(state, 80, full=False, height=10)
    assert len(lines) == 9
    assert lines[:8] == [f"line {n}" for n in range(22, 30)]
    assert lines[-1].startswith("── 0 in / 0 out tokens")


def test_estimated_usage_is_shown_as_approximate() -> None:
    state = TurnState()
    state.handle(UsageEvent(prompt_tokens=812, completion_tokens=40, estimated=True))
    assert screen(state, 80)[-1].startswith("── ~812 in / ~40 out tokens")
