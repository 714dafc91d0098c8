"""Short-term TTL per kind, the expiry sweep, promotion by use and by explicit confirmation."""

from __future__ import annotations

import dataclasses
import time

from tests.memory.lifecycle.conftest import MemoryFactory, extraction, fact, say, user_event

DAY = 86400.0


def test_short_term_facts_expire_by_kind_ttl(open_memory: MemoryFactory) -> None:
    memory = open_memory(
        extraction(
            facts=[
                fact("mood", "tired", kind="mood"),
                fact("todo_report", "send the Q3 report", kind="todo"),
                fact("tabs_or_spaces", "spaces", kind="preference"),
            ]
        )
    )
    before = time.time()
    say(memory, user_event(1, "so tired; must send the Q3 report; I prefer spaces"))
    facts = {f.kind: f for f in memory.store.get_facts(memory.store.facts_by_status(["active"], 9))}
    assert facts["mood"].tier == "short"
    for kind, days in (("mood", 1), ("todo", 3), ("preference", 7)):
        expires = facts[kind].expires_at
        assert expires is not None and before + days * DAY <= expires <= time.time() + days * DAY

    assert memory.store.expire_facts(time.time() + 2 * DAY) == [facts["mood"].id]
    assert memory.store.get_facts([facts["mood"].id])[0].status == "expired"
    found = memory.search("tired mood", limit=10)
    assert facts["mood"].id not in {h.id for h in found}
    assert sorted(memory.store.expire_facts(time.time() + 8 * DAY)) == sorted(
        [facts["todo"].id, facts["preference"].id]
    )


def test_three_retrievals_promote_to_long_term(open_memory: MemoryFactory) -> None:
    memory = open_memory(extraction(facts=[fact("editor", "Helix", kind="preference")]))
    say(memory, user_event(1, "I use the Helix editor"))
    tiers = []
    for _ in range(3):
        [hit] = [h for h in memory.search("Helix editor", limit=3) if h.node == "fact"]
        tiers.append(hit.tier)
    assert tiers == ["short", "short", "long"]
    [stored] = memory.store.get_facts([hit.id])
    assert (stored.tier, stored.expires_at, stored.access_count) == ("long", None, 3)
    assert memory.store.expire_facts(time.time() + 365 * DAY) == []


def test_remember_this_promotes_what_was_just_learned(open_memory: MemoryFactory) -> None:
    memory = open_memory(
        extraction(facts=[fact("deploy_day", "Thursday", kind="decision")]),
        extraction(facts=[fact("deploy_day", "Thursday", kind="decision")]),
    )
    say(memory, user_event(1, "We deploy on Thursdays."))
    [learned] = memory.store.get_facts(memory.store.facts_by_status(["active"], 5))
    assert learned.tier == "short"
    say(memory, user_event(2, "记住这个: we deploy on Thursdays"))
    [kept] = memory.store.get_facts([learned.id])
    assert (kept.tier, kept.expires_at, kept.evidence_count) == ("long", None, 2)


def test_remember_is_long_term_and_goes_through_dedup(open_memory: MemoryFactory) -> None:
    memory = open_memory()
    first = memory.remember("The VPN needs the hardware key", kind="semantic")
    again = memory.remember("the VPN needs the hardware key.", kind="semantic")
    assert (first.tier, first.expires_at) == ("long", None)
    assert again.id == first.id and again.evidence_count == 2
    other = memory.remember("Standups are at 9:30", kind="convention")
    assert other.id != first.id  # keyless memories never supersede each other
    assert memory.store.get_facts([first.id])[0].status == "active"


def test_sweep_runs_in_the_worker(open_memory: MemoryFactory) -> None:
    memory = open_memory(extraction(facts=[fact("mood", "happy", kind="mood")]))
    memory.settings.lifecycle.ttl_days["mood"] = 0.0
    say(memory, user_event(1, "happy today"))
    memory.worker.run_periodic(now=time.monotonic() + 10_000)
    statuses = [f.status for f in memory.store.get_facts(memory.store.facts_by_status(
        ["active", "expired"], 5))]  # fmt: skip
    assert statuses == ["expired"]


def test_a_fact_past_its_ttl_is_not_recalled_before_the_sweep(open_memory: MemoryFactory) -> None:
    """Expiry is a read-time truth: the 60 s sweep only writes it down."""
    memory = open_memory(extraction(facts=[fact("mood", "exhausted after the marathon")]))
    say(memory, user_event(1, "exhausted after the marathon"))
    [learned] = memory.store.get_facts(memory.store.facts_by_status(["active"], 5))
    assert memory.search("exhausted marathon", limit=10)[0].id == learned.id
    lapsed = dataclasses.replace(learned, tier="short", expires_at=time.time() - 1)
    memory.store.upsert_facts([lapsed])  # its TTL has passed; no sweep has run

    assert memory.store.get_facts([learned.id])[0].status == "active"  # stored: not swept yet
    for mode in ("hybrid", "keyword", "semantic", "graph", "recent"):
        assert learned.id not in {h.id for h in memory.search("exhausted marathon", mode=mode)}
    assert learned.id not in {h.id for h in memory.prefetch("exhausted after the marathon")}
    assert learned.text not in memory.query_text("exhausted marathon")  # the turn stays
    shown = memory.get(learned.id)
    assert shown is not None and shown.status == "expired"
    assert [f.status for f in memory.history(key="mood")] == ["expired"]
