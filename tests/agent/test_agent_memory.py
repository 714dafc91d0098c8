"""The agent with its long-term memory: what was said before a restart is found after it."""

from __future__ import annotations

from pathlib import Path

import pytest

from shiyi.agent import Agent
from shiyi.config import Settings, load_settings
from shiyi.llm.scripted import ScriptedModel, call, reply
from tests.conftest import collect


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return load_settings(cwd=tmp_path, workspace=tmp_path)


async def test_memory_tools_are_registered_and_recall_survives_restart(
    settings: Settings,
) -> None:
    first = Agent.from_settings(settings, model=ScriptedModel([reply("Noted, teal it is.")]))
    assert {"query_memory", "remember", "expand_memory"} <= set(first.tools.names())
    await collect(first.send("My favourite colour is teal and my cat is called Mochi."))
    first.close()

    model = ScriptedModel(
        [reply("", call("query_memory", query="favourite colour", mode="keyword")), reply("teal")]
    )
    second = Agent.from_settings(settings, model=model)
    events = await collect(second.send("What is my favourite colour?"))
    second.close()
    result = next(e for e in events if e.type == "tool_result")
    assert result.ok  # type: ignore[union-attr]
    memory_block = model.requests[1].messages[-1].content
    assert "favourite colour is teal" in memory_block
    assert "anchor run_" in memory_block


async def test_prefetch_hint_reaches_the_system_prompt(settings: Settings) -> None:
    first = Agent.from_settings(settings, model=ScriptedModel([reply("ok")]))
    await collect(first.send("The deploy key rotation happens on 2026-03-01."))
    first.close()
    model = ScriptedModel([reply("March first")])
    second = Agent.from_settings(settings, model=model)
    await collect(second.send("when is the key rotation 2026-03-01?"))
    second.close()
    system = model.requests[0].messages[0].content
    assert "Possibly relevant memories" in system
    assert "deploy key rotation" in system


async def test_remember_tool_stores_a_long_term_fact(settings: Settings) -> None:
    model = ScriptedModel(
        [reply("", call("remember", text="Use pnpm, not npm", kind="convention")), reply("ok")]
    )
    agent = Agent.from_settings(settings, model=model)
    await collect(agent.send("记住这个: use pnpm, not npm"))
    assert agent.memory is not None
    hits = agent.memory.search("pnpm", mode="keyword")
    agent.close()
    assert hits[0].fact_kind == "convention"
    assert hits[0].text == "Use pnpm, not npm"
