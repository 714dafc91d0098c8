"""The agent with its long-term memory: what was said before a restart is found after it."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from shiyi.agent.agent import is_news
from shiyi.app import App
from shiyi.config import Settings, load_settings
from shiyi.errors import SessionNotFound
from shiyi.llm.scripted import ScriptedModel, ScriptedReply, ScriptedRequest, call, reply
from shiyi.memory.models import Anchor, FactRecord, MemoryHit
from shiyi.sessions.records import SessionOwner
from tests.conftest import collect
from tests.support.requests import run_context


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return load_settings(cwd=tmp_path, workspace=tmp_path)


async def test_memory_tools_are_registered_and_recall_survives_restart(
    settings: Settings,
) -> None:
    with App.open(settings, model=ScriptedModel([reply("Noted, teal it is.")])) as app:
        first = app.agent()
        assert {"query_memory", "remember", "expand_memory"} <= set(first.tools.names())
        await collect(first.send("My favourite colour is teal and my cat is called Mochi."))

    model = ScriptedModel(
        [reply("", call("query_memory", query="favourite colour", mode="keyword")), reply("teal")]
    )
    with App.open(settings, model=model) as app:
        events = await collect(app.agent().send("What is my favourite colour?"))
    result = next(e for e in events if e.type == "tool_result")
    assert result.ok  # type: ignore[union-attr]
    memory_block = model.requests[1].messages[-1].content
    assert "favourite colour is teal" in memory_block
    assert "anchor run_" in memory_block


async def test_the_model_is_told_how_a_slip_in_its_query_was_read(settings: Settings) -> None:
    with App.open(settings, model=ScriptedModel([reply("Noted.")])) as app:
        await collect(app.agent().send("My favourite colour is teal, like my kettle."))
    model = ScriptedModel([reply("", call("query_memory", query="my kettel colour")), reply("x")])
    with App.open(settings, model=model) as app:
        await collect(app.agent().send("What colour is my kettle?"))
    memory_block = model.requests[1].messages[-1].content
    assert memory_block.startswith('Searched "kettel" as "kettle".\n<memory>')
    assert "like my kettle" in memory_block


async def test_prefetch_hint_reaches_the_run_context(settings: Settings) -> None:
    with App.open(settings, model=ScriptedModel([reply("ok")])) as app:
        await collect(app.agent().send("The deploy key rotation happens on 2026-03-01."))
    model = ScriptedModel([reply("March first")])
    with App.open(settings, model=model) as app:
        await collect(app.agent().send("when is the key rotation 2026-03-01?"))
    context = run_context(model.requests[0])
    assert "Possibly relevant memories" in context
    assert "deploy key rotation" in context
    assert "deploy key rotation" not in model.requests[0].messages[0].content


async def test_prefetch_leaves_out_what_this_conversation_already_holds(
    settings: Settings,
) -> None:
    model = ScriptedModel([reply("ok"), reply("March first"), reply("March first")])
    with App.open(settings, model=model) as app:
        agent = app.agent()
        await collect(agent.send("The deploy key rotation happens on 2026-03-01."))
        assert app.memory is not None
        memory = app.memory
        # The worker thread may hold the ingest batch: wait until the index has the turn.
        deadline = time.monotonic() + 30
        while not memory.search("deploy key rotation", mode="keyword"):
            assert time.monotonic() < deadline, "the first message never reached the index"
            memory.worker.flush_graph()
            await asyncio.sleep(0.05)
        await collect(agent.send("when is the key rotation 2026-03-01?"))
        await collect(app.agent().send("when is the key rotation 2026-03-01?"))
    same_session, new_session = model.requests[1], model.requests[2]
    assert "deploy key rotation" not in run_context(same_session)
    assert "deploy key rotation" in run_context(new_session)


async def test_remember_tool_stores_a_long_term_fact(settings: Settings) -> None:
    model = ScriptedModel(
        [reply("", call("remember", text="Use pnpm, not npm", kind="convention")), reply("ok")]
    )
    with App.open(settings, model=model) as app:
        await collect(app.agent().send("记住这个: use pnpm, not npm"))
        assert app.memory is not None
        hits = app.memory.search("pnpm", mode="keyword")
    assert hits[0].fact_kind == "convention"
    assert hits[0].text == "Use pnpm, not npm"


async def test_remember_tells_the_model_what_a_new_value_replaced(settings: Settings) -> None:
    answers: list[str] = []

    def heard(request: ScriptedRequest) -> ScriptedReply:
        answers.append(request.last.content)  # the tool's answer, as the model reads it
        return reply("ok")

    def remember(text: str) -> ScriptedReply:
        return reply("", call("remember", text=text))  # no key: the statement names it

    model = ScriptedModel(
        [remember("My favourite editor is Vim"), heard]
        + [remember("My favourite editor is Helix now"), heard] * 2
    )
    with App.open(settings, model=model) as app:
        for said in ("I use Vim", "Remember: Helix now", "Remember: Helix now"):
            await collect(app.agent().send(said))
    first, replaced, confirmed = answers
    assert first.startswith("Remembered (semantic, user") and "replaces" not in first
    assert replaced.endswith("It replaces 'My favourite editor is Vim' (kept in history).")
    assert confirmed.startswith("Already remembered") and "no copy was made" in confirmed


def test_a_memory_saying_only_the_same_words_is_no_news() -> None:
    elsewhere = Anchor("other-session", "run_1", 0, 0, "text", 0.0)
    here = Anchor("this-session", "run_2", 0, 0, "text", 0.0)
    hits = [
        MemoryHit("e1", "event", "User: Say hello.", 0.0, anchor=elsewhere),
        MemoryHit("e2", "event", "User: Say hello in French.", 0.0, anchor=elsewhere),
        MemoryHit("e3", "event", "Assistant: Bonjour!", 0.0, anchor=here),
        MemoryHit("f1", "fact", "Say hello.", 0.0, anchor=elsewhere),
    ]
    kept = [h.id for h in hits if is_news(h, " Say hello. ", "this-session")]
    assert kept == ["e2", "f1"]


async def test_a_session_the_agent_starts_is_the_configured_users(settings: Settings) -> None:
    settings.memory.user_id = "alice"
    with App.open(settings, model=ScriptedModel([reply("ok")])) as app:
        agent = app.agent()
        await collect(agent.send("hello"))
        mine = app.log.get_session(agent.session_id, owner=SessionOwner("alice"))
        assert mine.message_count == 2
        with pytest.raises(SessionNotFound):
            app.log.get_session(agent.session_id, owner=SessionOwner("bob"))


def _kept(app: App) -> list[FactRecord]:
    """The facts stored for the user, not the runs' archives."""
    assert app.memory is not None
    store = app.memory.store
    facts = store.get_facts(store.facts_by_status(["active", "pending"], 100))
    return [f for f in facts if f.source != "archive"]


async def test_what_the_user_asked_to_remember_is_kept_when_the_model_stored_nothing(
    settings: Settings,
) -> None:
    model = ScriptedModel([reply("I'm sorry for your loss."), reply("Sure."), reply("Fine.")])
    with App.open(settings, model=model) as app:
        await collect(app.agent().send("Remember that my sister Ana lives in Porto."))
        await collect(app.agent().send("Remember to call mum tonight"))  # a reminder
        await collect(app.agent().send("Do you remember my address?"))
        kept = _kept(app)
    assert [(f.text, f.source) for f in kept] == [
        ("lives in: My sister Ana lives in Porto.", "explicit")
    ]
    assert "ana" in kept[0].entities  # its own slot: Ana's city, not the user's


async def test_a_request_the_model_remembered_is_not_kept_twice(settings: Settings) -> None:
    model = ScriptedModel(
        [reply("", call("remember", text="The user's sister Ana lives in Porto")), reply("Ok.")]
    )
    with App.open(settings, model=model) as app:
        await collect(app.agent().send("Remember that my sister Ana lives in Porto."))
        kept = _kept(app)
    assert [f.text for f in kept] == ["The user's sister Ana lives in Porto"]
