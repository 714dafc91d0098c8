"""The agent's context engineering end to end with the scripted model."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from shiyi.agent import Agent
from shiyi.config import Settings, load_settings
from shiyi.llm.scripted import ScriptedModel, ScriptStep, call, reply
from tests.conftest import AppOpener, collect
from tests.support.requests import run_context


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    loaded = load_settings(cwd=workspace, workspace=workspace)
    loaded.memory.enabled = False
    return loaded


AgentWith = Callable[..., tuple[Agent, ScriptedModel]]


@pytest.fixture
def agent_with(open_app: AppOpener) -> AgentWith:
    """An agent of the composition root on a scripted main model, and that model."""

    def make(settings: Settings, *steps: ScriptStep) -> tuple[Agent, ScriptedModel]:
        app = open_app(settings, *steps)
        assert isinstance(app.models.main, ScriptedModel)
        return app.agent(), app.models.main

    return make


async def test_scripted_plan_run_emits_the_exact_event_sequence(
    settings: Settings, agent_with: AgentWith
) -> None:
    steps = [{"title": "Read"}, {"title": "Change"}, {"title": "Test"}]
    agent, _ = agent_with(
        settings,
        reply("", call("create_plan", goal="fix the bug", steps=steps)),
        reply("", call("update_plan", step=1, status="completed")),
        reply("", call("update_plan", step=2, status="in_progress")),
        reply(
            "",
            call("update_plan", step=2, status="completed"),
            call("update_plan", step=3, status="in_progress"),
        ),
        reply("All done."),
    )
    events = await collect(agent.send("fix the bug"))
    agent.close()
    shape = [
        (
            e.type,
            getattr(e, "index", None),
            getattr(e, "status", None) if e.type == "step_complete" else None,
        )
        for e in events
        if e.type not in ("tool_call", "tool_result", "usage", "text_delta")
    ]
    assert shape == [
        ("routed", None, None),
        ("run_start", None, None),
        ("response_start", None, None),
        ("plan_created", None, None),
        ("step_start", 0, None),
        ("step_complete", 0, "done"),
        ("step_start", 1, None),
        ("step_complete", 1, "done"),
        ("step_start", 2, None),
        ("step_complete", 2, "done"),
        ("response_end", None, None),
        ("run_end", None, None),
    ]
    assert events[2].mode == "plan"  # type: ignore[union-attr]


async def test_direct_answers_announce_direct_mode(
    settings: Settings, agent_with: AgentWith
) -> None:
    agent, _ = agent_with(settings, reply("Hello!"))
    events = await collect(agent.send("hi"))
    agent.close()
    types = [e.type for e in events]
    assert types[:4] == ["routed", "run_start", "response_start", "text_delta"]
    assert events[2].mode == "direct"  # type: ignore[union-attr]


async def test_complex_request_gets_plan_guidance_simple_one_does_not(
    settings: Settings, agent_with: AgentWith
) -> None:
    agent, model = agent_with(settings, reply("ok"), reply("ok"))
    await collect(agent.send("先读取代码，再重构解析器，然后运行测试"))
    await collect(agent.send("thanks"))
    agent.close()
    assert "create_plan" in model.requests[0].messages[0].content  # the tools line
    assert "[Task planning mode]" in run_context(model.requests[0])
    assert "[Task planning mode]" not in run_context(model.requests[1])
    assert "[Task planning mode]" not in model.requests[0].messages[0].content


async def test_repeated_read_is_served_from_tool_memory_until_the_file_changes(
    settings: Settings, agent_with: AgentWith
) -> None:
    target = settings.workspace / "notes.txt"
    target.write_text("alpha\n")
    agent, model = agent_with(
        settings,
        reply("", call("read_file", path="notes.txt")),
        reply("", call("read_file", path="./notes.txt")),
        reply("done"),
    )
    events = await collect(agent.send("read it twice"))
    results = [e for e in events if e.type == "tool_result"]
    assert [r.cached for r in results] == [False, True]  # type: ignore[union-attr]
    context = run_context(model.requests[-1])
    assert "read_file path=notes.txt" in context  # listed as already fetched
    # The full text sits once in the focused-files block; history keeps one-liners.
    assert sum(m.content.count("alpha") for m in model.requests[-1].messages) == 1
    assert context.count("alpha") == 1
    tool_messages = [m for m in model.requests[-1].messages if m.role == "tool"]
    assert all("focused files" in m.content for m in tool_messages)
    target.write_text("beta\n")
    model.add(reply("", call("read_file", path="notes.txt")), reply("ok"))
    again = await collect(agent.send("and now?"))
    agent.close()
    fresh = next(e for e in again if e.type == "tool_result")
    assert not fresh.cached  # type: ignore[union-attr]
    assert "beta" in run_context(model.requests[-1])


async def test_each_run_resends_the_previous_request_so_a_prefix_cache_covers_it(
    settings: Settings, agent_with: AgentWith
) -> None:
    (settings.workspace / "notes.txt").write_text("alpha\n")
    agent, model = agent_with(
        settings,
        reply("", call("read_file", path="notes.txt")),
        reply("It says alpha."),
        reply("Bye."),
    )
    await collect(agent.send("read notes.txt"))
    await collect(agent.send("now say goodbye"))
    last_of_first_run, second_run = model.requests[1].messages, model.requests[2].messages
    # All of it again, up to the tool result's own text (its working notes closed that step).
    assert second_run[: len(last_of_first_run) - 1] == last_of_first_run[:-1]
    assert second_run[0].content == model.requests[0].messages[0].content
    assert second_run[1].content.startswith("<context>\nCurrent time")
    assert "Already fetched" in last_of_first_run[-1].content
    assert last_of_first_run[-1].content.startswith(second_run[len(last_of_first_run) - 1].content)
