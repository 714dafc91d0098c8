"""Message routing (seed 002): the heuristic, the fast-model tie-break, and the agent's use."""

from __future__ import annotations

import asyncio

import pytest

from shiyi.agent.router import Candidate, Router, parse_answer, token_similarity
from shiyi.config import Settings
from shiyi.config.settings import RoutingSettings
from shiyi.errors import ModelError
from shiyi.events import Event, Routed, RunEnd, RunStart
from shiyi.llm.scripted import ScriptedModel, ScriptedReply, reply
from shiyi.memory.service import Memory
from tests.conftest import AgentFactory, collect, types_of
from tests.support.requests import run_context, user_words


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_token_similarity_handles_words_plurals_and_chinese() -> None:
    assert token_similarity("and the markdown files", "list the python files here") == 0.5
    assert token_similarity("what's the weather in Paris", "refactor the parser") == 0.0
    assert token_similarity("解析器的测试呢", "重构解析器") > 0.3


async def test_related_follow_up_joins_and_unrelated_old_run_does_not() -> None:
    clock = Clock()
    router = Router(RoutingSettings(), clock=clock)
    run = Candidate("run_a", "refactor the config parser", last_input=clock.now)
    joined = await router.route("the parser must keep comments", [run])
    assert joined.decision == "join" and joined.run_id == "run_a" and joined.via == "heuristic"
    clock.now += 3600  # an hour later, nothing in common: a new request
    fresh = await router.route("what is the capital of Peru", [run])
    assert fresh.decision == "new" and fresh.run_id is None
    assert "unrelated" in fresh.reason


async def test_follow_up_cue_counts_as_related() -> None:
    clock = Clock()
    router = Router(RoutingSettings(), clock=clock)
    run = Candidate("run_a", "write the release notes", last_input=clock.now - 1200)
    cued = await router.route("also mention cats", [run])
    assert cued.decision == "join" and "follow-up" in cued.reason
    plain = await router.route("mention cats", [run])
    assert plain.decision == "new" and "similarity 0.00" in plain.reason


async def test_ambiguous_without_a_model_uses_the_configured_default() -> None:
    clock = Clock()
    run = Candidate("run_a", "write the release notes", last_input=clock.now)
    for default in ("join", "new"):
        router = Router(RoutingSettings(ambiguous=default), clock=clock)
        route = await router.route("what time is it in Lima", [run])
        assert route.decision == default and route.via == "default"
        assert "ambiguous" in route.reason


@pytest.mark.parametrize(
    ("answer", "decision", "via"),
    [
        ('{"task": "new", "confidence": 0.9}', "new", "model"),
        ('Sure: {"task": 1, "confidence": 0.95}', "join", "model"),
        ('{"task": "new", "confidence": 0.4}', "join", "default"),  # not sure enough
        ("I cannot tell", "join", "default"),
    ],
)
async def test_fast_model_decides_only_ambiguous_cases_above_its_threshold(
    answer: str, decision: str, via: str
) -> None:
    clock = Clock()
    model = ScriptedModel([reply(answer)])
    settings = RoutingSettings(use_llm=True, llm_confidence=0.7)
    router = Router(settings, model=model, clock=clock)
    run = Candidate("run_a", "write the release notes", last_input=clock.now)
    route = await router.route("what time is it in Lima", [run])
    assert (route.decision, route.via) == (decision, via)
    assert len(model.requests) == 1
    assert "write the release notes" in model.requests[0].messages[-1].content
    # A clear case never asks the model.
    await router.route("also add the release date to the release notes", [run])
    assert len(model.requests) == 1


async def test_model_failure_falls_back_to_the_heuristic() -> None:
    clock = Clock()
    model = ScriptedModel([ModelError("down", retryable=True)])
    router = Router(RoutingSettings(use_llm=True), model=model, clock=clock)
    run = Candidate("run_a", "write the release notes", last_input=clock.now)
    route = await router.route("what time is it in Lima", [run])
    assert route.decision == "join" and route.via == "default"


def test_parse_answer_rejects_out_of_range_answers() -> None:
    assert parse_answer('{"task": 3, "confidence": 0.9}', 2) is None
    assert parse_answer('{"task": 1, "confidence": 7}', 2) is None
    assert parse_answer('{"task": "NEW", "confidence": 1}', 2) == (None, 1.0)


def test_bad_routing_settings_are_clear_errors() -> None:
    with pytest.raises(ValueError, match="must not exceed join_threshold"):
        RoutingSettings(new_threshold=0.5, join_threshold=0.2)
    with pytest.raises(ValueError, match="not a valid regular expression"):
        RoutingSettings(join_cues=["(unclosed"])


# --- the agent ------------------------------------------------------------------------------


def routed(events: list[Event]) -> Routed:
    first = events[0]
    assert isinstance(first, Routed)
    return first


async def test_unrelated_message_waits_for_the_active_run_then_runs(
    settings: Settings, make_agent: AgentFactory
) -> None:
    settings.routing = RoutingSettings(new_threshold=0.3, join_threshold=0.9)
    model = ScriptedModel([ScriptedReply(text="slow " * 20, delay=0.02), reply("Lima: noon")])
    agent = make_agent.agent(model)
    first: list[Event] = []
    started = asyncio.Event()

    async def consume() -> None:
        async for event in agent.send("write the release notes"):
            first.append(event)
            if event.type == "run_start":
                started.set()

    task = asyncio.create_task(consume())
    await started.wait()
    second = await collect(agent.send("what time is it in Lima"))
    await task
    assert routed(second).decision == "new" and "unrelated" in routed(second).reason
    assert not any(e.type == "user_message" for e in first)
    assert isinstance(first[-1], RunEnd) and first[-1].status == "completed"
    assert types_of(second)[1] == "run_start" and second[-1].type == "run_end"
    assert user_words(model.requests[1].messages[-1]) == "what time is it in Lima"


async def test_message_during_the_final_answer_gets_another_iteration(
    make_agent: AgentFactory,
) -> None:
    model = ScriptedModel([ScriptedReply(text="final " * 10, delay=0.02), reply("and cats")])
    agent = make_agent.agent(model)
    events: list[Event] = []
    async for event in agent.send("write a poem"):
        events.append(event)
        if event.type == "text_delta" and len(events) == 4:
            ack = await collect(agent.send("also mention cats"))
            assert types_of(ack) == ["routed", "user_message"]
    assert "user_message" in types_of(events)
    assert len(model.requests) == 2
    assert user_words(model.requests[1].messages[-1]) == "also mention cats"


async def test_ended_run_id_continues_with_memory_about_it(
    settings: Settings, make_agent: AgentFactory
) -> None:
    settings.memory.embedder = "none"
    memory = Memory.open(settings)
    try:
        model = ScriptedModel(
            [reply("The staging database is db-staging-7 on port 6543."), reply("ok")]
        )
        agent = make_agent.agent(model, memory=memory)
        old = await collect(agent.send("where is the staging database?"))
        old_run = next(e for e in old if isinstance(e, RunStart)).run_id
        memory.worker.drain(timeout=30)
        agent.new_session()  # another session: only memory knows the old run
        events = await collect(agent.send("and its backup schedule?", run_id=old_run))
        decision = routed(events)
        assert decision.decision == "continue" and decision.from_run_id == old_run
        assert decision.via == "explicit" and decision.seeded >= 2
        assert decision.run_id != old_run
        new_start = next(e for e in events if isinstance(e, RunStart))
        assert new_start.run_id == decision.run_id
        context = run_context(model.requests[1])
        assert f"continues an earlier run ({old_run}" in context
        assert "db-staging-7" in context
        agent.close()
    finally:
        memory.close()


async def test_ended_run_without_memory_is_seeded_from_the_log(
    make_agent: AgentFactory,
) -> None:
    model = ScriptedModel([reply("Use port 6543."), reply("ok")])
    agent = make_agent.agent(model)
    old = await collect(agent.send("which port?"))
    old_run = next(e for e in old if isinstance(e, RunStart)).run_id
    events = await collect(agent.send("why that one?", run_id=old_run))
    assert routed(events).decision == "continue" and routed(events).seeded == 2
    assert "assistant: Use port 6543." in run_context(model.requests[1])
    unknown = await collect(agent.send("fresh", run_id="run_mine"))
    assert routed(unknown).decision == "new" and routed(unknown).run_id == "run_mine"
    agent.close()
