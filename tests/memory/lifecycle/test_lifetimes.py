"""Lifetimes as designed (issue 30, seed 001 1.1): long-term kinds do not expire by default,
short-term kinds keep their TTL; stores written with the old default expiry are migrated."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

from shiyi.config import Settings
from shiyi.memory.models import FactKind, FactRecord
from shiyi.memory.service import Memory
from tests.memory.lifecycle.conftest import MemoryFactory, extraction, fact, say, user_event

DAY = 86400.0
META_KEY = "lifecycle.long_term_lifetimes"
"""The store's record that the lifetime migration ran (lifecycle/lifetimes.py)."""
PROCEDURE = {"trigger": "when releasing", "steps": ["tag", "push"]}


def test_long_term_kinds_never_expire_short_term_kinds_do(open_memory: MemoryFactory) -> None:
    memory = open_memory(
        extraction(
            facts=[
                fact("lives_in", "Berlin", about=["user"]),
                fact("release", "how to release", kind="procedural", **PROCEDURE),
                fact("hike", "went hiking on Saturday", kind="episodic"),
                fact("tabs", "tabs in Go files", kind="convention"),
                fact("editor", "Helix", kind="preference"),
                fact("mood", "tired", kind="mood"),
            ]
        )
    )
    say(memory, user_event(1, "I live in Berlin, release by tag+push, hiked, tabs; Helix; tired"))
    by_kind = {
        f.kind: f for f in memory.store.get_facts(memory.store.facts_by_status(["active"], 9))
    }
    for kind in ("semantic", "procedural", "episodic", "convention"):
        assert (by_kind[kind].tier, by_kind[kind].expires_at) == ("long", None), kind
    assert by_kind["preference"].tier == "short" and by_kind["preference"].expires_at
    expired = memory.store.expire_facts(time.time() + 400 * DAY)
    assert sorted(expired) == sorted([by_kind["preference"].id, by_kind["mood"].id])


def _old(fact_id: str, kind: FactKind, lifetime_days: float | None, created: float) -> FactRecord:
    """A fact as an older shiyi stored it: short term, expiring ``lifetime_days`` after
    its creation."""
    expires = None if lifetime_days is None else created + lifetime_days * DAY
    return FactRecord(
        id=fact_id, key=fact_id, value=f"{fact_id} value", kind=kind, tier="short",
        created_at=created, updated_at=created, valid_from=created, expires_at=expires,
    )  # fmt: skip


@contextmanager
def opened(settings: Settings) -> Iterator[Memory]:
    memory = Memory.open(settings, start_worker=False)
    try:
        yield memory
    finally:
        memory.close()


def test_opening_an_old_store_clears_the_old_default_expiry_only(settings: Settings) -> None:
    created = time.time() - 3 * DAY
    with opened(settings) as first:
        first.store.upsert_facts(
            [
                _old("fact_semantic", "semantic", 30, created),  # the old defaults
                _old("fact_episode", "episodic", 14, created + 0.123456),
                _old("fact_procedure", "procedural", 30, created),
                _old("fact_convention", "convention", 30, created),
                _old("fact_chosen", "semantic", 60, created),  # a configured TTL: kept
                _old("fact_pref", "preference", 7, created),  # short term by design: kept
            ]
        )
        first.store.set_meta(META_KEY, "")  # as an older shiyi left it: not migrated

    with opened(settings) as reopened:
        facts = {f.id: f for f in reopened.store.get_facts(reopened.store.fact_ids(20))}
        for migrated in ("fact_semantic", "fact_episode", "fact_procedure", "fact_convention"):
            assert (facts[migrated].tier, facts[migrated].expires_at) == ("long", None), migrated
        assert facts["fact_chosen"].expires_at == created + 60 * DAY
        assert facts["fact_pref"].expires_at == created + 7 * DAY
        expired = reopened.store.expire_facts(time.time() + 400 * DAY)
        assert sorted(expired) == ["fact_chosen", "fact_pref"]


def test_the_lifetime_migration_runs_once(settings: Settings) -> None:
    """Once done, a fact given exactly the old default later (a configured TTL of 30 days
    for semantic facts, then removed again) is the user's choice and stays."""
    with opened(settings) as first:
        assert first.store.get_meta(META_KEY) == "1"
        first.store.upsert_facts([_old("fact_later", "semantic", 30, time.time())])
    with opened(settings) as reopened:
        [kept] = reopened.store.get_facts(["fact_later"])
        assert kept.tier == "short" and kept.expires_at is not None
