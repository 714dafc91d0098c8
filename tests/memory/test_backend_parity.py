"""Parity: the same inputs give the same search results on the embedded store and PostgreSQL.

Unlike the rest of the suite (one test, run once per backend), each test here opens both
stores side by side and compares what every recall path returns, rank for rank.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from bench.synthetic import FILLER, generate

from shiyi.config import load_settings
from shiyi.index import keyword as embedded_keywords
from shiyi.memory.kuzu.store import EmbeddedStore
from shiyi.memory.models import (
    EntityRecord,
    EventRecord,
    FactRecord,
    MemoryHit,
    RelationRecord,
    Scored,
)
from shiyi.memory.postgres import keywords as postgres_keywords
from shiyi.memory.postgres.store import PostgresStore
from shiyi.memory.protocol import MemoryStore
from shiyi.memory.service import Memory
from shiyi.memory.transfer.importers import ImportedConversation, detect_and_load

DIM = 16
BASE = 1_700_000_000.0


@pytest.fixture
def pair(tmp_path: Path, postgres_url: str) -> Iterator[tuple[MemoryStore, MemoryStore]]:
    embedded = EmbeddedStore(tmp_path / "embedded", dimension=DIM, embedding_model="m")
    postgres = PostgresStore(postgres_url, dimension=DIM, embedding_model="m")
    yield embedded, postgres
    embedded.close()
    postgres.close()


def both(pair: tuple[MemoryStore, MemoryStore], method: str, *args: object) -> None:
    for store in pair:
        getattr(store, method)(*args)


def ranked(hits: list[Scored]) -> list[tuple[str, float]]:
    return [(h.id, round(h.score, 6)) for h in hits]


def corpus(count: int) -> list[EventRecord]:
    """Turns with shared and rare words, numbers, identifiers, paths and Chinese."""
    rng = random.Random(11)
    extras = ["error 404", "user3", "src/app/main.py", "2024-05-01", "部署新版本", "parse_config"]
    events = []
    for i in range(count):
        text = f"{FILLER[i % len(FILLER)]} {rng.choice(extras)} item{i % 17} ticket #{i % 5}"
        events.append(EventRecord(f"e{i}", f"s{i % 4}", f"r{i % 9}", BASE + i, "user", text,
                                  "user_message", i))  # fmt: skip
    return events


QUERIES = [
    "error 404", "user3 login", "main.py", "parse_config", "2024", "部署", "ticket 3",
    "item4 deploy", "what happened on 2024-05-01?", "nothing matches zzzz", "the", "#2",
    "ereor 404", "the weahter lately", "flihgts so expnsive",  # typing slips
]  # fmt: skip


@pytest.mark.parametrize("budget", [4000, 12], ids=["within-budget", "newest-rows-only"])
def test_keyword_search_ranks_alike(
    pair: tuple[MemoryStore, MemoryStore], monkeypatch: pytest.MonkeyPatch, budget: int
) -> None:
    # A small budget takes the plan's other branch: only the newest matching rows are scored.
    monkeypatch.setattr(embedded_keywords, "_SCORE_BUDGET", budget)
    monkeypatch.setattr(postgres_keywords, "SCORE_BUDGET", budget)
    events = corpus(300)
    both(pair, "add_events", events)
    facts = [FactRecord(id=f"f{i}", key=f"k{i}", value=f"fact about item{i} and error 404")
             for i in range(20)]  # fmt: skip
    both(pair, "upsert_facts", facts)
    both(pair, "delete", ["e7", "f3"])  # deletions change N, avgdl and document frequencies
    both(pair, "upsert_facts", [FactRecord(id="f5", key="k5", value="rewritten user3 fact")])
    embedded, postgres = pair
    compared = 0
    for query in QUERIES:
        expected = embedded.keyword_search(query, 20)
        assert ranked(postgres.keyword_search(query, 20)) == ranked(expected), query
        assert [h.node for h in postgres.keyword_search(query, 20)] == [h.node for h in expected]
        compared += len(expected)
    assert compared > 100  # the queries really match something
    assert embedded.counts()["keyword_docs"] == postgres.counts()["keyword_docs"] == 318


def test_vector_search_ranks_alike(pair: tuple[MemoryStore, MemoryStore]) -> None:
    rng = random.Random(3)
    vectors = [(f"e{i}", [rng.gauss(0, 1) for _ in range(DIM)]) for i in range(400)]
    both(pair, "add_events", [EventRecord(i, "s", "r", BASE, "user", i, "imported")
                              for i, _ in vectors])  # fmt: skip
    both(pair, "set_embeddings", "event", vectors)
    embedded, postgres = pair
    for _ in range(30):
        query = [rng.gauss(0, 1) for _ in range(DIM)]
        expected = embedded.vector_search("event", query, 20)
        found = postgres.vector_search("event", query, 20)
        assert [h.id for h in found] == [h.id for h in expected]
        # float32 on both sides, summed in a different order: equal to ~1e-6.
        assert [h.score for h in found] == pytest.approx([h.score for h in expected], abs=1e-5)


def test_graph_neighbourhood_alike(pair: tuple[MemoryStore, MemoryStore]) -> None:
    rng = random.Random(5)
    names = [f"n{i}" for i in range(30)]
    events = [EventRecord(f"e{i}", "s", "r", BASE + rng.randrange(50), "user", f"t{i}",
                          "imported", i) for i in range(120)]  # fmt: skip
    both(pair, "add_events", events)
    both(pair, "upsert_entities", [EntityRecord(n) for n in names])
    mentions = [(f"e{rng.randrange(120)}", rng.choice(names)) for _ in range(300)]
    both(pair, "link_mentions", mentions)
    relations = [RelationRecord(rng.choice(names), rng.choice(names), rng.choice("ab"))
                 for _ in range(40)]  # fmt: skip
    both(pair, "add_relations", relations)
    facts = [FactRecord(id=f"f{i}", key="", value=f"v{i}", updated_at=float(rng.randrange(9)),
                        entities=rng.sample(names, 2)) for i in range(40)]  # fmt: skip
    both(pair, "upsert_facts", facts)
    embedded, postgres = pair
    for seeds in (["n1"], ["n2", "n3"], ["n4", "n5", "n6"], ["nobody"]):
        for hops in (1, 2):
            a = embedded.neighbourhood(seeds, hops, 15)
            b = postgres.neighbourhood(seeds, hops, 15)
            assert ranked(b.event_ids) == ranked(a.event_ids), (seeds, hops)
            assert ranked(b.fact_ids) == ranked(a.fact_ids), (seeds, hops)
            assert set(b.entities) == set(a.entities)
            assert {(r.src, r.dst, r.type) for r in b.relations} == {
                (r.src, r.dst, r.type) for r in a.relations
            }


def _conversations(tmp_path: Path) -> list[ImportedConversation]:
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps(generate(conversations=2, sessions=3, turns=12, seed=3)))
    return detect_and_load(path)


def _key(hit: MemoryHit) -> str:
    # Fact ids are random per store; events keep theirs (from the import).
    return hit.id if hit.node == "event" else f"fact: {hit.text}"


def test_every_mode_returns_the_same_memories(tmp_path: Path, postgres_url: str) -> None:
    """End to end with the real embedder: import, embed, link entities, search every mode."""
    conversations = _conversations(tmp_path)
    events = [e for c in conversations for e in c.events]
    questions = [qa.question for c in conversations for qa in c.qa][:25]
    results: dict[str, dict[tuple[str, str], list[str]]] = {}
    for name, store in (("embedded", "embedded"), ("postgres", postgres_url)):
        settings = load_settings(home=tmp_path / name, workspace=tmp_path)
        settings.memory.store = store
        memory = Memory.open(settings, start_worker=False)
        try:
            memory.import_events(events)
            memory.remember("Procedure: deploys go out with `make release` after tests pass")
            assert memory.worker.drain(timeout=300)
            results[name] = {
                (mode, q): [_key(h) for h in memory.retriever.search(q, mode=mode, limit=10,
                                                                     touch=False)]
                for mode in ("hybrid", "semantic", "keyword", "graph", "recent")
                for q in questions
            }  # fmt: skip
        finally:
            memory.close()
    assert sum(len(ids) for ids in results["embedded"].values()) > 500
    differing = {
        key: (ids, results["postgres"][key])
        for key, ids in results["embedded"].items()
        if results["postgres"][key] != ids
    }
    assert differing == {}
