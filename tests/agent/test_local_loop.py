"""The embedded default (SmolLM2-135M, compact tools) finishing a tool task on its own.

Nothing is scripted: the app picks the compact profile for the small model, and the agent
guides it (``tools.force_first_call``): a tool call first, then an answer in words.
"""

from __future__ import annotations

import pytest

from shiyi.app import App
from shiyi.config import Settings
from tests.conftest import collect

pytestmark = pytest.mark.local_model


async def test_the_embedded_default_reads_a_file_and_says_what_it_says(
    settings: Settings,
) -> None:
    settings.memory.enabled = False
    (settings.workspace / "notes.txt").write_text("Shopping list: eggs, milk, bread.\n")
    with App.open(settings, start_worker=False) as app:
        agent = app.agent()
        events = await collect(agent.send("Read the file notes.txt and tell me what it says."))
        history = agent.history()
    calls = [e for e in events if e.type == "tool_call"]
    assert [c.name for c in calls] == ["read_file"]  # type: ignore[union-attr]
    assert [m.role for m in history] == ["user", "assistant", "tool", "assistant"]
    assert "Shopping list: eggs, milk, bread." in history[2].content
    answer = "".join(e.text for e in events if e.type == "text_delta")  # type: ignore[union-attr]
    # The agent reads the named file itself and the model answers from it as plain data
    # (agent.dispatch, context.plain): before, it copied shiyi's notes ("You can't call a
    # tool now") or asked for read_file.txt.
    assert calls[0].args == {"path": "notes.txt"}  # type: ignore[union-attr]
    assert events[-1].status == "completed", answer  # type: ignore[union-attr]
    assert any(word in answer.lower() for word in ("eggs", "milk", "bread")), answer
    assert events[-1].iterations == 2  # type: ignore[union-attr]


async def test_the_embedded_default_greets_and_calculates_without_echoing(
    settings: Settings,
) -> None:
    """Everyday first messages in the plain layout: no persona, time or note to copy."""
    settings.memory.enabled = False
    with App.open(settings, start_worker=False) as app:
        agent = app.agent()
        greeting = await collect(agent.send("Good morning! Please greet me back."))
        sum_ = await collect(agent.send("How much is 19 plus 23?"))
    said = "".join(e.text for e in greeting if e.type == "text_delta")  # type: ignore[union-attr]
    # Completed means no echo of shiyi's text; what a 135M model says is its own (this
    # greeting once got a recipe for vegan lasagna: bench/first_answers_bench.py keeps the score).
    assert greeting[-1].status == "completed", said  # type: ignore[union-attr]
    assert said.strip()
    total = "".join(e.text for e in sum_ if e.type == "text_delta")  # type: ignore[union-attr]
    assert total == "19 + 23 = 42."
