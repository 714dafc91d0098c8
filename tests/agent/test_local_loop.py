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
    assert answer.strip()
    # SmolLM2-135M often answers a tool result by copying shiyi's text (the runtime's "Do not
    # call a tool now: answer in plain text ..." note, or a context line quoting the file);
    # that must never pass as a completed answer (bench/first_answers.py measures how often
    # it answers well).
    if events[-1].status != "completed":  # type: ignore[union-attr]
        errors = [e.message for e in events if e.type == "error"]  # type: ignore[union-attr]
        assert events[-1].status == "failed" and "repeated shiyi's own text" in errors[-1]  # type: ignore[union-attr]
    assert events[-1].iterations == 2  # type: ignore[union-attr]
