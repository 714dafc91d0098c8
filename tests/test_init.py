"""The library's entry point: ``from shiyi import Agent, App, Memory, load_settings``."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

import shiyi
from shiyi.events import TextDelta
from shiyi.llm.scripted import ScriptedModel, ScriptedReply


def test_the_entry_points_are_the_real_classes() -> None:
    from shiyi import Agent, App, Memory, load_settings
    from shiyi.agent.agent import Agent as RealAgent
    from shiyi.app import App as RealApp
    from shiyi.config.loader import load_settings as real_load_settings
    from shiyi.memory.service import Memory as RealMemory

    assert (Agent, App, Memory, load_settings) == (
        RealAgent,
        RealApp,
        RealMemory,
        real_load_settings,
    )
    assert {"Agent", "App", "Memory", "load_settings"} <= set(dir(shiyi))


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="module 'shiyi' has no attribute 'Nope'"):
        shiyi.Nope  # type: ignore[attr-defined]  # noqa: B018


def test_importing_shiyi_loads_none_of_them() -> None:
    script = (
        "import sys, shiyi; heavy = [m for m in ('shiyi.app', 'shiyi.agent', "
        "'shiyi.memory', 'shiyi.config', 'pydantic') if m in sys.modules]; print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_library_example_runs(workspace: Path) -> None:
    """README's library example, on the scripted model instead of a configured one."""
    from shiyi import App, load_settings

    async def ask(app: App) -> str:
        agent = app.agent()
        return "".join([e.text async for e in agent.send("Hi") if isinstance(e, TextDelta)])

    settings = load_settings(workspace=workspace)
    with App.open(settings, model=ScriptedModel([ScriptedReply(text="Hello!")])) as app:
        assert asyncio.run(ask(app)) == "Hello!"
