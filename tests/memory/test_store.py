"""The MemoryStore contract, run on both backends (embedded Kuzu + SQLite, and PostgreSQL).

Every test here gets ``store`` (or ``open_store`` to re-open it) once per backend; what is
checked is the protocol's behaviour: ordering, score direction, ids ignored when already
present, edges removed with their nodes, the NEXT chain following session order.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from shiyi.errors import StorageError
from shiyi.memory.kuzu import writes as kuzu_writes
from shiyi.memory.kuzu.store import EmbeddedStore
from shiyi.memory.models import EntityRecord, EventRecord, FactRecord, RelationRecord
from shiyi.memory.protocol import MemoryStore
from shiyi.memory.scopes import Viewer
from shiyi.memory.text.topics import specificity
from tests.memory.conftest import (
    DIM,
    StoreFactory,
    event_access,
    mention_count,
    next_pairs,
    session_links,
)


def unit(i: int) -> list[float]:
    vector = [0.0] * DIM
    vector[i] = 1.0
    return vector


def event(eid: str, ts: float, *, session: str = "s1", run: str = "r1", it: int = 0,
          seg: int = 0) -> EventRecord:  # fmt: skip
    return EventRecord(
        id=eid, session_id=session, run_id=run, ts=ts, role="user", content=f"text {eid}",
        segment_type="user_message", iteration=it, segment=seg,
    )  # fmt: skip


def reset_vectors(store: MemoryStore, dimension: int, model: str) -> None:
    if isinstance(store, EmbeddedStore):
        store.graph.reset_vectors(dimension, model)
    else:
        store.reset_vectors(dimension, model)  # type: ignore[attr-defined]


def test_implements_the_protocol(store: MemoryStore) -> None:
    assert isinstance(store, MemoryStore)


def test_restart_keeps_data(open_store: StoreFactory) -> None:
    store = open_store()
    store.add_events([event("e1", 1.0)])
    store.set_embeddings("event", [("e1", unit(0))])
    store.set_meta("k", "v")
    store.close()
    store = open_store()
    assert [e.id for e in store.get_events(["e1"])] == ["e1"]
    assert store.get_meta("k") == "v"
    assert store.vector_search("event", unit(0), 1)[0].id == "e1"
    assert store.keyword_search("e1", 5)[0].id == "e1"


@pytest.mark.parametrize("copy_threshold", [1, 1000], ids=["bulk", "small"])
def test_add_events_idempotent_with_chain(
    store: MemoryStore, monkeypatch: pytest.MonkeyPatch, copy_threshold: int
) -> None:
    monkeypatch.setattr(kuzu_writes, "COPY_THRESHOLD", copy_threshold)  # embedded's two paths
    batch = [
        event("c", 3.0),
        event("a", 1.0),
        event("b", 1.0, seg=1),
        event("x", 0.5, session="s2"),
    ]
    assert store.add_events(batch) == 4
    assert store.add_events(batch) == 0
    assert next_pairs(store) == {("a", "b"), ("b", "c")}
    # A late event landing mid-session is spliced into the chain.
    assert store.add_events([event("a2", 2.0), event("a", 1.0)]) == 1
    assert next_pairs(store) == {("a", "b"), ("b", "a2"), ("a2", "c")}
    assert session_links(store) == [
        ("a", "s1"), ("a2", "s1"), ("b", "s1"), ("c", "s1"), ("x", "s2")
    ]  # fmt: skip
    assert store.counts()["sessions"] == 2
    assert store.counts()["keyword_docs"] == 5


def test_a_repeated_id_in_one_batch_keeps_the_first(store: MemoryStore) -> None:
    first, second = event("d", 1.0), event("d", 2.0)
    second.content = "another text"
    assert store.add_events([first, second]) == 1
    assert [e.content for e in store.get_events(["d"])] == ["text d"]


def test_vector_search_nearest_and_newly_embedded(store: MemoryStore) -> None:
    store.add_events([event(f"e{i}", float(i)) for i in range(4)])
    store.set_embeddings("event", [("e0", unit(0)), ("e1", unit(1))])
    hits = store.vector_search("event", [0.9, 0.1, 0, 0, 0, 0, 0, 0], 2)
    assert [h.id for h in hits] == ["e0", "e1"]
    assert hits[0].score == pytest.approx(0.9 / (0.82**0.5), rel=1e-4)
    assert hits[0].score > hits[1].score  # cosine similarity: higher is nearer
    # Embedded after the first search, and re-embedded: both visible at once.
    store.set_embeddings("event", [("e2", unit(2)), ("e0", unit(3))])
    assert store.vector_search("event", unit(2), 1)[0].id == "e2"
    assert store.vector_search("event", unit(3), 1)[0].id == "e0"
    assert {h.id for h in store.vector_search("event", unit(0), 10)} == {"e0", "e1", "e2"}
    assert [e.id for e in store.events_missing_embeddings(10)] == ["e3"]
    assert store.counts()["embedded_events"] == 3
    with pytest.raises(StorageError, match="dimension"):
        store.vector_search("event", [1.0, 0.0], 1)


def test_vector_search_reloads_from_disk(open_store: StoreFactory) -> None:
    store = open_store()
    store.add_events([event(f"e{i}", float(i)) for i in range(6)])
    store.set_embeddings("event", [(f"e{i}", unit(i)) for i in range(6)])
    assert store.vector_search("event", unit(2), 1)[0].id == "e2"
    store.set_embeddings("event", [("e2", unit(4))])  # re-embedded after a search
    store.delete(["e4"])
    assert [h.id for h in store.vector_search("event", unit(4), 1)] == ["e2"]
    store.close()
    reopened = open_store()
    assert [h.id for h in reopened.vector_search("event", unit(4), 1)] == ["e2"]
    assert {h.id for h in reopened.vector_search("event", unit(0), 10)} == {
        "e0", "e1", "e2", "e3", "e5"
    }  # fmt: skip


def test_vectors_for_facts_and_entities(store: MemoryStore) -> None:
    store.upsert_entities([EntityRecord("kuzu"), EntityRecord("python")])
    store.upsert_facts([FactRecord(id="f1", key="db", value="kuzu")])
    store.set_embeddings("entity", [("kuzu", unit(4)), ("python", unit(5)), ("ghost", unit(6))])
    store.set_embeddings("fact", [("f1", unit(6))])
    assert store.vector_search("entity", unit(5), 1)[0].id == "python"
    assert [h.id for h in store.vector_search("fact", unit(6), 5)] == ["f1"]
    assert store.counts()["embedded_entities"] == 2  # no vector for a node that does not exist
    with pytest.raises(StorageError, match="dimension"):
        store.set_embeddings("fact", [("f1", [1.0, 2.0])])


def test_run_similarity_is_the_query_against_each_runs_mean_vector(
    open_store: StoreFactory,
) -> None:
    store = open_store()
    store.add_events([event("a0", 0.0, run="ra"), event("a1", 1.0, run="ra", it=1),
                      event("b0", 2.0, run="rb"), event("c0", 3.0, run="rc")])  # fmt: skip
    # Run ra's turns point along axes 0 and 1 (one of them not of unit length: each turn
    # counts as a direction); rb's along axis 2; rc's turn has no vector yet.
    store.set_embeddings("event", [("a0", unit(0)), ("a1", [0.0, 3.0, 0, 0, 0, 0, 0, 0]),
                                   ("b0", unit(2))])  # fmt: skip
    query = [1.0, 1.0, 0.5, 0, 0, 0, 0, 0]
    similarity = store.run_similarity(["ra", "rb", "rc", "nowhere"], query)
    assert set(similarity) == {"ra", "rb"}  # no embedded turn: no mean to compare
    # mean of a0, a1 = (0.5, 0.5, 0, ...): cosine with the query = 1 / (sqrt(0.5) * 1.5)
    assert similarity["ra"] == pytest.approx(1 / (0.5**0.5 * 1.5), rel=1e-5)
    assert similarity["rb"] == pytest.approx(0.5 / 1.5, rel=1e-5)
    store.set_embeddings("event", [("c0", unit(1))])
    store.close()
    reopened = open_store()  # the mean is of what is stored, not of a cache's past
    assert reopened.run_similarity(["rc"], unit(1)) == {"rc": pytest.approx(1.0)}
    assert reopened.run_similarity([], unit(1)) == {}
    with pytest.raises(StorageError, match="dimension"):
        reopened.run_similarity(["ra"], [1.0, 0.0])


def test_run_centroid_is_the_unit_mean_of_the_runs_turns(open_store: StoreFactory) -> None:
    store = open_store()
    store.add_events([event("a0", 0.0, run="ra"), event("a1", 1.0, run="ra", it=1),
                      event("b0", 2.0, run="rb"), event("c0", 3.0, run="rc")])  # fmt: skip
    store.set_embeddings("event", [("a0", unit(0)), ("a1", [0.0, 3.0, 0, 0, 0, 0, 0, 0]),
                                   ("b0", unit(2))])  # fmt: skip
    # each turn counts as a direction: (1, 1, 1) / sqrt(3), whatever a1's length
    third = 3**-0.5
    expected = [third, third, third, 0, 0, 0, 0, 0]
    assert store.run_centroid(["ra", "rb", "nowhere"]) == pytest.approx(expected, abs=1e-6)
    assert store.run_centroid(["rb"]) == pytest.approx(unit(2), abs=1e-6)
    assert store.run_centroid(["rc"]) == []  # nothing embedded: no direction
    assert store.run_centroid([]) == []
    store.set_embeddings("event", [("c0", [0.0, 0.0, -1.0, 0, 0, 0, 0, 0])])
    assert store.run_centroid(["rb", "rc"]) == []  # turns that cancel out: none either


@pytest.fixture
def small_graph(store: MemoryStore) -> MemoryStore:
    """kuzu -RELATED_TO-> python -RELATED_TO-> numpy; e1 mentions kuzu, e2 python, e3 numpy."""
    store.add_events([event("e1", 1.0), event("e2", 2.0), event("e3", 3.0)])
    store.upsert_entities([EntityRecord("kuzu", aliases=["kuzudb"]), EntityRecord("python"),
                           EntityRecord("numpy")])  # fmt: skip
    store.link_mentions([("e1", "kuzu"), ("e1", "kuzu"), ("e2", "python"), ("e3", "numpy"),
                         ("missing", "kuzu"), ("e1", "missing")])  # fmt: skip
    store.add_relations([RelationRecord("kuzu", "python", "binding", 0.5),
                         RelationRecord("python", "numpy", "uses")])  # fmt: skip
    store.upsert_facts([
        FactRecord(id="f1", key="db", value="kuzu", entities=["kuzu"], source_events=["e1"]),
        FactRecord(id="f2", key="lang", value="python", entities=["python"]),
    ])  # fmt: skip
    return store


def test_neighbourhood_one_hop(small_graph: MemoryStore) -> None:
    n = small_graph.neighbourhood(["KuzuDB"], hops=1, limit=10)
    assert n.entities == ["kuzu"]
    assert [s.id for s in n.event_ids] == ["e1"]
    assert [s.id for s in n.fact_ids] == ["f1"]
    assert [(r.src, r.dst, r.type) for r in n.relations] == [("kuzu", "python", "binding")]
    assert small_graph.counts()["relations"] == 2
    assert mention_count(small_graph) == 3  # the duplicate and the dangling pairs are ignored


def test_neighbourhood_two_hops_scores_direct_higher(small_graph: MemoryStore) -> None:
    n = small_graph.neighbourhood(["kuzu"], hops=2, limit=10)
    assert n.entities == ["kuzu", "python"]
    # each entity is mentioned once, so both scores carry the same specificity factor
    one = specificity(1)
    assert [(s.id, s.score) for s in n.event_ids] == [("e1", one), ("e2", pytest.approx(one / 2))]
    assert [s.id for s in n.fact_ids] == ["f1", "f2"]
    assert small_graph.neighbourhood(["nobody"], hops=2, limit=10).event_ids == []
    # From python, both neighbours are one hop away: the newer event ranks first.
    around = small_graph.neighbourhood(["python"], hops=2, limit=2)
    assert [s.id for s in around.event_ids] == ["e2", "e3"]


def test_relation_weight_updated_and_aliases_merged(small_graph: MemoryStore) -> None:
    small_graph.add_relations([RelationRecord("kuzu", "python", "binding", 0.9, valid_from=5.0)])
    small_graph.add_relations([RelationRecord("kuzu", "python", "binding", 0.7)])
    rel = small_graph.neighbourhood(["kuzu"], hops=1, limit=5).relations
    assert [(r.type, r.weight, r.valid_from) for r in rel] == [("binding", 0.7, 5.0)]
    small_graph.add_relations([RelationRecord("kuzu", "ghost", "binding")])  # no such entity
    assert small_graph.counts()["relations"] == 2
    small_graph.upsert_entities([EntityRecord("kuzu", type="technology", aliases=["kùzu"])])
    small_graph.upsert_entities([EntityRecord("kuzu", type="concept", display="Kuzu")])
    (entity,) = small_graph.find_entities(["kùzu"])
    assert entity.aliases == ["kuzudb", "kùzu"]
    assert (entity.type, entity.display) == ("technology", "Kuzu")


def test_get_facts_with_links(small_graph: MemoryStore) -> None:
    facts = small_graph.get_facts(["f2", "nope", "f1", "f2"])
    assert [f.id for f in facts] == ["f2", "f1"]
    assert facts[1].entities == ["kuzu"]
    assert facts[1].source_events == ["e1"]
    assert small_graph.get_facts([]) == []
    assert small_graph.get_events(["f1"]) == []  # a fact is no event


def test_fact_fields_round_trip(store: MemoryStore) -> None:
    fact = FactRecord(
        id="p1", key="deploy", value="make release", kind="procedural", scope="workspace",
        confidence=0.8, status="pending", tier="long", created_at=1.5, updated_at=2.5,
        valid_from=1.0, valid_to=None, expires_at=9.0, access_count=3, last_accessed=2.0,
        user_id="u", agent_id="a", workspace_id="w", trigger="on release",
        steps=["test", "tag", "push"], success_rate=0.5, usage_count=2, evidence_count=4,
        anchor="r:1:0", source="consolidation", conflicts_with="f9",
    )  # fmt: skip
    store.upsert_facts([fact])
    assert store.get_facts(["p1"]) == [fact]
    fact.value, fact.steps = "make ship", []
    store.upsert_facts([fact])  # every column replaced
    assert store.get_facts(["p1"])[0].value == "make ship"
    assert store.get_facts(["p1"])[0].steps == []
    assert store.fact_ids(5) == ["p1"]


def test_expand_window_and_recent(store: MemoryStore) -> None:
    events = [event(f"e{i}{j}", float(i * 10 + j), it=i, seg=j) for i in range(3) for j in range(2)]
    events.append(event("other", 0.0, run="r2"))
    store.add_events(events)
    around = store.expand(events[2].anchor, window=1)
    assert [e.id for e in around] == ["e01", "e10", "e11"]
    assert [e.id for e in store.expand(events[0].anchor, window=2)] == ["e00", "e01", "e10"]
    assert [e.id for e in store.recent_events(2)] == ["e21", "e20"]
    assert [e.id for e in store.get_events(["e11", "zz", "e00"])] == ["e11", "e00"]
    assert store.get_events(["e11"]) == [events[3]]


def test_touch_counts(small_graph: MemoryStore) -> None:
    small_graph.touch(["e1", "f1", "ghost", "f1"], at=5.0)
    small_graph.touch(["f1"], at=7.0)
    assert small_graph.get_facts(["f1"])[0].access_count == 2
    assert small_graph.get_facts(["f1"])[0].last_accessed == 7.0
    assert event_access(small_graph, "e1") == (1, 5.0)
    assert event_access(small_graph, "e2") == (0, None)


def test_delete_removes_nodes_edges_and_vectors(small_graph: MemoryStore) -> None:
    small_graph.set_embeddings("event", [("e2", unit(1))])
    small_graph.add_supersedes([("f2", "f1")])
    assert small_graph.delete(["e2", "f1", "ghost"]) == 2
    assert small_graph.get_events(["e2"]) == []
    assert small_graph.get_facts(["f1"]) == []
    assert small_graph.vector_search("event", unit(1), 5) == []
    assert next_pairs(small_graph) == {("e1", "e3")}  # chain re-linked around the hole
    assert mention_count(small_graph, "python") == 0
    assert small_graph.keyword_search("e2", 5) == []
    assert small_graph.superseded_by(["f1"]) == {}
    assert small_graph.facts_derived_from(["e1"]) == []
    assert small_graph.counts()["keyword_docs"] == 3  # e1, e3, f2


def test_model_or_dimension_mismatch(open_store: StoreFactory) -> None:
    open_store().close()
    with pytest.raises(StorageError, match=r"'test-model'.*'other'.*shiyi memory reindex"):
        open_store(embedding_model="other")
    with pytest.raises(StorageError, match="dimension 16"):
        open_store(dimension=16)
    store = open_store(dimension=16, embedding_model="other", check_model=False)
    store.add_events([event("e1", 1.0)])
    reset_vectors(store, 16, "other")
    store.set_embeddings("event", [("e1", [1.0] * 16)])
    assert [h.id for h in store.vector_search("event", [1.0] * 16, 1)] == ["e1"]
    store.close()
    open_store(dimension=16, embedding_model="other").close()


def test_bulk_links_stay_idempotent(store: MemoryStore) -> None:
    events = [event(f"b{i}", float(i)) for i in range(kuzu_writes.COPY_EDGES_THRESHOLD + 50)]
    store.add_events(events)
    store.upsert_entities([EntityRecord("kuzu", "technology"), EntityRecord("alice", "person")])
    pairs = [(e.id, "kuzu") for e in events] + [(events[0].id, "alice"), ("nope", "kuzu")]
    store.link_mentions(pairs)
    store.link_mentions(pairs)  # again: no duplicate edges
    assert mention_count(store) == len(events) + 1
    assert next_pairs(store) == {(f"b{i}", f"b{i + 1}") for i in range(len(events) - 1)}


def test_recent_events_follow_writes(store: MemoryStore) -> None:
    store.add_events([event(f"r{i}", float(i)) for i in range(3)])
    assert [e.id for e in store.recent_events(2)] == ["r2", "r1"]
    store.add_events([event("r9", 9.0)])
    assert [e.id for e in store.recent_events(2)] == ["r9", "r2"]
    store.delete(["r9"])
    assert [e.id for e in store.recent_events(2)] == ["r2", "r1"]
    assert [e.id for e in store.recent_events(2, session_id="s1")] == ["r2", "r1"]
    assert store.recent_events(5, session_id="nope") == []


def test_meta_overwrites(store: MemoryStore) -> None:
    assert store.get_meta("missing") is None
    store.set_meta("k", "1")
    store.set_meta("k", "2")
    assert store.get_meta("k") == "2"


def test_names_and_aliases_resolve_through_writes_deletes_and_a_reopen(
    open_store: StoreFactory,
) -> None:
    store = open_store()
    store.add_events([event("t1", 1.0)])
    store.upsert_entities([EntityRecord("melanie", type="person", aliases=["mel"])])
    store.link_mentions([("t1", "melanie")])
    assert store.find_entities([]) == []  # warms the embedded store's name map first
    assert [e.name for e in store.find_entities(["Mel"])] == ["melanie"]
    # An alias added later, and a second entity sharing an alias: both found through it.
    store.upsert_entities([EntityRecord("melanie", type="person", aliases=["melly"])])
    store.upsert_entities([EntityRecord("mel gibson", type="person", aliases=["mel"])])
    assert [e.name for e in store.find_entities(["mel"])] == ["mel gibson", "melanie"]
    assert [e.name for e in store.find_entities(["melly"])] == ["melanie"]
    assert [s.id for s in store.neighbourhood(["melly"], hops=1, limit=5).event_ids] == ["t1"]
    store.delete_entities(["mel gibson"])
    assert [e.name for e in store.find_entities(["mel", "gibson"])] == ["melanie"]
    store.close()
    reopened = open_store()
    assert [e.name for e in reopened.find_entities(["melly", "mel"])] == ["melanie"]
    assert reopened.find_entities(["mel gibson"]) == []


# --- relations have owners (issue 29) ---------------------------------------------------------


def test_relations_are_kept_per_owner_and_walked_only_as_allowed(small_graph: MemoryStore) -> None:
    alice, bob, configured = Viewer("alice"), Viewer("bob"), Viewer()
    small_graph.add_relations([
        RelationRecord("kuzu", "numpy", "rivals", 0.9, user_id="alice", agent_id="shiyi"),
        RelationRecord("kuzu", "numpy", "rivals", 0.2, user_id="bob", agent_id="shiyi"),
        RelationRecord("kuzu", "python", "binding", 0.4, user_id="alice", agent_id="shiyi"),
    ])  # fmt: skip
    assert small_graph.counts()["relations"] == 5  # the same edge twice: one per owner

    def seen(viewer: Viewer) -> set[tuple[str, str, str, float]]:
        around = small_graph.neighbourhood(
            ["kuzu"], hops=2, limit=10, follows=viewer.relations(configured)
        )
        return {(r.src, r.dst, r.user_id, r.weight) for r in around.relations}

    assert seen(bob) == {("kuzu", "numpy", "bob", 0.2)}
    assert seen(alice) == {("kuzu", "numpy", "alice", 0.9), ("kuzu", "python", "alice", 0.4)}
    # The owner-less edges of older stores: the configured identity's only.
    assert seen(configured) == {("kuzu", "python", "", 0.5)}
    walked = small_graph.neighbourhood(
        ["kuzu"], 2, 10, follows=Viewer("carol").relations(configured)
    )
    assert walked.relations == [] and walked.entities == ["kuzu"]


def said(eid: str, text: str) -> EventRecord:
    return EventRecord(id=eid, session_id="s1", run_id="r1", ts=1.0, role="user", content=text,
                       segment_type="user_message", iteration=0)  # fmt: skip


@pytest.mark.parametrize(
    ("query", "found"),
    [
        ("What did Sam do for his birthday?", "bday"),
        ("Did Lea send a picture of her boyfriend?", "pic"),
    ],
)
def test_keyword_search_meets_the_short_forms_people_type(
    store: MemoryStore, query: str, found: str
) -> None:
    store.add_events([
        said("bday", "best bday dinner ever, thx for coming"),
        said("pic", "sending u a pic of my bf rn"),
        said("other", "We walked the dog along the river."),
    ])  # fmt: skip
    ids = [hit.id for hit in store.keyword_search(query, 5)]
    assert ids[:1] == [found]
    assert "other" not in ids


@pytest.mark.parametrize(
    ("query", "found"),
    [
        ("What did Lea buy at the flea market?", "bought"),
        ("Where did Sam go after the concert?", "went"),
        ("Who did Sam meet after the concert?", "met"),
    ],
)
def test_keyword_search_meets_an_irregular_past_through_its_base_form(
    store: MemoryStore, query: str, found: str
) -> None:
    # questions ask with "did" and the base form, people tell it in the past
    store.add_events([
        said("bought", "I bought an old brass lamp at the flea market"),
        said("went", "after the concert we went for noodles"),
        said("met", "I met Jo backstage after the concert"),
        said("other", "The market was crowded; Lea's concert tickets are for Friday."),
    ])  # fmt: skip
    ids = [hit.id for hit in store.keyword_search(query, 5)]
    assert ids[:1] == [found]


@pytest.mark.parametrize(
    ("query", "found"),
    [
        ("What is my favorite color?", "british"),  # American words find the British turn
        ("my favourite colour", "american"),  # and the other way round
        ("the theatre programme", "american"),
    ],
)
def test_keyword_search_matches_british_and_american_spellings(
    store: MemoryStore, query: str, found: str
) -> None:
    store.add_events([
        said("british", "My favourite colour is teal, and I organised a theatre night."),
        said("american", "Her favorite color is red; the theater program starts at eight."),
        said("other", "We walked the dog along the river."),
    ])  # fmt: skip
    assert found in [hit.id for hit in store.keyword_search(query, 5)]
    assert "other" not in [hit.id for hit in store.keyword_search(query, 5)]


@pytest.mark.parametrize(
    ("query", "stretched", "twin"),
    [
        (
            "Who loves hiking on weekends?",
            "i loooove hiking on weekends",
            "i dread hiking on weekends",
        ),
        ("Was the concert good?", "the concert was sooo goooood", "the concert was sooo loud"),
        (
            "Is Mia excited about the trip?",
            "im sooo excitedddd for the trip",
            "im so sad for the trip",
        ),
    ],
)
def test_keyword_search_meets_a_word_stretched_as_people_chat(
    store: MemoryStore, query: str, stretched: str, twin: str
) -> None:
    # the twin says the same but for the word asked about: only that word puts the stretched first
    store.add_events([said("twin", twin), said("stretched", stretched)])
    assert [hit.id for hit in store.keyword_search(query, 5)][:1] == ["stretched"]


def test_keyword_search_reads_a_typing_slip_as_the_word_held(store: MemoryStore) -> None:
    said = ["We had dinner at a lovely Italian restaurant", "I went biking by the river"]
    events = [event(f"e{i}", float(i)) for i in range(len(said))]
    store.add_events([replace(e, content=text) for e, text in zip(events, said, strict=True)])
    assert [h.id for h in store.keyword_search("that resturant", 5)] == ["e0"]
    assert store.keyword_search("hiking", 5) == []  # English knows it: no slip
