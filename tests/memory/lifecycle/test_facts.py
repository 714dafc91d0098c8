"""Dedup, confirmation, conflicts and supersession, relative dates, entity resolution."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from shiyi.llm.scripted import ScriptedModel
from shiyi.memory.lifecycle.temporal import resolve_relative
from tests.memory.lifecycle.conftest import (
    MONDAY,
    MemoryFactory,
    extraction,
    fact,
    say,
    user_event,
)

ALL = ["active", "pending", "superseded", "expired"]


def _facts(memory: object) -> list[object]:
    store = memory.store  # type: ignore[attr-defined]
    return store.get_facts(store.facts_by_status(ALL, 100))  # type: ignore[no-any-return]


def test_knowledge_update_supersedes_and_keeps_history(open_memory: MemoryFactory) -> None:
    me = [{"name": "user", "type": "person"}]
    memory = open_memory(
        extraction(facts=[fact("lives_in", "Berlin", about=["user"])], entities=me),
        extraction(facts=[fact("lives_in", "Munich", about=["user"])], entities=me),
    )
    say(memory, user_event(1, "I live in Berlin."))
    say(memory, user_event(2, "I just moved to Munich!", ts=MONDAY + 86400 * 30))

    current = memory.search("where does the user live", mode="hybrid", limit=3)
    facts = [h for h in current if h.node == "fact"]
    assert facts[0].text == "lives in: Munich"
    assert all("Berlin" not in h.text for h in facts)  # superseded: not a current answer

    before = memory.search("where did I live before?", limit=5)
    texts = [h.text for h in before if h.node == "fact"]
    assert "lives in: Berlin" in texts
    old = next(h for h in before if h.text == "lives in: Berlin")
    assert old.status == "superseded" and old.valid_to == MONDAY + 86400 * 30

    history = memory.history(key="lives_in")
    assert [(f.value, f.status) for f in history] == [
        ("Berlin", "superseded"),
        ("Munich", "active"),
    ]
    assert memory.store.superseded_by([history[0].id]) == {history[0].id: history[1].id}


def test_repeated_fact_in_other_words_confirms_instead_of_duplicating(
    open_memory: MemoryFactory,
) -> None:
    memory = open_memory(
        extraction(facts=[fact("favourite food", "likes sushi", 0.8, kind="preference")]),
        extraction(facts=[fact("Favourite_Food", "loves sushi", 0.8, kind="preference")]),
        extraction(facts=[fact("favourite food", "hates sushi", 0.8, kind="preference")]),
    )
    say(memory, user_event(1, "I like sushi"))
    say(memory, user_event(2, "sushi is the best"))
    [only] = _facts(memory)
    assert only.evidence_count == 2  # type: ignore[attr-defined]
    assert only.confidence == 0.96  # type: ignore[attr-defined]
    say(memory, user_event(3, "actually I hate sushi now"))
    states = sorted((f.value, f.status) for f in _facts(memory))  # type: ignore[attr-defined]
    assert states == [("hates sushi", "active"), ("likes sushi", "superseded")]


def test_confirming_a_certain_fact_keeps_it_certain(open_memory: MemoryFactory) -> None:
    memory = open_memory()
    first = memory.remember("I am allergic to peanuts", kind="preference")
    again = memory.remember("I am allergic to peanuts", kind="preference")
    assert again.id == first.id and again.evidence_count == 2
    assert (first.confidence, again.confidence) == (1.0, 1.0)


def test_combined_confidence_rises_below_certainty_and_never_falls() -> None:
    from shiyi.memory.lifecycle.observations import combine_confidence

    assert combine_confidence(0.8, 0.8) == pytest.approx(0.96)
    assert combine_confidence(0.9, 0.95) == 0.99  # evidence alone never makes it certain
    assert combine_confidence(1.0, 0.6) == 1.0
    assert combine_confidence(0.3, 0.0) == pytest.approx(0.3)


def test_pending_fact_becomes_active_on_a_second_observation(open_memory: MemoryFactory) -> None:
    memory = open_memory(
        extraction(facts=[fact("employer", "Acme", 0.6)]),
        extraction(facts=[fact("employer", "Acme", 0.6)]),
    )
    say(memory, user_event(1, "I might work for Acme"))
    assert [f.status for f in _facts(memory)] == ["pending"]  # type: ignore[attr-defined]
    say(memory, user_event(2, "yes, Acme it is"))
    [confirmed] = _facts(memory)
    assert confirmed.status == "active"  # type: ignore[attr-defined]
    assert confirmed.evidence_count == 2  # type: ignore[attr-defined]


def test_unsure_contradiction_is_an_open_conflict_until_confirmed(
    open_memory: MemoryFactory,
) -> None:
    memory = open_memory(
        extraction(facts=[fact("team", "payments", 0.95)]),
        extraction(facts=[fact("team", "search", 0.6)]),
        extraction(facts=[fact("team", "search", 0.7)]),
    )
    say(memory, user_event(1, "I'm on the payments team"))
    say(memory, user_event(2, "I may switch to search"))
    by_value = {f.value: f for f in _facts(memory)}  # type: ignore[attr-defined]
    assert by_value["search"].status == "pending"
    assert by_value["search"].conflicts_with == by_value["payments"].id
    assert memory.store.open_conflicts() == 1
    say(memory, user_event(3, "ok I'm on search now"))
    by_value = {f.value: f for f in _facts(memory)}  # type: ignore[attr-defined]
    assert by_value["search"].status == "active"
    assert by_value["payments"].status == "superseded"
    assert memory.store.open_conflicts() == 0


def test_same_key_about_different_entities_is_not_a_conflict(open_memory: MemoryFactory) -> None:
    memory = open_memory(
        extraction(facts=[fact("age", "7", about=["Tofu"])]),
        extraction(facts=[fact("age", "3", about=["Biscuit"])]),
    )
    say(memory, user_event(1, "Tofu is 7"))
    say(memory, user_event(2, "Biscuit is 3"))
    assert sorted(f.status for f in _facts(memory)) == ["active", "active"]  # type: ignore[attr-defined]


def test_relative_dates_resolve_against_the_message_time(open_memory: MemoryFactory) -> None:
    memory = open_memory(
        extraction(facts=[fact("hike", "went hiking last Saturday", kind="episodic")]),
        extraction(facts=[fact("trip", "Tokyo trip", kind="episodic", when="上周六")]),
    )
    old_monday = datetime(2023, 3, 6, 9, tzinfo=UTC).timestamp()
    say(memory, user_event(1, "I went hiking last Saturday", ts=old_monday))
    say(memory, user_event(2, "上周六我去了东京", ts=MONDAY))
    by_key = {f.key: f for f in _facts(memory)}  # type: ignore[attr-defined]
    assert by_key["hike"].value == "went hiking last Saturday (2023-03-04)"
    assert by_key["hike"].valid_from == datetime(2023, 3, 4, tzinfo=UTC).timestamp()
    assert by_key["trip"].valid_from == datetime(2026, 11, 21, tzinfo=UTC).timestamp()


def test_relative_date_phrases() -> None:
    text, day = resolve_relative("the day before yesterday and in 2 weeks", MONDAY)
    assert text == "the day before yesterday (2026-11-21) and in 2 weeks (2026-12-07)"
    assert day is not None and day.isoformat() == "2026-11-21"
    assert (
        resolve_relative("三天前 and 下周一", MONDAY)[0]
        == "三天前 (2026-11-20) and 下周一 (2026-11-30)"
    )
    assert resolve_relative("no dates here", MONDAY) == ("no dates here", None)


def test_entities_merge_by_alias_and_by_embedding(open_memory: MemoryFactory) -> None:
    model = ScriptedModel(
        [
            extraction(entities=[{"name": "Robert Smith", "type": "person", "aliases": ["Bob"]}]),
            extraction(
                entities=[{"name": "Bob", "type": "person"}],
                facts=[fact("role", "CTO", about=["Bob"])],
            ),
            extraction(entities=[{"name": "Acme Corporation", "type": "organization"}]),
            extraction(
                entities=[{"name": "Acme Corp", "type": "organization"}],
                relations=[{"from": "Bob", "to": "Acme Corp", "type": "works_at"}],
            ),
            extraction(entities=[{"name": "Acme Corp", "type": "person"}]),
        ]
    )
    memory = open_memory(model=model)
    for i, text in enumerate(["Robert Smith (Bob)", "Bob is CTO", "Acme Corporation", "Bob@Acme",
                              "a person called Acme Corp"], start=1):  # fmt: skip
        say(memory, user_event(i, text))
    [bob] = memory.store.find_entities(["bob"])
    assert bob.name == "robert smith" and "bob" in bob.aliases
    assert _facts(memory)[0].entities == ["robert smith"]  # type: ignore[attr-defined]
    [acme] = memory.store.find_entities(["acme corporation"])
    assert "acme corp" in acme.aliases  # merged by embedding similarity (0.98)
    around = memory.store.neighbourhood(["robert smith"], hops=1, limit=10)
    assert [(r.src, r.dst, r.type) for r in around.relations] == [
        ("robert smith", "acme corporation", "works_at")
    ]
    # Owned by the conversation's user and agent (issue 29): private like that turn.
    assert (around.relations[0].user_id, around.relations[0].agent_id) == ("default", "shiyi")
    # Same spelling, incompatible type: a different entity, not merged into the company.
    people = [e for e in memory.store.find_entities(["acme corp"]) if e.type == "person"]
    assert len(people) == 0 or people[0].name != "acme corporation"


def test_forgetting_an_event_forgets_facts_learned_only_from_it(
    open_memory: MemoryFactory,
) -> None:
    memory = open_memory(
        extraction(facts=[fact("safe code", "7731")]),
        extraction(facts=[fact("parking spot", "B12")]),
    )
    say(memory, user_event(1, "the safe code is 7731"), user_event(2, "I park in B12"))
    report = memory.forget_ids(["us11"])
    assert (report.events, report.facts) == (1, 1)
    values = [f.value for f in _facts(memory)]  # type: ignore[attr-defined]
    assert values == ["B12"]  # learned from both turns' window: it stays
    assert not memory.search("safe code 7731", mode="keyword")
