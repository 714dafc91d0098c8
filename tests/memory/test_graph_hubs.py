"""The graph path does not expand hub entities (mentioned by very many events): both backends."""

from __future__ import annotations

import pytest

from shiyi.memory.kuzu import graph as kuzu_graph
from shiyi.memory.models import EntityRecord, EventRecord, FactRecord
from shiyi.memory.postgres import graph as postgres_graph
from shiyi.memory.protocol import MemoryStore


def cap_hubs(monkeypatch: pytest.MonkeyPatch, mentions: int) -> None:
    monkeypatch.setattr(kuzu_graph, "HUB_MENTIONS", mentions)
    monkeypatch.setattr(postgres_graph, "HUB_MENTIONS", mentions)


@pytest.fixture
def graph(store: MemoryStore, monkeypatch: pytest.MonkeyPatch) -> MemoryStore:
    cap_hubs(monkeypatch, 3)
    store.add_events(
        [
            EventRecord(f"e{i}", "s1", "r1", float(i), "user", f"turn {i}", "user_message", i)
            for i in range(6)
        ]
    )
    store.upsert_entities([EntityRecord("hub", "concept"), EntityRecord("rare", "concept")])
    # "hub" is in five events (over the cap of 3), "rare" in two of them.
    store.link_mentions([(f"e{i}", "hub") for i in range(5)] + [("e1", "rare"), ("e4", "rare")])
    store.upsert_facts(
        [
            FactRecord(
                id="f1", key="", value="the hub is busy", kind="semantic", confidence=1.0,
                tier="long", created_at=1.0, updated_at=1.0, entities=["hub"],
            )
        ]
    )  # fmt: skip
    return store


def test_a_hub_adds_no_events_but_keeps_its_facts(graph: MemoryStore) -> None:
    around = graph.neighbourhood(["hub"], hops=2, limit=10)
    assert around.event_ids == []
    assert [s.id for s in around.fact_ids] == ["f1"]


def test_specific_entities_next_to_a_hub_still_expand(graph: MemoryStore) -> None:
    around = graph.neighbourhood(["hub", "rare"], hops=2, limit=10)
    assert [s.id for s in around.event_ids] == ["e4", "e1"]  # newest first on equal score


def test_under_the_cap_every_mention_counts(
    graph: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    cap_hubs(monkeypatch, 5)
    around = graph.neighbourhood(["hub", "rare"], hops=2, limit=10)
    # e1 and e4 touch both entities, so they outrank the events touching only the hub.
    assert [s.id for s in around.event_ids] == ["e4", "e1", "e3", "e2", "e0"]


def test_an_entity_few_events_mention_outweighs_a_common_one(
    graph: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    cap_hubs(monkeypatch, 10)
    graph.add_events([EventRecord("e9", "s1", "r1", 0.5, "user", "old turn", "user_message", 9)])
    graph.upsert_entities([EntityRecord("only", "topic")])
    graph.link_mentions([("e9", "only")])
    around = graph.neighbourhood(["hub", "only"], hops=1, limit=10)
    # e9 is the oldest event, yet its entity is mentioned once and "hub" five times
    assert around.event_ids[0].id == "e9"
    assert around.event_ids[0].score > around.event_ids[1].score


def test_another_users_mentions_make_no_hub_of_an_entity(
    store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # bo mentions Pixel in five turns (over the cap of 3), ana in one: a hub for bo and for
    # the store, not for ana, whose graph path reaches only her own turn
    cap_hubs(monkeypatch, 3)
    turns = [
        EventRecord(f"b{i}", "s1", "r1", float(i), "user", f"Pixel {i}", "user_message", i,
                    user_id="bo")
        for i in range(5)
    ]  # fmt: skip
    turns.append(EventRecord("a0", "s2", "r2", 9.0, "user", "Pixel", "user_message", user_id="ana"))
    store.add_events(turns)
    store.upsert_entities([EntityRecord("pixel", "pet")])
    store.link_mentions([(e.id, "pixel") for e in turns])

    def reached(owner: tuple[str, str] | None) -> list[str]:
        return [s.id for s in store.neighbourhood(["pixel"], 1, 10, owner=owner).event_ids]

    assert reached(("ana", "shiyi")) == ["a0"]
    assert reached(None) == []
    assert reached(("bo", "shiyi")) == []
    cap_hubs(monkeypatch, 10)
    assert reached(("bo", "shiyi")) == ["b4", "b3", "b2", "b1", "b0"]
    assert reached(("carol", "shiyi")) == []
