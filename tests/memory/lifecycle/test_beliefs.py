"""What the memory believes (issue 30): versions by when things were said, slots that
survive the extractor's wording, confirmation only from independent evidence.

Every test runs the real pipeline (a real Memory on both backends, its worker and job
queue) with the rule-based fake ``fast`` model of :mod:`.rule_extractor`, which re-reports
every statement of its window and names the value's entity in ``about``, as real models do.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from shiyi.config import Settings
from shiyi.llm.scripted import ScriptedModel
from shiyi.memory.lifecycle.pipeline import CONSOLIDATE, EXTRACT
from shiyi.memory.models import EventRecord, FactRecord
from shiyi.memory.service import Memory
from tests.memory.lifecycle.conftest import (
    MONDAY,
    MemoryFactory,
    extraction,
    fact,
    say,
    user_event,
)
from tests.memory.lifecycle.rule_extractor import RuleExtractor, likes, lives, moved_from, works

ALL = ["active", "pending", "superseded", "expired"]
DAY = 86400.0


def facts(memory: Memory) -> list[FactRecord]:
    return memory.store.get_facts(memory.store.facts_by_status(ALL, 100))


def live(memory: Memory) -> list[tuple[str, str]]:
    return sorted((f.key, f.value) for f in facts(memory) if f.status in ("active", "pending"))


def moved(day: int, city: str) -> EventRecord:
    """Day ``day``'s session: "I moved to ``city``"."""
    return user_event(day, f"I moved to {city}.", session=f"s{day}", ts=MONDAY + day * DAY)


def states(memory: Memory) -> list[tuple[str, str]]:
    return sorted((f.value, f.status) for f in facts(memory))


class Held:
    """A memory whose extraction model is absent until :meth:`start`: turns are stored
    while their extraction jobs wait, so a test can deliver jobs in any order."""

    def __init__(self, settings: Settings, model: ScriptedModel) -> None:
        self.model: ScriptedModel | None = None
        self._later = model
        self.memory = Memory.open(settings, start_worker=False, extraction_model=lambda: self.model)

    def start(self) -> None:
        self.memory.jobs.discard([EXTRACT, CONSOLIDATE])  # deliver them ourselves
        self.model = self._later


@pytest.fixture
def held(settings: Settings) -> Iterator[list[Held]]:
    opened: list[Held] = []
    yield opened
    for one in opened:
        one.memory.close()


# --- 1. statement time -------------------------------------------------------------------


def test_a_fact_is_dated_by_the_turn_that_states_it(settings: Settings, held: list[Held]) -> None:
    berlin = user_event(1, "I live in Berlin.", ts=MONDAY)
    later = user_event(2, "What's a good bakery near me?", ts=MONDAY + 3 * 3600)
    held.append(hold := Held(settings, RuleExtractor([lives()]).model()))
    say(hold.memory, berlin, later)
    hold.start()
    hold.memory.jobs.enqueue(EXTRACT, {"event_id": later.id})  # its window holds both turns
    assert hold.memory.worker.drain(timeout=60)

    [stated] = facts(hold.memory)
    assert stated.value == "Berlin"
    assert stated.valid_from == MONDAY  # not the window's last message, 3 hours later
    assert stated.anchor == berlin.anchor.key()  # expand opens at the stating turn
    assert stated.said_at == MONDAY and stated.said_in == [berlin.id]
    assert set(stated.source_events) == {berlin.id, later.id}  # the window, for expand
    assert hold.memory.history(key="lives_in")[0].said_at == MONDAY


# --- 2. an older statement never supersedes a newer one ----------------------------------


@pytest.mark.parametrize("about_value", [True, False], ids=["about-city", "about-user"])
def test_a_stale_re_extraction_never_overwrites_the_newer_value(
    open_memory: MemoryFactory, about_value: bool
) -> None:
    """The issue's scenario, with ``about: [city]`` as real models write it and with
    ``about: ["user"]`` (where the old code superseded Paris with the stale Berlin)."""
    memory = open_memory(model=RuleExtractor([lives(about_value=about_value)]).model())
    say(memory, user_event(1, "I live in Berlin.", session="s1", ts=MONDAY))
    say(memory, user_event(1, "I moved to Paris!", session="s2", ts=MONDAY + DAY))
    assert live(memory) == [("lives in", "Paris")]
    # A short follow-up in the old Berlin session: its window re-reads "I live in Berlin".
    say(memory, user_event(2, "thanks, that's all", session="s1", ts=MONDAY + 2 * DAY))

    assert live(memory) == [("lives in", "Paris")]
    assert states(memory) == [("Berlin", "superseded"), ("Paris", "active")]
    [hit] = [h for h in memory.search("where do I live", limit=5) if h.node == "fact"]
    assert hit.text == "lives in: Paris"


def test_an_old_statement_of_a_new_value_is_kept_as_history(
    settings: Settings, held: list[Held]
) -> None:
    """Jobs run newest first: Paris (said later) is current, Berlin becomes its history."""
    berlin = user_event(1, "I live in Berlin.", ts=MONDAY)
    paris = user_event(2, "I moved to Paris.", ts=MONDAY + DAY, session="s2")
    held.append(hold := Held(settings, RuleExtractor([lives()]).model()))
    say(hold.memory, berlin, paris)
    hold.start()
    for event in (paris, berlin):
        hold.memory.jobs.enqueue(EXTRACT, {"event_id": event.id})
    assert hold.memory.worker.drain(timeout=60)

    assert states(hold.memory) == [("Berlin", "superseded"), ("Paris", "active")]
    history = hold.memory.history(key="lives in")
    assert [(f.value, f.valid_to) for f in history] == [("Berlin", MONDAY + DAY), ("Paris", None)]


def test_duplicate_and_out_of_order_jobs_leave_one_live_fact_per_slot(
    settings: Settings, held: list[Held]
) -> None:
    """extract x2 + consolidate x2 for two statements, delivered newest first and twice."""
    berlin = user_event(1, "I live in Berlin.", ts=MONDAY)
    paris = user_event(2, "Big news: I moved to Paris.", ts=MONDAY + DAY)
    held.append(hold := Held(settings, RuleExtractor([lives()]).model()))
    say(hold.memory, berlin, paris)
    hold.start()
    jobs = hold.memory.jobs
    for kind, payload in [
        (EXTRACT, {"event_id": paris.id}),  # its window: Berlin and Paris
        (EXTRACT, {"event_id": paris.id}),  # delivered twice
        (CONSOLIDATE, {"session_id": "s1"}),
        (EXTRACT, {"event_id": berlin.id}),  # the older statement arrives last
        (CONSOLIDATE, {"session_id": "s1"}),
        (EXTRACT, {"event_id": berlin.id}),
    ]:
        jobs.enqueue(kind, payload)
    assert hold.memory.worker.drain(timeout=60)

    assert live(hold.memory) == [("lives in", "Paris")]
    assert states(hold.memory) == [("Berlin", "superseded"), ("Paris", "active")]
    by_value = {f.value: f for f in facts(hold.memory)}
    assert by_value["Paris"].evidence_count == 1  # re-read five times, said once
    assert by_value["Berlin"].evidence_count == 1


@pytest.mark.parametrize("window", [3, 2])
def test_a_turn_naming_old_and_new_value_dates_only_the_new_one(
    settings: Settings, open_memory: MemoryFactory, window: int
) -> None:
    """ "I moved from Berlin to Paris", re-read by later windows with a model that reports
    Berlin from it too: Berlin keeps its own, older turn (window 3: "I live in Berlin" is
    in the window) or, when the window only holds the move (window 2), a re-read of the
    turn that stated Paris cannot replace Paris."""
    settings.memory.lifecycle.window = window
    memory = open_memory(model=RuleExtractor([lives({"Berlin": "city"}), moved_from()]).model())
    berlin = user_event(1, "I live in Berlin.", ts=MONDAY)
    say(memory, berlin)
    say(memory, user_event(2, "I moved from Berlin to Paris.", ts=MONDAY + DAY))
    say(memory, user_event(3, "anyway, how are you?", ts=MONDAY + 2 * DAY))

    assert live(memory) == [("city", "Paris")]
    [old] = [f for f in facts(memory) if f.value == "Berlin"]
    assert old.status == "superseded" and old.said_in[0] == berlin.id


def test_one_turn_with_old_and_new_value_read_alone(open_memory: MemoryFactory) -> None:
    """Only "I moved from Berlin to Paris" was said: the extraction lists Berlin, then
    Paris, both from that turn; re-reading it later changes nothing."""
    memory = open_memory(model=RuleExtractor([moved_from()]).model())
    say(memory, user_event(1, "I moved from Berlin to Paris.", ts=MONDAY))
    assert live(memory) == [("city", "Paris")]
    say(memory, user_event(2, "what should I visit?", ts=MONDAY + 600))
    memory.consolidate("s1")
    assert memory.worker.drain(timeout=60)
    assert states(memory) == [("Berlin", "superseded"), ("Paris", "active")]


# --- 3. slot identity ----------------------------------------------------------------------


def test_one_slot_however_about_and_the_key_are_worded(open_memory: MemoryFactory) -> None:
    wording = {"Berlin": "lives_in", "Paris": "city", "Lyon": "home city",
               "Nice": "current city", "Lille": "residence"}  # fmt: skip
    memory = open_memory(model=RuleExtractor([lives(wording)]).model())
    for day, city in enumerate(wording):
        say(memory, moved(day, city))
        assert [value for _, value in live(memory)] == [city]

    assert states(memory) == sorted(
        [("Berlin", "superseded"), ("Paris", "superseded"), ("Lyon", "superseded"),
         ("Nice", "superseded"), ("Lille", "active")]
    )  # fmt: skip
    assert [f.value for f in memory.history(key="lives in")] == list(wording)
    assert [f.value for f in memory.history(key="home city")] == list(wording)


def test_unlisted_wordings_join_the_slot_by_embedding(open_memory: MemoryFactory) -> None:
    """Keys that are no exemplar of the attribute: the local MiniLM places them."""
    wording = {"Berlin": "lives_in", "Paris": "living location", "Lyon": "lives at"}
    memory = open_memory(model=RuleExtractor([lives(wording)]).model())
    for day, city in enumerate(wording):
        say(memory, moved(day, city))
    assert live(memory) == [("lives in", "Lyon")]


def test_lexical_slots_without_an_embedder(vectorless_settings: Settings) -> None:
    wording = {"Berlin": "city", "Paris": "current_city", "Lyon": "Residence"}
    model = RuleExtractor([lives(wording)]).model()
    memory = Memory.open(vectorless_settings, start_worker=False, extraction_model=lambda: model)
    try:
        for day, city in enumerate(wording):
            say(memory, moved(day, city))
        assert live(memory) == [("city", "Lyon")]
    finally:
        memory.close()


@pytest.mark.parametrize("office", ["Munich", "Berlin"])
def test_different_attributes_stay_separate(open_memory: MemoryFactory, office: str) -> None:
    """ "lives in" and "works in" are two slots, also when both values are one city (both
    facts are then about Berlin and read alike)."""
    memory = open_memory(model=RuleExtractor([lives(), works()]).model())
    say(memory, user_event(1, "I live in Berlin.", ts=MONDAY))
    say(memory, user_event(1, f"I work in {office}.", session="s2", ts=MONDAY + DAY))
    assert live(memory) == [("lives in", "Berlin"), ("works in", office)]


def test_numbered_and_qualified_keys_are_their_own_slots(open_memory: MemoryFactory) -> None:
    """MiniLM places "employer 1" next to "employer" (and "works at"), but numbered or
    qualified keys name something else than the user's own attribute."""
    memory = open_memory(
        extraction(facts=[fact("employer 1", "Acme")]),
        extraction(facts=[fact("employer 2", "Globex")]),
        extraction(facts=[fact("home city of project 4", "Lisbon")]),
        extraction(facts=[fact("company", "Initech")]),
    )
    say(memory, user_event(1, "client one is Acme"))
    say(memory, user_event(2, "client two is Globex"))
    say(memory, user_event(3, "project 4 is based in Lisbon"))
    say(memory, user_event(4, "I work at Initech"))
    assert live(memory) == [
        ("company", "Initech"),
        ("employer 1", "Acme"),
        ("employer 2", "Globex"),
        ("home city of project 4", "Lisbon"),
    ]


def test_many_valued_keys_keep_their_values_apart(open_memory: MemoryFactory) -> None:
    """ "likes sushi" about [sushi], "likes ramen" about [ramen]: two likes, not versions."""
    memory = open_memory(model=RuleExtractor([likes()]).model())
    say(memory, user_event(1, "I really like sushi", ts=MONDAY))
    say(memory, user_event(1, "I really like ramen", session="s2", ts=MONDAY + DAY))
    assert live(memory) == [("likes", "likes ramen"), ("likes", "likes sushi")]


def test_the_same_attribute_of_different_subjects_stays_separate(
    open_memory: MemoryFactory,
) -> None:
    memory = open_memory(
        extraction(facts=[fact("age", "Tofu is 7 years old", about=["Tofu"])]),
        extraction(facts=[fact("age", "Biscuit is 3 years old", about=["Biscuit"])]),
    )
    say(memory, user_event(1, "Tofu is 7"))
    say(memory, user_event(2, "Biscuit is 3"))
    assert sorted(f.status for f in facts(memory)) == ["active", "active"]


def test_the_users_name_in_about_is_the_user(open_memory: MemoryFactory) -> None:
    memory = open_memory(
        extraction(facts=[fact("name", "Alice", about=["Alice"])]),
        extraction(facts=[fact("lives_in", "Berlin", about=["Alice", "Berlin"])]),
        extraction(facts=[fact("lives_in", "Paris", about=["me", "Paris"])]),
    )
    say(memory, user_event(1, "My name is Alice."))
    say(memory, user_event(2, "I live in Berlin.", session="s2", ts=MONDAY + DAY))
    say(memory, user_event(3, "I moved to Paris.", session="s3", ts=MONDAY + 2 * DAY))
    assert live(memory) == [("lives in", "Paris"), ("name", "Alice")]


# --- 4. confirmation only from independent evidence ---------------------------------------


def test_a_hedge_read_again_stays_pending_until_said_again(open_memory: MemoryFactory) -> None:
    memory = open_memory(model=RuleExtractor([likes()]).model())
    say(memory, user_event(1, "maybe I like sushi", ts=MONDAY))
    memory.consolidate("s1")  # the end of the session reads the same message again
    assert memory.worker.drain(timeout=60)
    [hedge] = facts(memory)
    assert (hedge.status, hedge.evidence_count, hedge.confidence) == ("pending", 1, 0.6)

    say(memory, user_event(2, "ok, thinking about it: I really like sushi", ts=MONDAY + 600))
    [confirmed] = facts(memory)
    assert (confirmed.status, confirmed.evidence_count) == ("active", 2)
    assert confirmed.said_at == MONDAY + 600
