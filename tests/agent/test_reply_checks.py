"""A final answer that copies shiyi's own text fails its run, memory does not take it for
news and the run is not archived; one reply's time and repetition are bounded."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from shiyi.app import App
from shiyi.config import Settings, load_settings
from shiyi.events import UsageEvent
from shiyi.llm.scripted import ScriptedModel, ScriptedReply, call, reply
from shiyi.llm.types import Usage
from shiyi.tools import tool
from tests.conftest import AgentFactory, collect
from tests.support.requests import run_context

PERSONA_LINE = "Be honest about what you know. Say when you are unsure"


async def test_a_reply_copying_the_persona_fails_the_run(make_agent: AgentFactory) -> None:
    agent, _ = make_agent([reply(f"Sure. {PERSONA_LINE}.")])
    events = await collect(agent.send("Say hello."))
    end = events[-1]
    assert end.type == "run_end" and end.status == "failed"  # type: ignore[union-attr]
    assert "repeated shiyi's own text" in end.detail  # type: ignore[union-attr]
    assert any(e.type == "error" and "be honest" in e.message for e in events)  # type: ignore[union-attr]
    # Kept in the session log all the same.
    assert agent.history()[-1].content == f"Sure. {PERSONA_LINE}."


async def test_a_plain_answer_is_no_echo(make_agent: AgentFactory) -> None:
    agent, _ = make_agent([reply("Hello! Nice to meet you.")])
    events = await collect(agent.send("Say hello."))
    assert events[-1].status == "completed"  # type: ignore[union-attr]


async def test_a_reply_is_cut_at_reply_seconds_with_a_note(
    make_agent: AgentFactory, settings: Settings
) -> None:
    settings.agent.reply_seconds = 0.3
    endless = ScriptedReply("and on " * 2000, delay=0.02)
    agent, _ = make_agent([endless])
    events = await collect(agent.send("Tell me a story."))
    end = events[-1]
    assert end.type == "run_end" and end.status == "usage_limit"  # type: ignore[union-attr]
    assert "agent.reply_seconds" in end.detail  # type: ignore[union-attr]
    assert any(e.type == "error" and "cut after 0.3 s" in e.message for e in events)  # type: ignore[union-attr]
    kept = agent.history()[-1]
    assert kept.role == "assistant" and 0 < len(kept.content) < len(endless.text)
    [usage] = [e for e in events if isinstance(e, UsageEvent)]
    assert usage.estimated and usage.prompt_tokens > 50 and usage.completion_tokens > 0


async def test_a_reply_repeating_itself_ends_at_the_third_time(make_agent: AgentFactory) -> None:
    agent, _ = make_agent([reply("I like cats. " * 40)])
    events = await collect(agent.send("Write about cats."))
    assert events[-1].status == "completed"  # type: ignore[union-attr]
    assert agent.history()[-1].content.count("I like cats.") == 3
    # The stream was left before its usage came: counted here, as sent and as read.
    [usage] = [e for e in events if isinstance(e, UsageEvent)]
    assert usage.estimated and usage.prompt_tokens > 50  # the persona alone is more
    assert 9 <= usage.completion_tokens <= 20  # three sentences, not forty


async def test_a_whole_reply_keeps_the_models_own_usage(make_agent: AgentFactory) -> None:
    agent, _ = make_agent([ScriptedReply("Hi.", usage=Usage(1234, 5))])
    events = await collect(agent.send("Say hi."))
    [usage] = [e for e in events if isinstance(e, UsageEvent)]
    assert (usage.prompt_tokens, usage.completion_tokens, usage.estimated) == (1234, 5, False)


# --- memory: an echoing run is neither archived nor a later hint ----------------------------


@pytest.fixture(params=["embedded", "postgres"])
def memory_settings(request: pytest.FixtureRequest, tmp_path: Path) -> Settings:
    loaded = load_settings(cwd=tmp_path, workspace=tmp_path)
    if request.param == "postgres":
        loaded.memory.store = str(request.getfixturevalue("postgres_url"))
    loaded.memory.embedder = "none"
    return loaded


async def test_an_echoing_run_is_not_archived(memory_settings: Settings) -> None:
    from shiyi.memory.lifecycle.pipeline import ARCHIVE

    model = ScriptedModel([reply(f"{PERSONA_LINE}."), reply("Hello there!")])
    with App.open(memory_settings, model=model, start_worker=False) as app:
        assert app.memory is not None
        agent = app.agent()
        await collect(agent.send("Say hello."))
        assert app.memory.jobs.pending_count([ARCHIVE]) == 0
        await collect(agent.send("Say hello again."))
        assert app.memory.jobs.pending_count([ARCHIVE]) == 1


async def test_an_echoing_reply_never_comes_back_as_a_hint(memory_settings: Settings) -> None:
    echo = f"Unsure? {PERSONA_LINE} about the garden."
    with App.open(memory_settings, model=ScriptedModel([reply(echo)])) as app:
        assert app.memory is not None
        memory = app.memory
        await collect(app.agent().send("Tell me about the garden shed."))
        deadline = time.monotonic() + 30
        while not memory.search("garden shed", mode="keyword"):
            assert time.monotonic() < deadline, "the run never reached the index"
            memory.worker.flush_graph()
            await asyncio.sleep(0.05)
        memory.worker.flush_graph()
    model = ScriptedModel([reply("ok")])
    with App.open(memory_settings, model=model) as app:
        await collect(app.agent().send("What about the garden, are you unsure?"))
    hint = run_context(model.requests[0])
    assert "Say when you are unsure about the garden" not in hint
    assert "garden shed" in hint  # the user's own words are news


@tool(read_only=True)
def look(topic: str) -> str:
    """Look something up.

    Args:
        topic: What to look up.
    """
    return f"{topic}: forty-two"


async def test_a_guided_model_answers_without_tools_or_tool_notes(
    make_agent: AgentFactory,
) -> None:
    """Before any call, an answer in words is asked for with no tools (no tool section, no
    note on what the step allows); after a call, without the "Already fetched" list."""
    agent, model = make_agent(
        [reply("Hello!"), reply("", call("look", topic="answer")), reply("It is forty-two.")],
        tools=[look],
        force_first_call=True,
    )
    await collect(agent.send("Say hello."))
    await collect(agent.send("Search for the answer and tell me."))
    greeting, looking, answering = model.requests
    assert (greeting.tool_choice, greeting.tools) == ("none", ())
    assert looking.tool_choice == "required" and looking.tools
    assert answering.tool_choice == "none"
    assert "Already fetched" not in answering.messages[-1].content


# --- memory writes: a call storing shiyi's own text is not run -------------------------------


async def _remembering(
    settings: Settings, said: str, stored: str
) -> tuple[list[object], list[str]]:
    """Send ``said``; the model calls ``remember`` with ``stored``, then answers. The run's
    events and the values of the facts stored after it."""
    model = ScriptedModel([reply("", call("remember", text=stored)), reply("Done.")])
    with App.open(settings, model=model, start_worker=False) as app:
        assert app.memory is not None
        events = await collect(app.agent().send(said))
        return list(events), _stored(app)


def _stored(app: App) -> list[str]:
    assert app.memory is not None
    store = app.memory.store
    return [f.value for f in store.get_facts(store.facts_by_status(["active", "pending"], 50))]


# The refused call stores nothing; what the user asked to remember is kept instead.
KEPT = ["My sister Ana lives in Porto."]


async def test_a_remember_call_copying_the_persona_stores_nothing(
    memory_settings: Settings,
) -> None:
    events, facts = await _remembering(
        memory_settings, "Remember that my sister Ana lives in Porto.", f"{PERSONA_LINE}."
    )
    result = next(e for e in events if e.type == "tool_result")  # type: ignore[attr-defined]
    assert result.ok is False and result.summary == "not run: nothing was stored"  # type: ignore[attr-defined]
    assert facts == KEPT
    assert events[-1].status == "completed"  # type: ignore[attr-defined]


async def test_a_remember_call_copying_a_tools_own_description_stores_nothing(
    memory_settings: Settings,
) -> None:
    copied = "The thing to remember, as one self-contained sentence."  # remember's argument doc
    events, facts = await _remembering(
        memory_settings, "Remember that my sister Ana lives in Porto.", copied
    )
    result = next(e for e in events if e.type == "tool_result")  # type: ignore[attr-defined]
    assert result.ok is False and result.summary == "not run: nothing was stored"  # type: ignore[attr-defined]
    assert facts == KEPT


async def test_the_model_is_told_why_and_a_true_memory_is_stored(
    memory_settings: Settings,
) -> None:
    model = ScriptedModel(
        [
            reply("", call("remember", text=f"{PERSONA_LINE}.")),
            reply("", call("remember", text="The user's sister Ana lives in Porto.")),
            reply("Noted."),
        ]
    )
    with App.open(memory_settings, model=model, start_worker=False) as app:
        assert app.memory is not None
        await collect(app.agent().send("Remember that my sister Ana lives in Porto."))
        assert app.memory.stats()["facts"] == 1
    told = model.requests[1].messages[-1]
    assert told.role == "tool" and "copies shiyi's own instructions" in told.content
    assert "be honest about what you know" in told.content


async def test_the_users_own_words_may_be_remembered_even_if_shiyi_says_them_too(
    memory_settings: Settings,
) -> None:
    events, facts = await _remembering(
        memory_settings, f"Remember this rule: {PERSONA_LINE}.", f"{PERSONA_LINE}."
    )
    assert next(e for e in events if e.type == "tool_result").ok is True  # type: ignore[attr-defined]
    assert facts == [f"{PERSONA_LINE}."]


async def test_a_remember_call_looping_on_one_sentence_is_cut_and_stores_nothing(
    memory_settings: Settings,
) -> None:
    looping = ScriptedReply(tool_calls=(call("remember", text="My sister lives in Porto. " * 60),))
    model = ScriptedModel([looping, reply("Done.")])
    with App.open(memory_settings, model=model, start_worker=False) as app:
        assert app.memory is not None
        events = await collect(app.agent().send("Remember that my sister lives in Porto."))
        assert _stored(app) == ["My sister lives in Porto."]  # the request, not the loop
    result = next(e for e in events if e.type == "tool_result")
    assert result.ok is False  # type: ignore[attr-defined]
    told = model.requests[1].messages[-1].content
    assert "said one sentence over and over" in told and "my sister lives in porto" in told


@tool()
def jot(text: str) -> str:
    """Write a note.

    Args:
        text: The note.
    """
    return f"noted {len(text)} characters"


async def test_other_tools_may_repeat_a_line(make_agent: AgentFactory) -> None:
    lines = "assert total == 3.\n" * 5
    agent, _ = make_agent([reply("", call("jot", text=lines)), reply("Done.")], tools=[jot])
    events = await collect(agent.send("Write the checks."))
    result = next(e for e in events if e.type == "tool_result")
    assert result.ok and result.summary.startswith("noted")  # type: ignore[attr-defined]


async def test_a_guided_small_model_remembers_what_it_is_asked_without_being_asked(
    memory_settings: Settings,
) -> None:
    memory_settings.tools.force_first_call = True
    model = ScriptedModel([])
    with App.open(memory_settings, model=model, start_worker=False) as app:
        assert app.memory is not None
        first = await collect(app.agent().send("Remember that my sister Ana lives in Porto."))
        again = await collect(app.agent().send("Please remember: my sister Ana moved to Lisbon."))
        stored = _stored(app)
    [call] = [e for e in first if e.type == "tool_call"]
    assert (call.name, call.args) == ("remember", {"text": "My sister Ana lives in Porto."})  # type: ignore[union-attr]
    said = "".join(e.text for e in again if e.type == "text_delta")  # type: ignore[union-attr]
    assert said == (
        "Noted: \"My sister Ana moved to Lisbon.\" It replaces 'My sister Ana lives in Porto.' "
        "(kept in history)."
    )
    assert model.requests == []  # the model was not needed for either
    assert stored == ["My sister Ana moved to Lisbon."]


async def test_a_guided_small_model_is_given_the_current_fact_it_is_asked_about(
    memory_settings: Settings,
) -> None:
    memory_settings.tools.force_first_call = True
    model = ScriptedModel([])  # SmolLM2-135M called read_file on a made-up path instead
    with App.open(memory_settings, model=model, start_worker=False) as app:
        assert app.memory is not None
        app.memory.remember("I usually go running on Mondays.")
        app.memory.remember("I usually go running on Tuesdays now.")
        events = await collect(app.agent().send("When do I usually go running?"))
    said = "".join(e.text for e in events if e.type == "text_delta")  # type: ignore[union-attr]
    assert said == 'I have noted: "I usually go running on Tuesdays now."'  # not Mondays
    assert model.requests == []
