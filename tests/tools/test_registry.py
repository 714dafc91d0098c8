from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from shiyi.config.settings import ToolSettings
from shiyi.errors import ConfigError, ToolError
from shiyi.llm.types import ToolCall
from shiyi.tools.base import FunctionTool, ToolContext, tool
from shiyi.tools.builtins import builtin_tools, default_registry
from shiyi.tools.registry import ToolOutcome, ToolRegistry

Interval = tuple[float, float]
intervals: dict[str, Interval] = {}


async def _timed(label: str, seconds: float) -> str:
    started = time.perf_counter()
    await asyncio.sleep(seconds)
    intervals[label] = (started, time.perf_counter())
    return f"done {label}"


@tool(read_only=True)
async def slow_read(label: str, seconds: float = 0.2) -> str:
    """Sleep, then report.

    Args:
        label: Name of the call.
        seconds: How long to sleep.
    """
    return await _timed(label, seconds)


@tool(sequential=True)
async def slow_write(label: str, seconds: float = 0.1) -> str:
    """Sleep without overlapping other sequential calls.

    Args:
        label: Name of the call.
        seconds: How long to sleep.
    """
    return await _timed(label, seconds)


@tool(timeout=0.1)
async def hangs() -> str:
    await asyncio.sleep(30)
    return "never"


@tool
def loud(size: int) -> str:
    return "HEAD" + "x" * size + "TAIL"


@tool
def refuses() -> str:
    raise ToolError("cannot do that; try something else")


@tool
def buggy() -> str:
    raise ValueError("boom")


def overlap(a: Interval, b: Interval) -> bool:
    return a[0] < b[1] and b[0] < a[1]


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext.for_dir(tmp_path, ToolSettings(output_cap_chars=300))


@pytest.fixture
def registry() -> ToolRegistry:
    intervals.clear()
    return ToolRegistry([slow_read, slow_write, hangs, loud, refuses, buggy])


def call(name: str, arguments: str, call_id: str = "c1") -> ToolCall:
    return ToolCall(call_id, name, arguments)


async def test_success(registry: ToolRegistry, ctx: ToolContext) -> None:
    outcome = await registry.execute(call("slow_read", '{"label": "a", "seconds": 0}'), ctx)
    assert outcome.ok
    assert outcome.content == "done a"
    assert outcome.summary == "done a"
    assert outcome.arguments == {"label": "a", "seconds": 0}
    assert outcome.duration_ms >= 0


@pytest.mark.parametrize("broken", ['{"label": "a", ', "{'label': 'a'}", '{"label": "a"}}'])
async def test_malformed_json_is_explained_without_echoing_it(
    registry: ToolRegistry, ctx: ToolContext, broken: str
) -> None:
    outcome = await registry.execute(call("slow_read", broken), ctx)
    assert not outcome.ok
    assert "were not valid JSON" in outcome.content
    assert "Call slow_read again with a single JSON object" in outcome.content
    assert broken not in outcome.content
    assert outcome.arguments is None


async def test_arguments_must_be_an_object(registry: ToolRegistry, ctx: ToolContext) -> None:
    outcome = await registry.execute(call("slow_read", '["a"]'), ctx)
    assert not outcome.ok
    assert "must be a JSON object, not list" in outcome.content


async def test_empty_arguments_mean_no_arguments(registry: ToolRegistry, ctx: ToolContext) -> None:
    outcome = await registry.execute(call("slow_read", ""), ctx)
    assert not outcome.ok
    assert "label: Field required" in outcome.content


async def test_unknown_tool_lists_the_available_ones(
    registry: ToolRegistry, ctx: ToolContext
) -> None:
    outcome = await registry.execute(call("teleport", "{}"), ctx)
    assert not outcome.ok
    assert "there is no tool named 'teleport'" in outcome.content
    assert "slow_read" in outcome.content


async def test_tool_errors_and_bugs_become_error_outcomes(
    registry: ToolRegistry, ctx: ToolContext
) -> None:
    refused = await registry.execute(call("refuses", "{}"), ctx)
    assert (refused.ok, refused.content) == (False, "Error: cannot do that; try something else")
    crashed = await registry.execute(call("buggy", "{}"), ctx)
    assert not crashed.ok
    assert crashed.content == "Error: buggy failed: ValueError: boom"


async def test_read_only_calls_run_concurrently(registry: ToolRegistry, ctx: ToolContext) -> None:
    calls = [call("slow_read", f'{{"label": "r{i}"}}', f"c{i}") for i in range(3)]
    outcomes = await registry.execute_many(calls, ctx)
    assert [o.content for o in outcomes] == ["done r0", "done r1", "done r2"]
    latest_start = max(start for start, _ in intervals.values())
    earliest_end = min(end for _, end in intervals.values())
    assert latest_start < earliest_end


async def test_sequential_calls_never_overlap(registry: ToolRegistry, ctx: ToolContext) -> None:
    calls = [
        call("slow_write", '{"label": "w0"}', "c0"),
        call("slow_read", '{"label": "r0"}', "c1"),
        call("slow_write", '{"label": "w1"}', "c2"),
        call("slow_read", '{"label": "r1"}', "c3"),
    ]
    seen: list[ToolOutcome] = []
    outcomes = await registry.execute_many(calls, ctx, on_done=seen.append)
    assert [o.call_id for o in outcomes] == ["c0", "c1", "c2", "c3"]
    assert sorted(o.call_id for o in seen) == ["c0", "c1", "c2", "c3"]
    for writer in ("w0", "w1"):
        others = [interval for label, interval in intervals.items() if label != writer]
        assert not any(overlap(intervals[writer], other) for other in others)
    assert overlap(intervals["r0"], intervals["r1"])


async def test_per_tool_timeout(registry: ToolRegistry, ctx: ToolContext) -> None:
    started = time.perf_counter()
    outcome = await registry.execute(call("hangs", "{}"), ctx)
    assert time.perf_counter() - started < 5
    assert not outcome.ok
    assert "hangs did not finish within 0.1 s and was stopped" in outcome.content


async def test_default_timeout_from_settings(registry: ToolRegistry, tmp_path: Path) -> None:
    ctx = ToolContext.for_dir(tmp_path, ToolSettings(default_timeout=0.05))
    outcome = await registry.execute(call("slow_read", '{"label": "a", "seconds": 5}'), ctx)
    assert not outcome.ok
    assert "did not finish within 0.05 s" in outcome.content


async def test_output_capping_keeps_head_and_tail(registry: ToolRegistry, ctx: ToolContext) -> None:
    outcome = await registry.execute(call("loud", '{"size": 5000}'), ctx)
    assert outcome.ok
    assert len(outcome.content) <= 300
    assert outcome.content.startswith("HEAD")
    assert outcome.content.endswith("TAIL")
    assert "characters omitted" in outcome.content


def test_duplicate_names_are_refused() -> None:
    with pytest.raises(ValueError, match="already registered"):
        ToolRegistry([loud, loud])


def test_lookup_helpers(registry: ToolRegistry) -> None:
    assert "loud" in registry
    assert registry.get("loud") is loud
    assert registry.get("nope") is None
    assert [spec.name for spec in registry.specs()] == registry.names()


# --- the built-in set -------------------------------------------------------------------

BUILTINS = [
    "read_file", "write_file", "edit_file", "list_dir", "grep", "bash", "web_search", "repo_map",
]  # fmt: skip


def test_builtin_tools() -> None:
    tools = builtin_tools()
    assert [t.spec.name for t in tools] == BUILTINS
    for item in tools:
        assert isinstance(item, FunctionTool)
        assert item.spec.description
        assert "ctx" not in item.spec.parameters["properties"]
        for prop in item.spec.parameters["properties"].values():
            assert prop.get("description"), item.spec.name
    flags = {t.spec.name: (t.read_only, t.sequential) for t in tools}
    assert flags["read_file"] == flags["list_dir"] == flags["grep"] == (True, False)
    assert flags["web_search"] == (True, False)
    assert flags["repo_map"] == (True, False)
    assert flags["write_file"] == flags["edit_file"] == flags["bash"] == (False, True)


def test_enabled_filters_and_unknown_names_are_errors() -> None:
    chosen = builtin_tools(ToolSettings(enabled=["grep", "read_file"]))
    assert [t.spec.name for t in chosen] == ["read_file", "grep"]
    with pytest.raises(ConfigError, match=r"unknown tool\(s\): telnet.*read_file"):
        builtin_tools(ToolSettings(enabled=["read_file", "telnet"]))


def test_default_registry() -> None:
    assert default_registry(ToolSettings()).names() == BUILTINS
    assert default_registry(ToolSettings(enabled=[])).names() == []
