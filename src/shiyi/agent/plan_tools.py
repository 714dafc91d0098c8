"""Plan tools: the model announces a multi-step plan and reports progress on it.

The tools only change the run's :class:`PlanState`; the events that show the plan to the
user are queued there and emitted by the run loop (``PlanState.drain_events``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from shiyi.agent.plan import PlanState, PlanStepInput, UpdateStatus
from shiyi.llm.types import ToolSpec
from shiyi.tools.base import FunctionTool, Tool, tool


def _inline_refs(node: Any, defs: dict[str, Any]) -> Any:
    """``node`` with every ``$ref`` replaced by its definition and nested titles dropped."""
    if isinstance(node, list):
        return [_inline_refs(item, defs) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        return _inline_refs(defs[node["$ref"].rsplit("/", 1)[-1]], defs)
    return {
        key: _inline_refs(value, defs)
        for key, value in node.items()
        if not _is_schema_noise(key, value)
    }


def _is_schema_noise(key: str, value: Any) -> bool:
    # A string "title" is pydantic's generated label; a dict under "title" is a property
    # that happens to be called title (as in a plan step) and must stay.
    return key == "$defs" or (key == "title" and isinstance(value, str))


_FLAT: dict[object, dict[str, Any]] = {}


class _FlatSchemaTool(FunctionTool):
    """A function tool whose schema has no ``$defs``/``$ref``.

    Pydantic puts nested models in ``$defs``; small local models read the schema as text
    and follow a flat one far better, and some OpenAI-compatible servers reject refs.
    """

    def __init__(self, func: Callable[..., Awaitable[str]], *, name: str) -> None:
        super().__init__(func, name=name, sequential=True)
        base = super().spec
        flat = _FLAT.get(func.__code__)
        if flat is None:  # one per function: an agent per session must not redo it
            flat = _FLAT[func.__code__] = _inline_refs(
                base.parameters, base.parameters.get("$defs", {})
            )
        self._flat_spec = ToolSpec(base.name, base.description, flat)  # shared, read-only

    @property
    def spec(self) -> ToolSpec:
        return self._flat_spec


def _describe(state: PlanState, index: int, word: str = "step") -> str:
    return f"{word} {index + 1} ({state.steps[index].title})"


def _created_message(state: PlanState) -> str:
    total = len(state.steps)
    return (
        f"Plan created with {total} step{'s' if total != 1 else ''}; "
        f"{_describe(state, 0)} is in progress. "
        "Call update_plan as you finish each step."
    )


def _updated_message(state: PlanState, index: int) -> str:
    done, total = state.progress()
    text = f"{_describe(state, index, 'Step')} is {state.steps[index].status}. "
    text += f"Progress: {done}/{total}."
    current = state.current_index()
    if current is not None and current != index:
        text += f" {_describe(state, current, 'Step')} is in progress."
    elif done == total:
        text += " All steps are finished; give the user your final answer."
    return text


def plan_tools(state_provider: Callable[[], PlanState]) -> list[Tool]:
    """``create_plan`` and ``update_plan`` acting on the plan of the current run.

    ``state_provider`` is called on every use, so one registry can serve many runs.
    """

    async def create_plan(goal: str, steps: list[PlanStepInput]) -> str:
        """Announce a step-by-step plan before working on a complex task.

        Use it when the task changes several files, has several dependent sub-tasks, or
        needs analysis first and implementation after. Do not use it for simple questions,
        single-file edits or anything you can do in one or two tool calls. Step 1 starts
        right away; report progress with update_plan. Calling it again replaces the plan.

        Args:
            goal: The overall goal in one sentence.
            steps: 2-8 ordered steps, each with a short title, a description and the tools
                you expect to use.
        """
        state = state_provider()
        state.create(goal, steps)
        return _created_message(state)

    create_tool = _FlatSchemaTool(create_plan, name="create_plan")

    @tool(sequential=True, name="update_plan")
    async def update_plan(step: int, status: UpdateStatus, note: str = "") -> str:
        """Report progress on the current plan, one step at a time.

        Mark a step completed as soon as it is done, and in_progress when you start it
        (starting a step completes the one in progress). Use failed when a step cannot be
        done and skipped when it turned out to be unnecessary.

        Args:
            step: The step number as shown in the plan, counting from 1.
            status: in_progress, completed, failed or skipped.
            note: Optional short remark, e.g. what was found or why it failed.
        """
        state = state_provider()
        index = step - 1
        state.update(index, status, note)
        return _updated_message(state, index)

    tools: list[FunctionTool] = [create_tool, update_plan]
    return list(tools)
