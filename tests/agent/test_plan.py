from __future__ import annotations

import pytest

from shiyi.agent.plan import MAX_STEPS, PlanState, PlanStepInput
from shiyi.errors import ToolError
from shiyi.events import (
    Event,
    PlanCreated,
    PlanStep,
    ResponseStart,
    StepComplete,
    StepStart,
)


def three_steps() -> list[PlanStepInput]:
    return [
        PlanStepInput(title="Read", description="read the code", expected_tools=["read_file"]),
        PlanStepInput(title="Analyse"),
        PlanStepInput(title="Suggest"),
    ]


def planned() -> PlanState:
    state = PlanState()
    state.create("find bottlenecks", three_steps())
    state.drain_events()
    return state


def in_progress(state: PlanState) -> list[int]:
    return [i for i, step in enumerate(state.steps) if step.status == "in_progress"]


def test_create_announces_plan_mode_and_starts_step_0() -> None:
    state = PlanState()
    events = state.create("find bottlenecks", three_steps())
    assert events == [
        ResponseStart(mode="plan"),
        PlanCreated(
            steps=[
                PlanStep(title="Read", description="read the code"),
                PlanStep(title="Analyse"),
                PlanStep(title="Suggest"),
            ]
        ),
        StepStart(index=0),
    ]
    assert state.active
    assert state.goal == "find bottlenecks"
    assert state.steps[0].expected_tools == ["read_file"]
    assert in_progress(state) == [0]


def test_full_walk_emits_the_documented_sequence() -> None:
    state = PlanState()
    state.create("g", three_steps())
    state.update(0, "completed")
    state.update(1, "in_progress")
    state.update(1, "completed")
    state.update(2, "in_progress")
    state.finish("completed")
    assert [(e.type, getattr(e, "index", None)) for e in state.drain_events()] == [
        ("response_start", None),
        ("plan_created", None),
        ("step_start", 0),
        ("step_complete", 0),
        ("step_start", 1),
        ("step_complete", 1),
        ("step_start", 2),
        ("step_complete", 2),
    ]
    assert state.drain_events() == []
    assert state.progress() == (3, 3)


def test_starting_a_step_completes_the_running_one_first() -> None:
    state = planned()
    events = state.update(2, "in_progress")
    assert events == [StepComplete(index=0, status="done"), StepStart(index=2)]
    assert state.steps[0].status == "completed"
    assert in_progress(state) == [2]


def test_at_most_one_step_in_progress_through_any_sequence() -> None:
    state = planned()
    for index in (1, 2, 0, 2, 1):
        state.update(index, "in_progress")
        assert len(in_progress(state)) == 1


def test_failed_and_skipped_map_to_event_statuses() -> None:
    state = planned()
    assert state.update(0, "failed", note="file missing") == [
        StepComplete(index=0, status="failed")
    ]
    assert state.update(1, "skipped") == [StepComplete(index=1, status="skipped")]
    assert state.steps[0].note == "file missing"
    assert state.progress() == (2, 3)
    assert in_progress(state) == []


def test_repeating_a_status_is_a_no_op() -> None:
    state = planned()
    assert state.update(0, "in_progress") == []
    state.update(0, "completed")
    assert state.update(0, "completed", note="again") == []
    assert state.steps[0].note == "again"


def test_a_finished_step_can_be_reopened() -> None:
    state = planned()
    state.update(0, "failed")
    assert state.update(0, "in_progress") == [StepStart(index=0)]
    assert state.update(0, "completed") == [StepComplete(index=0, status="done")]


def test_changing_a_finished_step_to_another_end_state_is_refused() -> None:
    state = planned()
    state.update(0, "completed")
    with pytest.raises(ToolError, match="Step 1 is already completed; set it to in_progress"):
        state.update(0, "failed")


def test_complete_and_advance_moves_to_the_next_pending_step() -> None:
    state = planned()
    state.update(1, "skipped")
    events = state.complete_and_advance()
    assert events == [StepComplete(index=0, status="done"), StepStart(index=2)]
    state.complete_and_advance()
    assert in_progress(state) == []
    with pytest.raises(ToolError, match="No step is in progress"):
        state.complete_and_advance()


@pytest.mark.parametrize(
    ("run_status", "expected"), [("completed", "done"), ("failed", "failed"), ("stuck", "failed")]
)
def test_finish_closes_the_running_step(run_status: str, expected: str) -> None:
    state = planned()
    events: list[Event] = state.finish(run_status)  # type: ignore[arg-type]
    assert events == [StepComplete(index=0, status=expected)]  # type: ignore[arg-type]
    assert state.steps[1].status == "pending"
    assert state.finish("completed") == []


def test_finish_without_a_plan_emits_nothing() -> None:
    assert PlanState().finish("completed") == []


def test_index_errors_name_the_valid_steps() -> None:
    state = planned()
    with pytest.raises(ToolError, match=r"Step 4 does not exist; the plan has steps 1-3\."):
        state.update(3, "completed")
    with pytest.raises(ToolError, match="Step 0 does not exist"):
        state.update(-1, "completed")


def test_update_without_a_plan_asks_for_create_plan() -> None:
    with pytest.raises(ToolError, match="call create_plan first"):
        PlanState().update(0, "completed")


def test_create_rejects_empty_and_oversized_plans() -> None:
    with pytest.raises(ToolError, match="at least one step"):
        PlanState().create("g", [])
    too_many = [PlanStepInput(title=f"s{i}") for i in range(MAX_STEPS + 1)]
    with pytest.raises(ToolError, match=f"at most {MAX_STEPS} steps"):
        PlanState().create("g", too_many)


def test_replacing_a_plan_skips_the_running_step_and_announces_mode_once() -> None:
    state = planned()
    events = state.create("new goal", [PlanStepInput(title="Only")])
    assert events == [
        StepComplete(index=0, status="skipped"),
        PlanCreated(steps=[PlanStep(title="Only")]),
        StepStart(index=0),
    ]
    assert state.goal == "new goal"
    assert len(state.steps) == 1


def test_render_shows_marks_numbers_and_notes() -> None:
    state = planned()
    state.update(0, "completed", note="3 modules")
    state.update(1, "in_progress")
    assert state.render() == (
        "Plan (1/3 finished): find bottlenecks\n"
        "1. [x] Read — 3 modules\n"
        "2. [>] Analyse\n"
        "3. [ ] Suggest"
    )
    state.update(1, "failed")
    state.update(2, "skipped")
    assert state.render().splitlines()[2:] == ["2. [!] Analyse", "3. [-] Suggest"]
    assert PlanState().render() == ""
