"""Echoes are not evidence (issue 30): a memory tool's call and result, and a reply quoting
what memory showed, are kept (log, ``expand``) but marked derived, and recall, extraction and
the next run's hint pass them by.  Through the agent with a scripted model, on both backends."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest

from shiyi.app import App
from shiyi.config import Settings
from shiyi.llm.scripted import ScriptedModel, ScriptedReply, ScriptedRequest, call, reply
from shiyi.memory.models import EventRecord
from shiyi.memory.service import Memory
from shiyi.memory.text.echoes import MEMORY_TOOL, QUOTES_MEMORY, quotes, shown_texts
from shiyi.scripts.library import Script, remember_script
from tests.conftest import collect
from tests.memory.lifecycle.conftest import extraction, fact
from tests.support.requests import run_context

DEPLOY = Script(
    name="deploy_site",
    description="Deploy the website to production",
    language="bash",
    body="echo deploying\n",
)


@pytest.fixture
def memory(vectorless_settings: Settings) -> Iterator[Memory]:
    opened = Memory.open(vectorless_settings, start_worker=False)
    yield opened
    opened.close()


async def ask(settings: Settings, memory: Memory, message: str, *steps: ScriptedReply) -> None:
    """One run in a new session of the real agent, then every queued memory job."""
    with App.open(settings, model=ScriptedModel(steps), memory=memory, start_worker=False) as app:
        await collect(app.agent().send(message))
    assert memory.worker.drain(timeout=60)


def session_events(memory: Memory, text: str) -> list[EventRecord]:
    """The stored turns of the run whose user message was ``text``, in order."""
    hits = [h for h in memory.store.recent_events(200) if h.content == text]
    assert hits, f"no stored turn says {text!r}"
    return memory.expand(hits[0].anchor.key(), 20)


async def test_a_saved_procedure_ranks_first_after_runs_that_retrieved_it(
    vectorless_settings: Settings, memory: Memory
) -> None:
    """Issue 30: each run's query_memory call, its result and the reply quoting it were
    recalled again, and three runs later the procedure ranked 3rd to 7th behind them."""
    procedure = remember_script(memory, DEPLOY)
    for question in ("how do we deploy the website?", "deploy the site please", "how to ship?"):
        await ask(
            vectorless_settings,
            memory,
            question,
            reply("", call("query_memory", query=question)),
            reply("Use the saved script: Deploy the website to production, run script deploy_site"),
        )
    echoes = {e.id for e in memory.store.recent_events(100) if e.derived}
    assert len(echoes) == 9  # per run: the call, its result, the quoting reply
    for query in ("deploy", "production deploy script", "how do I deploy?"):
        hits = memory.search(query, limit=10)
        assert hits[0].id == procedure.id, (query, [h.text[:60] for h in hits])
        assert not echoes & {h.id for h in hits}, query


async def test_memory_tool_turns_and_quoting_replies_are_marked_and_kept(
    vectorless_settings: Settings, memory: Memory
) -> None:
    await ask(vectorless_settings, memory, "I live in Berlin near the old canal.", reply("Noted."))
    await ask(
        vectorless_settings,
        memory,
        "where do I live?",
        reply("Let me look.", call("query_memory", query="where do I live", mode="keyword")),
        reply("You live in Berlin, near the old canal."),
    )
    turns = session_events(memory, "where do I live?")
    marks = {(e.segment_type, e.content[:24]): e.derived for e in turns}
    assert marks == {
        ("user_message", "where do I live?"): "",
        ("response", "Let me look."): "",
        ("tool_call", 'query_memory({"query": "'): MEMORY_TOOL,
        ("tool_result", "query_memory -> <memory>"): MEMORY_TOOL,
        ("response", "You live in Berlin, near"): QUOTES_MEMORY,
    }
    # Kept (expand shows them, above) and stored with the mark.
    stored = memory.store.get_events([e.id for e in turns])
    assert sorted(e.derived for e in stored) == sorted(
        ["", "", MEMORY_TOOL, MEMORY_TOOL, QUOTES_MEMORY]
    )
    # Recall finds the user's own words, never the echoes of them.
    found = memory.search("where do I live in Berlin", limit=10)
    assert any("old canal" in h.text and h.text.startswith("User:") for h in found)
    assert not {h.id for h in found} & {e.id for e in stored if e.derived}


async def test_a_reply_quoting_the_runs_hint_is_an_echo(
    vectorless_settings: Settings, memory: Memory
) -> None:
    await ask(vectorless_settings, memory, "I live in Berlin near the old canal.", reply("Ok."))
    await ask(vectorless_settings, memory, "where do I live now?", reply("You live in Berlin."))
    await ask(vectorless_settings, memory, "do I live near water?", reply("I cannot say."))
    (quoted,) = [e for e in session_events(memory, "where do I live now?") if e.role != "user"]
    (fresh,) = [e for e in session_events(memory, "do I live near water?") if e.role != "user"]
    assert (quoted.derived, fresh.derived) == (QUOTES_MEMORY, "")


@pytest.mark.parametrize("by", ["id", "query", "entity"])
async def test_forgetting_a_turn_takes_its_echoes_along(
    vectorless_settings: Settings, memory: Memory, by: str
) -> None:
    said = "I live in Berlin near the old canal."
    await ask(vectorless_settings, memory, said, reply("Noted."))
    await ask(
        vectorless_settings,
        memory,
        "where do I live?",
        reply("Let me look.", call("query_memory", query="where do I live", mode="keyword")),
        reply("You live in Berlin."),
    )
    original = [e for e in memory.store.recent_events(100) if e.content == said]
    if by == "id":
        report = memory.forget_ids([original[0].id])
    elif by == "query":
        report = memory.forget_query("I live in Berlin")
    else:
        report = memory.forget_entity("Berlin")
    assert report.events == 3  # the turn, the tool result and the reply quoting it
    left = [e.content for e in memory.store.recent_events(100)]
    assert not [text for text in left if "berlin" in text.lower()], left
    assert "where do I live?" in left and any(t.startswith("query_memory(") for t in left)
    facts = memory.store.get_facts(memory.store.facts_by_status(["active", "pending"], 100))
    assert not [f.text for f in facts if "berlin" in f.text.lower()]
    assert not rows_saying(vectorless_settings.sessions_db, "berlin")


def rows_saying(path: Path, word: str) -> list[str]:
    """Every text cell of every table of a SQLite file holding ``word``."""
    with closing(sqlite3.connect(path)) as conn:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        rows = [row for t in tables for row in conn.execute(f'SELECT * FROM "{t}"')]
    return [str(c) for row in rows for c in row if word in str(c).lower()]


def lives_in(request: ScriptedRequest) -> ScriptedReply:
    """A rule-based extraction model: "live(s) in X" in any line of the window is a fact."""
    found = re.findall(r"\blives? in (\w+)", request.messages[-1].content)
    facts = [fact("lives in", city, about=["user"]) for city in dict.fromkeys(found)]
    return extraction(facts)


async def test_extraction_does_not_learn_from_the_models_echo(
    vectorless_settings: Settings,
) -> None:
    fast = ScriptedModel([lives_in], repeat_last=True)
    memory = Memory.open(vectorless_settings, start_worker=False, extraction_model=lambda: fast)
    try:
        await ask(vectorless_settings, memory, "I live in Berlin.", reply("Noted."))
        steps = [
            reply("", call("query_memory", query="where do I live", mode="keyword")),
            reply("You live in Berlin."),
            reply("Glad to help."),
        ]
        model = ScriptedModel(steps)
        with App.open(vectorless_settings, model=model, memory=memory, start_worker=False) as app:
            agent = app.agent()
            await collect(agent.send("where do I live?"))
            await collect(agent.send("thanks, that is all"))
        assert memory.worker.drain(timeout=60)
        second = [e.id for e in session_events(memory, "where do I live?")]
        second += [e.id for e in session_events(memory, "thanks, that is all")]
        learned = memory.store.get_facts(memory.store.facts_derived_from(second))
        assert [f.text for f in learned if f.source != "archive"] == []
        (berlin,) = [f for f in memory.history(key="lives in") if f.status == "active"]
        assert not set(berlin.source_events) & set(second)  # no "confirmation" by the echo
    finally:
        memory.close()


async def test_the_hint_does_not_offer_run_archives_unless_asked_about_runs(
    vectorless_settings: Settings, memory: Memory
) -> None:
    await ask(
        vectorless_settings,
        memory,
        "summarise the quarterly budget spreadsheet",
        reply("The quarterly budget spreadsheet totals 4200 euros."),
    )
    model = ScriptedModel([reply("ok"), reply("ok")])
    with App.open(vectorless_settings, model=model, memory=memory, start_worker=False) as app:
        await collect(app.agent().send("open the quarterly budget spreadsheet again"))
        await collect(app.agent().send("what did we do last time with the quarterly budget?"))
    plain, about_runs = (run_context(r) for r in model.requests)
    assert not re.search(r"run [0-9a-f]+: summarise", plain), plain
    assert re.search(r"run [0-9a-f]+: summarise", about_runs), about_runs


async def test_run_archives_rank_below_the_facts_they_repeat(
    vectorless_settings: Settings, memory: Memory
) -> None:
    home = memory.remember("I live in Berlin", key="home city")
    await ask(vectorless_settings, memory, "where do I live?", reply("You live in Berlin."))
    hits = memory.search("where do I live?", limit=10)
    kinds = [h.source or h.node for h in hits]
    assert "archive" in kinds, kinds
    assert kinds.index("explicit") < kinds.index("archive"), [h.text[:50] for h in hits]
    assert hits[kinds.index("explicit")].id == home.id
    asked = memory.search("what did we do last time: where do I live?", limit=10)
    assert asked[0].source == "archive"  # a question about earlier runs: full weight


def test_quoting_is_told_by_overlap_with_what_was_shown() -> None:
    shown = shown_texts(
        "query_memory -> <memory>\n  <recent_episodes>\n"
        "    - [2026-11-27 10:00, 3min ago, anchor run_a:0:0] User: I live in Berlin\n"
        "  </recent_episodes>\n  <project_context>\n"
        "    - home city: Berlin (confidence 90%, 1d ago, id fact_1)\n"
        "  </project_context>\n</memory>"
    )
    assert shown == ["I live in Berlin", "home city: Berlin"]
    memory = "I live in Berlin"
    for echo in ("You live in Berlin.", "As you told me, you're living in Berlin!",
                 "BERLIN is where you live"):  # fmt: skip
        assert quotes(echo, memory), echo
    assert quotes("You live in Berlin.", "I live in Berlin near the old canal")  # in part
    for fresh in ("I don't know where you live.", "Berlin is the capital of Germany.",
                  "Shall I look up flights?"):  # fmt: skip
        assert not quotes(fresh, memory), fresh
    steps = "run the saved script deploy_site with the production env then check the logs"
    assert quotes(f"Sure: {steps[4:60]}.", steps)  # six words in a row of a long memory
    assert not quotes("Shall I check the weather first?", steps)
