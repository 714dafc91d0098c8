"""The compact tool profile: fewer tools, one-line descriptions, the same behaviour."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shiyi.app import App
from shiyi.config import Settings
from shiyi.errors import ToolArgumentsError
from shiyi.tools.base import ToolContext
from shiyi.tools.builtins import every_builtin_tool
from shiyi.tools.profiles import COMPACT_TOOLS, CompactTool, compact, first_sentence


def schemas_size(tools: list[object]) -> int:
    return len(json.dumps([t.spec.to_openai() for t in tools]))  # type: ignore[attr-defined]


async def test_a_compact_tool_runs_exactly_as_the_full_one(workspace: Path) -> None:
    (workspace / "notes.txt").write_text("alpha\nbeta\n")
    [full] = [t for t in every_builtin_tool() if t.spec.name == "read_file"]
    small = CompactTool(full)
    ctx = ToolContext.for_dir(workspace)
    arguments = {"path": "notes.txt"}
    assert await small.invoke(small.validate(arguments), ctx) == await full.invoke(
        full.validate(arguments), ctx
    )
    assert "start_line" not in small.spec.parameters["properties"]  # offered: required only
    within = {"path": "notes.txt", "start_line": 2}  # still accepted when a model sends it
    assert await small.invoke(small.validate(within), ctx) == await full.invoke(
        full.validate(within), ctx
    )
    with pytest.raises(ToolArgumentsError):
        small.validate({"path": 3, "surprise": True})
    assert small.read_only and small.timeout == full.timeout


def test_descriptions_are_one_sentence_and_parameters_bare() -> None:
    tools = compact(every_builtin_tool())
    assert [t.spec.name for t in tools] == [n for n in COMPACT_TOOLS if n in {
        t.spec.name for t in every_builtin_tool()}]  # fmt: skip
    for tool in tools:
        assert "\n" not in tool.spec.description
        assert "description" not in json.dumps(tool.spec.parameters)
        full = tool.inner.spec.parameters  # type: ignore[attr-defined]
        assert set(tool.spec.parameters["properties"]) == set(full.get("required", ()))
    assert schemas_size(tools) < 0.4 * schemas_size(every_builtin_tool())  # type: ignore[arg-type]


def test_first_sentence() -> None:
    assert first_sentence("Read a file. Use offset for big ones.\n\nArgs: x") == "Read a file."
    assert first_sentence("  No full stop here  ") == "No full stop here"


def test_the_embedded_small_model_gets_the_compact_profile(settings: Settings) -> None:
    settings.memory.enabled = False
    with App.open(settings) as app:  # the real LocalModel, not loaded: its file size decides
        assert app.tool_profile == "compact"
        names = app.agent().tools.names()
    assert names == ["read_file", "write_file", "edit_file", "list_dir", "grep", "bash"]


def test_the_profile_can_be_forced_either_way(settings: Settings) -> None:
    settings.memory.enabled = False
    settings.tools.profile = "full"
    with App.open(settings) as app:
        assert "repo_map" in app.agent().tools.names()
    settings.tools.profile = "compact"
    settings.tools.enabled = ["read_file", "repo_map"]  # named tools stay, shortened
    with App.open(settings) as app:
        tools = app.agent().tools
        assert tools.names() == ["read_file", "repo_map"]
        assert all("\n" not in spec.description for spec in tools.specs())


def test_models_that_are_not_small_and_embedded_get_everything(settings: Settings) -> None:
    from shiyi.llm.scripted import ScriptedModel

    settings.memory.enabled = False
    with App.open(settings, model=ScriptedModel()) as app:
        assert app.tool_profile == "full"
        assert len(app.agent().tools.names()) > len(COMPACT_TOOLS)
