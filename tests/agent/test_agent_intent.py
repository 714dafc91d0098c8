"""The memory hint a run starts with follows the message's intent (seed 001 section 3.3).

Every memory below shares the words "billing service" with every message, so a plain
keyword prefetch shows whichever turns repeat them most; the intent picks the one that
message needs.  Driven through the agent with the scripted model: what is checked is the
``<context>`` block of the request the model received.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from shiyi.app import App, open_knowledge
from shiyi.config import Settings, load_settings
from shiyi.llm.scripted import ScriptedModel, reply
from shiyi.memory.scopes import Viewer
from shiyi.memory.service import Memory
from tests.conftest import collect
from tests.support.records import seed, turn
from tests.support.requests import run_context

NOISE = [
    "billing service billing service: the refund billing service standup moved to Friday",
    "billing service release notes for the billing service dashboard, billing service colours",
    "the billing service index page and the search index of the billing service look fine",
    "the billing service index: billing service search index rebuilt, billing service ok",
]
BUG = (
    "the billing service crashed with KeyError 'invoice_id' on refunds; fixed it by "
    "defaulting invoice_id to the order id"
)
DECIDED = "we agreed the invoices table of the billing service gets a created_at index"


def plant(memory: Memory) -> None:
    memory.remember("The billing service keeps invoices in PostgreSQL 16", kind="semantic")
    memory.remember(
        "Release the billing service: run make release, then tag the commit", kind="procedural"
    )
    memory.remember("Billing service code is indented with tabs, never spaces", kind="preference")
    memory.remember(
        "Billing service releases need approval from the reviewer agent",
        kind="convention",
        scope="workspace",
    )
    memory.remember(
        "Reviewer checklist for a billing service release: run the tests, read the diff",
        kind="procedural",
        scope="agent",
        viewer=Viewer("default", "reviewer", "default"),
    )
    memory.remember("The billing service might move to MySQL", kind="semantic", confidence=0.6)
    said = [*NOISE, BUG, DECIDED]
    seed(memory, [turn(i, text, session="old", run=f"r{i}") for i, text in enumerate(said)])


@pytest.fixture
def app(tmp_path: Path) -> Iterator[App]:
    settings: Settings = load_settings(cwd=tmp_path, workspace=tmp_path)
    settings.memory.lifecycle.workspace_writers = ["shiyi", "reviewer"]
    # No worker thread: the seed step runs the queue itself, and the hint needs only the
    # keyword index it builds.
    model = ScriptedModel([reply("ok")] * 8)
    with App.open(settings, model=model, start_worker=False) as opened:
        assert opened.memory is not None
        plant(opened.memory)
        yield opened


async def hint_for(app: App, message: str, before: str = "") -> str:
    """The run context the model saw for ``message`` (after ``before`` in the same session)."""
    agent = app.agent()
    model = agent.model
    assert isinstance(model, ScriptedModel)
    if before:
        await collect(agent.send(before))
    await collect(agent.send(message))
    return run_context(model.requests[-1])


@pytest.mark.parametrize(
    ("message", "wanted", "unwanted"),
    [
        ("Implement refunds of invoices in the billing service", "PostgreSQL 16", "created_at"),
        ("给 billing service 的 invoices 实现退款接口", "PostgreSQL 16", "created_at"),
        (
            "The billing service fails with KeyError 'invoice_id' on a refund",
            "defaulting",
            "standup",
        ),
        ("billing service 退款时报错 KeyError invoice_id", "defaulting", "make release"),
        ("I prefer my billing service code formatted the usual way", "tabs", "make release"),
        ("我喜欢 billing service 的代码怎么排版？", "tabs", "standup"),
        ("Ask reviewer to check the billing service release", "Reviewer checklist", "make release"),
        ("让 reviewer 检查一下 billing service 的发布", "Reviewer checklist", "make release"),
    ],
)
async def test_the_prefetched_memory_is_the_one_the_intent_wants(
    app: App, message: str, wanted: str, unwanted: str
) -> None:
    context = await hint_for(app, message)
    assert wanted in context
    assert unwanted not in context


async def test_a_cross_agent_task_gets_shared_facts_and_that_agents_procedure(app: App) -> None:
    context = await hint_for(app, "Ask reviewer to check the billing service release")
    assert "approval from the reviewer agent" in context  # shared with every agent
    assert "Reviewer checklist" in context  # the reviewer's own, not this agent's


async def test_a_new_task_gets_only_trusted_facts(app: App) -> None:
    context = await hint_for(app, "Create a migration plan for the billing invoices")
    assert "PostgreSQL 16" in context
    assert "MySQL" not in context  # 60% sure: below the active threshold
    assert "recent_episodes" not in context


async def test_a_follow_up_is_searched_with_the_turn_it_follows(app: App) -> None:
    before = "Let's look at the invoices table of the billing service"
    context = await hint_for(app, "and the index?", before=before)
    assert "created_at index" in context
    assert "search index" not in context
    assert before not in context  # this conversation's own words: the history has them


async def test_a_bug_fix_also_looks_in_the_knowledge_base(tmp_path: Path) -> None:
    settings = load_settings(cwd=tmp_path, workspace=tmp_path)
    manual = tmp_path / "runbook.md"
    manual.write_text("# Refunds\n\nKeyError invoice_id on refunds: run migration 0042 first.\n")
    kb = open_knowledge(settings, embedder=None, fast=None)
    try:
        await kb.add([manual])
    finally:
        kb.close()
    model = ScriptedModel([reply("ok")] * 2)
    with App.open(settings, model=model, start_worker=False) as app:
        await collect(app.agent().send("Refunds fail with KeyError invoice_id"))
        await collect(app.agent().send("Write refunds documentation"))
    bug, task = (run_context(request) for request in model.requests)
    assert "migration 0042" in bug
    assert "runbook.md" in bug
    assert "migration 0042" not in task  # a new task's hint holds facts, not documents
