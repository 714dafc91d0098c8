"""Session consolidation, run archives reachable by expand, procedures learning from runs."""

from __future__ import annotations

from shiyi.config import Settings
from shiyi.llm.scripted import ScriptedModel, call, reply
from shiyi.memory.lifecycle.pipeline import CONSOLIDATE, EXTRACT
from shiyi.memory.service import Memory
from tests.conftest import AgentFactory, collect
from tests.memory.lifecycle.conftest import MemoryFactory, extraction, fact, say, user_event

PROCEDURE = fact(
    "release procedure",
    "how releases are cut",
    0.9,
    kind="procedural",
    trigger="when the user asks for a release",
    steps=["run the tests", "tag vX.Y.Z", "push the tag"],
)


def test_consolidation_records_decisions_todos_and_procedures(open_memory: MemoryFactory) -> None:
    memory = open_memory(
        extraction(facts=[]),
        extraction(facts=[]),
        extraction(
            facts=[
                fact("database", "PostgreSQL", 0.9, kind="decision", scope="workspace"),
                fact("followup", "benchmark the importer", 0.8, kind="todo"),
                PROCEDURE,
            ]
        ),
    )
    say(memory, user_event(1, "Let's go with PostgreSQL."), user_event(2, "Release: tag it."))
    memory.consolidate("s1")
    assert memory.worker.drain(timeout=60)
    prompt = memory.scripted.requests[-1].messages[0].content  # type: ignore[attr-defined]
    assert "consolidate the WHOLE conversation" in prompt
    hits = memory.search("how do I cut a release", kinds=["procedural"], limit=3)
    [proc] = [h for h in hits if h.node == "fact"]
    assert "steps: 1. run the tests; 2. tag vX.Y.Z; 3. push the tag" in proc.text
    assert "(when: when the user asks for a release)" in proc.text
    [decision] = [h for h in memory.search("which database", limit=5) if h.fact_kind == "decision"]
    assert decision.scope == "workspace" and decision.text == "database: PostgreSQL"


def test_procedures_outrank_plain_facts_of_equal_relevance(open_memory: MemoryFactory) -> None:
    memory = open_memory()
    memory.remember("deploy: run make deploy then check grafana", kind="semantic")
    memory.remember("deploy: run make deploy then check grafana!", kind="procedural", key="how")
    assert memory.worker.drain(timeout=60)
    hits = [h for h in memory.search("deploy make grafana", limit=5) if h.node == "fact"]
    assert hits[0].fact_kind == "procedural"


async def test_finished_runs_are_archived_and_expand_reaches_them(
    settings: Settings, make_agent: AgentFactory
) -> None:
    memory = Memory.open(settings, start_worker=False, extraction_model=lambda: None)
    proc = memory.remember("cut a release: tag and push", kind="procedural", key="release")
    model = ScriptedModel(
        [
            reply("Checking memory.", call("query_memory", query="release")),
            reply("Tagged v1.2.0 and pushed it."),
        ]
    )
    from shiyi.tools.builtins.memory import memory_tools

    agent = make_agent.agent(model, memory_tools(memory), memory=memory)
    events = await collect(agent.send("please cut release 1.2.0"))
    assert events[-1].type == "run_end"
    assert memory.worker.drain(timeout=60)
    hits = memory.search("cut release 1.2.0", kinds=["episodic"], limit=10)
    [archive] = [h for h in hits if h.node == "fact"]
    assert archive.text.startswith("run ")
    assert "please cut release 1.2.0 (completed" in archive.text
    assert "tools: query_memory" in archive.text and "Tagged v1.2.0" in archive.text
    assert archive.anchor is not None
    turns = memory.expand(archive.anchor.key(), window=10)
    assert [t.segment_type for t in turns][:2] == ["user_message", "response"]
    assert any("Tagged v1.2.0" in t.content for t in turns)
    [learned] = memory.store.get_facts([proc.id])
    assert (learned.usage_count, learned.success_rate) == (1, 1.0)
    agent.close()
    memory.close()


async def test_new_session_consolidates_the_one_that_ended(
    settings: Settings, make_agent: AgentFactory
) -> None:
    extractor = ScriptedModel(
        [
            extraction(),  # the per-message extraction of the first user message
            extraction(facts=[fact("ci", "runs on every push", 0.9, kind="convention")]),
        ]
    )
    memory = Memory.open(settings, start_worker=False, extraction_model=lambda: extractor)
    agent = make_agent.agent(ScriptedModel([reply("Agreed: CI on every push.")]), memory=memory)
    await collect(agent.send("let's run CI on every push"))
    first = agent.session_id
    assert memory.worker.drain(timeout=60)
    agent.new_session()
    assert memory.worker.drain(timeout=60)
    [convention] = [h for h in memory.search("CI push", limit=5) if h.fact_kind == "convention"]
    assert convention.text == "ci: runs on every push"
    stored = memory.store.get_facts([convention.id])[0]
    assert stored.source == "consolidation"
    assert {e.session_id for e in memory.store.get_events(stored.source_events)} == {first}
    assert "consolidate the WHOLE conversation" in extractor.requests[-1].messages[0].content
    agent.close()
    memory.close()


def test_consolidation_jobs_stay_bounded(settings: Settings) -> None:
    """One open consolidation per session; with extraction off none at all, and those an
    earlier process queued are dropped on open (no model would ever run them)."""
    memory = Memory.open(settings, start_worker=False, extraction_model=lambda: None)
    for _ in range(5):  # every /new and session end of the same session
        memory.consolidate("s1")
    memory.consolidate("s2")
    assert memory.jobs.pending_count([CONSOLIDATE]) == 2
    memory.close()

    settings.memory.lifecycle.extraction = False
    memory = Memory.open(settings, start_worker=False, extraction_model=lambda: None)
    try:
        assert memory.jobs.pending_count([CONSOLIDATE, EXTRACT]) == 0
        for session in ("s1", "s2", "s3"):
            memory.consolidate(session)
        assert memory.jobs.pending_count() == 0
    finally:
        memory.close()
