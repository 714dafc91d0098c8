from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from shiyi.agent.plan import PlanState
from shiyi.agent.plan_tools import plan_tools
from shiyi.errors import ToolArgumentsError, ToolError
from shiyi.events import PlanCreated, PlanStep, ResponseStart, StepComplete, StepStart
from shiyi.tools.base import Tool, ToolContext

STEPS: list[dict[str, Any]] = [
    {"title": "Read", "description": "read the code", "expected_tools": ["read_file"]},
    {"title": "Analyse"},
    {"title": "Suggest"},
]


@pytest.fixture
def state() -> PlanState:
    return PlanState()


@pytest.fixture
def tools(state: PlanState) -> dict[str, Tool]:
    return {item.spec.name: item for item in plan_tools(lambda: state)}


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext.for_dir(tmp_path)


async def call(item: Tool, ctx: ToolContext, **arguments: Any) -> str:
    return await item.invoke(item.validate(arguments), ctx)


def test_create_plan_schema_is_flat_and_complete(tools: dict[str, Tool]) -> None:
    params = tools["create_plan"].spec.parameters
    assert "$defs" not in params
    assert params["required"] == ["goal", "steps"]
    steps = params["properties"]["steps"]
    assert steps["type"] == "array"
    item = steps["items"]
    assert item["type"] == "object"
    assert item["required"] == ["title"]
    assert item["additionalProperties"] is False
    assert set(item["properties"]) == {"title", "description", "expected_tools"}
    assert item["properties"]["expected_tools"]["items"] == {"type": "string"}
    assert "title" not in item["properties"]["title"]  # generated labels are dropped


def test_update_plan_schema(tools: dict[str, Tool]) -> None:
    params = tools["update_plan"].spec.parameters
    assert params["required"] == ["step", "status"]
    assert params["properties"]["status"]["enum"] == [
        "in_progress",
        "completed",
        "failed",
        "skipped",
    ]
    assert params["properties"]["note"]["default"] == ""


def test_tools_are_sequential_and_say_when_to_plan(tools: dict[str, Tool]) -> None:
    assert all(item.sequential and not item.read_only for item in tools.values())
    description = tools["create_plan"].spec.description
    assert "several files" in description
    assert "single-file edits" in description


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ({"goal": "g"}, "steps: Field required"),
        ({"goal": "g", "steps": "read, analyse"}, "steps: Input should be a valid list"),
        ({"goal": "g", "steps": [{"name": "x"}]}, "steps.0.title: Field required"),
        ({"goal": "g", "steps": [{"title": ""}]}, "steps.0.title: String should have at least"),
    ],
)
def test_create_plan_rejects_bad_steps(
    tools: dict[str, Tool], arguments: dict[str, Any], problem: str
) -> None:
    with pytest.raises(ToolArgumentsError, match=problem):
        tools["create_plan"].validate(arguments)


def test_update_plan_rejects_unknown_status(tools: dict[str, Tool]) -> None:
    with pytest.raises(ToolArgumentsError, match="status: Input should be 'in_progress'"):
        tools["update_plan"].validate({"step": 1, "status": "done"})


async def test_tools_queue_events_for_the_run_loop(
    tools: dict[str, Tool], state: PlanState, ctx: ToolContext
) -> None:
    created = await call(tools["create_plan"], ctx, goal="find bottlenecks", steps=STEPS)
    assert created == (
        "Plan created with 3 steps; step 1 (Read) is in progress. "
        "Call update_plan as you finish each step."
    )
    assert state.drain_events() == [
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
    done = await call(tools["update_plan"], ctx, step=1, status="completed")
    assert done == "Step 1 (Read) is completed. Progress: 1/3."
    started = await call(tools["update_plan"], ctx, step=2, status="in_progress")
    assert started == "Step 2 (Analyse) is in_progress. Progress: 1/3."
    await call(tools["update_plan"], ctx, step=3, status="in_progress")
    assert state.drain_events() == [
        StepComplete(index=0, status="done"),
        StepStart(index=1),
        StepComplete(index=1, status="done"),
        StepStart(index=2),
    ]
    last = await call(tools["update_plan"], ctx, step=3, status="failed", note="no data")
    assert last == (
        "Step 3 (Suggest) is failed. Progress: 3/3. "
        "All steps are finished; give the user your final answer."
    )
    assert state.drain_events() == [StepComplete(index=2, status="failed")]


async def test_skipping_another_step_mentions_the_running_one(
    tools: dict[str, Tool], ctx: ToolContext
) -> None:
    await call(tools["create_plan"], ctx, goal="g", steps=STEPS)
    text = await call(tools["update_plan"], ctx, step=3, status="skipped")
    assert text == "Step 3 (Suggest) is skipped. Progress: 1/3. Step 1 (Read) is in progress."


async def test_update_errors_speak_in_step_numbers(
    tools: dict[str, Tool], ctx: ToolContext
) -> None:
    with pytest.raises(ToolError, match="call create_plan first"):
        await call(tools["update_plan"], ctx, step=1, status="completed")
    await call(tools["create_plan"], ctx, goal="g", steps=STEPS)
    with pytest.raises(ToolError, match="Step 4 does not exist; the plan has steps 1-3"):
        await call(tools["update_plan"], ctx, step=4, status="completed")
