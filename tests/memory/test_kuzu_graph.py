"""KuzuGraph on real Kuzu files under tmp_path.

Measured facts about kuzu 0.11.3 that shaped the implementation are pinned by tests here:
an indexed vector column cannot be SET (hence the side tables); search itself is exact (numpy),
and a second process opening the same database file fails immediately with
``IO exception: Could not set lock on file`` whether it asks for read-write or read-only.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import kuzu
import pytest

from shiyi.errors import StorageError
from shiyi.memory import kuzu_graph
from shiyi.memory import kuzu_schema as schema
from shiyi.memory.kuzu_graph import KuzuGraph
from shiyi.memory.models import EntityRecord, EventRecord, FactRecord, RelationRecord

DIM = 8


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


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "store" / "graph.kuzu"


@pytest.fixture
def graph(db_path: Path) -> Iterator[KuzuGraph]:
    g = KuzuGraph(db_path, dimension=DIM, embedding_model="test-model")
    yield g
    g.close()


def next_pairs(g: KuzuGraph) -> set[tuple[str, str]]:
    rows = g._read("MATCH (a:Event)-[:NEXT]->(b:Event) RETURN a.id, b.id")
    return {(r[0], r[1]) for r in rows}


def test_restart_keeps_data(db_path: Path) -> None:
    g = KuzuGraph(db_path, dimension=DIM, embedding_model="test-model")
    g.add_events([event("e1", 1.0)])
    g.set_embeddings("event", [("e1", unit(0))])
    g.set_meta("k", "v")
    g.close()
    g = KuzuGraph(db_path, dimension=DIM, embedding_model="test-model")
    try:
        assert [e.id for e in g.get_events(["e1"])] == ["e1"]
        assert g.get_meta("k") == "v"
        assert g.vector_search("event", unit(0), 1)[0].id == "e1"
        assert g.get_meta(schema.META_VERSION) == str(schema.LATEST_VERSION)
    finally:
        g.close()


@pytest.mark.parametrize("copy_threshold", [1, 1000], ids=["copy", "unwind"])
def test_add_events_idempotent_with_chain(
    graph: KuzuGraph, monkeypatch: pytest.MonkeyPatch, copy_threshold: int
) -> None:
    monkeypatch.setattr(kuzu_graph, "COPY_THRESHOLD", copy_threshold)
    batch = [
        event("c", 3.0),
        event("a", 1.0),
        event("b", 1.0, seg=1),
        event("x", 0.5, session="s2"),
    ]
    assert graph.add_events(batch) == 4
    assert graph.add_events(batch) == 0
    assert next_pairs(graph) == {("a", "b"), ("b", "c")}
    # A late event landing mid-session is spliced into the chain.
    assert graph.add_events([event("a2", 2.0), event("a", 1.0)]) == 1
    assert next_pairs(graph) == {("a", "b"), ("b", "a2"), ("a2", "c")}
    rows = graph._read("MATCH (e:Event)-[:IN_SESSION]->(s:Session) RETURN e.id, s.id")
    assert sorted(map(tuple, rows)) == [
        ("a", "s1"), ("a2", "s1"), ("b", "s1"), ("c", "s1"), ("x", "s2")
    ]  # fmt: skip
    assert graph.counts()["sessions"] == 2


def test_vector_search_nearest_and_newly_embedded(graph: KuzuGraph) -> None:
    graph.add_events([event(f"e{i}", float(i)) for i in range(4)])
    graph.set_embeddings("event", [("e0", unit(0)), ("e1", unit(1))])
    hits = graph.vector_search("event", [0.9, 0.1, 0, 0, 0, 0, 0, 0], 2)
    assert [h.id for h in hits] == ["e0", "e1"]
    assert hits[0].score == pytest.approx(0.9 / (0.82**0.5), rel=1e-4)
    # Embedded after the index exists, and re-embedded: both visible at once.
    graph.set_embeddings("event", [("e2", unit(2)), ("e0", unit(3))])
    assert graph.vector_search("event", unit(2), 1)[0].id == "e2"
    assert graph.vector_search("event", unit(3), 1)[0].id == "e0"
    assert {h.id for h in graph.vector_search("event", unit(0), 10)} == {"e0", "e1", "e2"}
    assert [e.id for e in graph.events_missing_embeddings(10)] == ["e3"]
    assert graph.counts()["embedded_events"] == 3


def test_vector_search_is_exact_and_reloads_from_disk(db_path: Path) -> None:
    g = KuzuGraph(db_path, dimension=DIM, embedding_model="test-model")
    g.add_events([event(f"e{i}", float(i)) for i in range(6)])
    g.set_embeddings("event", [(f"e{i}", unit(i)) for i in range(6)])
    assert g.vector_search("event", unit(2), 1)[0].id == "e2"  # the matrix is now loaded
    g.set_embeddings("event", [("e2", unit(4))])  # re-embedded after loading
    g.delete(["e4"])
    assert [h.id for h in g.vector_search("event", unit(4), 1)] == ["e2"]
    g.close()
    reopened = KuzuGraph(db_path, dimension=DIM, embedding_model="test-model")
    assert [h.id for h in reopened.vector_search("event", unit(4), 1)] == ["e2"]
    assert {h.id for h in reopened.vector_search("event", unit(0), 10)} == {
        "e0",
        "e1",
        "e2",
        "e3",
        "e5",
    }
    reopened.close()


def test_vectors_for_facts_and_entities(graph: KuzuGraph) -> None:
    graph.upsert_entities([EntityRecord("kuzu"), EntityRecord("python")])
    graph.upsert_facts([FactRecord(id="f1", key="db", value="kuzu")])
    graph.set_embeddings("entity", [("kuzu", unit(4)), ("python", unit(5)), ("ghost", unit(6))])
    graph.set_embeddings("fact", [("f1", unit(6))])
    assert graph.vector_search("entity", unit(5), 1)[0].id == "python"
    assert [h.id for h in graph.vector_search("fact", unit(6), 5)] == ["f1"]
    with pytest.raises(StorageError, match="dimension"):
        graph.set_embeddings("fact", [("f1", [1.0, 2.0])])


def test_indexed_column_cannot_be_set_raw_kuzu(tmp_path: Path) -> None:
    """Why vectors live in side tables: pins kuzu 0.11.3 behaviour."""
    db = kuzu.Database(str(tmp_path / "raw.kuzu"))
    conn = kuzu.Connection(db)
    conn.execute("CREATE NODE TABLE V(id STRING PRIMARY KEY, embedding FLOAT[2])")
    conn.execute("CREATE (:V {id: 'a', embedding: [1.0, 0.0]})")
    conn.execute("CALL CREATE_VECTOR_INDEX('V', 'v_idx', 'embedding', metric := 'cosine')")
    with pytest.raises(RuntimeError, match="used in one or more indexes"):
        conn.execute("MATCH (v:V {id: 'a'}) SET v.embedding = [0.0, 1.0]")
    conn.close()
    db.close()


@pytest.fixture
def small_graph(graph: KuzuGraph) -> KuzuGraph:
    """kuzu -RELATED_TO-> python -RELATED_TO-> numpy; e1 mentions kuzu, e2 python, e3 numpy."""
    graph.add_events([event("e1", 1.0), event("e2", 2.0), event("e3", 3.0)])
    graph.upsert_entities([EntityRecord("kuzu", aliases=["kuzudb"]), EntityRecord("python"),
                           EntityRecord("numpy")])  # fmt: skip
    graph.link_mentions([("e1", "kuzu"), ("e1", "kuzu"), ("e2", "python"), ("e3", "numpy"),
                         ("missing", "kuzu"), ("e1", "missing")])  # fmt: skip
    graph.add_relations([RelationRecord("kuzu", "python", "binding", 0.5),
                         RelationRecord("python", "numpy", "uses")])  # fmt: skip
    graph.upsert_facts([
        FactRecord(id="f1", key="db", value="kuzu", entities=["kuzu"], source_events=["e1"]),
        FactRecord(id="f2", key="lang", value="python", entities=["python"]),
    ])  # fmt: skip
    return graph


def test_neighbourhood_one_hop(small_graph: KuzuGraph) -> None:
    n = small_graph.neighbourhood(["KuzuDB"], hops=1, limit=10)
    assert n.entities == ["kuzu"]
    assert [s.id for s in n.event_ids] == ["e1"]
    assert [s.id for s in n.fact_ids] == ["f1"]
    assert [(r.src, r.dst, r.type) for r in n.relations] == [("kuzu", "python", "binding")]
    assert small_graph.counts()["relations"] == 2


def test_neighbourhood_two_hops_scores_direct_higher(small_graph: KuzuGraph) -> None:
    n = small_graph.neighbourhood(["kuzu"], hops=2, limit=10)
    assert set(n.entities) == {"kuzu", "python"}
    assert [s.id for s in n.event_ids] == ["e1", "e2"]
    assert n.event_ids[0].score > n.event_ids[1].score
    assert [s.id for s in n.fact_ids] == ["f1", "f2"]
    assert small_graph.neighbourhood(["nobody"], hops=2, limit=10).event_ids == []


def test_relation_weight_updated_and_aliases_merged(small_graph: KuzuGraph) -> None:
    small_graph.add_relations([RelationRecord("kuzu", "python", "binding", 0.9)])
    rel = small_graph.neighbourhood(["kuzu"], hops=1, limit=5).relations
    assert [(r.type, r.weight) for r in rel] == [("binding", 0.9)]
    small_graph.upsert_entities([EntityRecord("kuzu", type="technology", aliases=["kùzu"])])
    (entity,) = small_graph.find_entities(["kùzu"])
    assert entity.aliases == ["kuzudb", "kùzu"]
    assert entity.type == "technology"


def test_get_facts_with_links(small_graph: KuzuGraph) -> None:
    facts = small_graph.get_facts(["f2", "nope", "f1"])
    assert [f.id for f in facts] == ["f2", "f1"]
    assert facts[1].entities == ["kuzu"]
    assert facts[1].source_events == ["e1"]


def test_expand_window_and_recent(graph: KuzuGraph) -> None:
    events = [event(f"e{i}{j}", float(i * 10 + j), it=i, seg=j) for i in range(3) for j in range(2)]
    events.append(event("other", 0.0, run="r2"))
    graph.add_events(events)
    around = graph.expand(events[2].anchor, window=1)
    assert [e.id for e in around] == ["e01", "e10", "e11"]
    assert [e.id for e in graph.expand(events[0].anchor, window=2)] == ["e00", "e01", "e10"]
    assert [e.id for e in graph.recent_events(2)] == ["e21", "e20"]
    assert [e.id for e in graph.get_events(["e11", "zz", "e00"])] == ["e11", "e00"]


def test_touch_counts(small_graph: KuzuGraph) -> None:
    small_graph.touch(["e1", "f1", "ghost"], at=5.0)
    small_graph.touch(["f1"], at=7.0)
    assert small_graph.get_facts(["f1"])[0].access_count == 2
    assert small_graph.get_facts(["f1"])[0].last_accessed == 7.0
    rows = small_graph._read("MATCH (e:Event {id: 'e1'}) RETURN e.access_count, e.last_accessed")
    assert rows == [[1, 5.0]]


def test_delete_removes_nodes_edges_and_vectors(small_graph: KuzuGraph) -> None:
    small_graph.set_embeddings("event", [("e2", unit(1))])
    assert small_graph.delete(["e2", "f1", "ghost"]) == 2
    assert small_graph.get_events(["e2"]) == []
    assert small_graph.get_facts(["f1"]) == []
    assert small_graph.vector_search("event", unit(1), 5) == []
    assert next_pairs(small_graph) == {("e1", "e3")}  # chain re-linked around the hole
    assert small_graph._read("MATCH ()-[r:MENTIONS]->(:Entity {name: 'python'}) RETURN count(r)") \
        == [[0]]  # fmt: skip


def test_model_or_dimension_mismatch(db_path: Path) -> None:
    KuzuGraph(db_path, dimension=DIM, embedding_model="test-model").close()
    with pytest.raises(StorageError, match=r"'test-model'.*'other'.*shiyi memory reindex"):
        KuzuGraph(db_path, dimension=DIM, embedding_model="other")
    with pytest.raises(StorageError, match="dimension 16"):
        KuzuGraph(db_path, dimension=16, embedding_model="test-model")
    g = KuzuGraph(db_path, dimension=16, embedding_model="other", check_model=False)
    g.reset_vectors(16, "other")
    g.close()
    KuzuGraph(db_path, dimension=16, embedding_model="other").close()


def test_newer_schema_version(db_path: Path) -> None:
    g = KuzuGraph(db_path, dimension=DIM, embedding_model="test-model")
    g.set_meta(schema.META_VERSION, str(schema.LATEST_VERSION + 1))
    g.close()
    with pytest.raises(StorageError, match="newer than this shiyi"):
        KuzuGraph(db_path, dimension=DIM, embedding_model="test-model")


def test_corrupt_store(tmp_path: Path) -> None:
    bad = tmp_path / "graph.kuzu"
    bad.write_bytes(b"not a kuzu database at all" * 100)
    with pytest.raises(StorageError, match=r"cannot be opened.*corrupt"):
        KuzuGraph(bad, dimension=DIM)
    (tmp_path / "dir.kuzu").mkdir()
    with pytest.raises(StorageError, match="is a directory"):
        KuzuGraph(tmp_path / "dir.kuzu", dimension=DIM)


SECOND_OPEN = """
import sys, kuzu
try:
    kuzu.Database(sys.argv[1], read_only=sys.argv[2] == "ro")
except RuntimeError as exc:
    print("ERR", exc)
else:
    print("OPENED")
"""


@pytest.mark.parametrize("mode", ["rw", "ro"])
def test_second_process_raw_kuzu_is_refused(graph: KuzuGraph, db_path: Path, mode: str) -> None:
    out = subprocess.run(
        [sys.executable, "-c", SECOND_OPEN, str(db_path), mode],
        capture_output=True, text=True, timeout=60, check=True,
    ).stdout  # fmt: skip
    assert "Could not set lock on file" in out


def test_second_process_gets_clear_error(graph: KuzuGraph, db_path: Path) -> None:
    code = (
        "import sys; from pathlib import Path; from shiyi.memory.kuzu_graph import KuzuGraph\n"
        "from shiyi.errors import StorageError\n"
        "try: KuzuGraph(Path(sys.argv[1]), dimension=8, embedding_model='test-model')\n"
        "except StorageError as e: print('STORAGE', e)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(db_path)], capture_output=True, text=True, timeout=60
    )
    assert "STORAGE" in done.stdout and "another process" in done.stdout
    assert "Traceback" not in done.stderr


def test_bulk_links_take_the_copy_path_and_stay_idempotent(graph: KuzuGraph) -> None:
    events = [event(f"b{i}", float(i)) for i in range(kuzu_graph.COPY_EDGES_THRESHOLD + 50)]
    graph.add_events(events)
    graph.upsert_entities([EntityRecord("kuzu", "technology"), EntityRecord("alice", "person")])
    pairs = [(e.id, "kuzu") for e in events] + [(events[0].id, "alice"), ("nope", "kuzu")]
    graph.link_mentions(pairs)
    graph.link_mentions(pairs)  # again: no duplicate edges
    rows = graph._read("MATCH (:Event)-[m:MENTIONS]->(:Entity) RETURN count(m)")
    assert rows[0][0] == len(events) + 1
    assert next_pairs(graph) == {(f"b{i}", f"b{i + 1}") for i in range(len(events) - 1)}


def test_recent_events_cache_follows_writes(graph: KuzuGraph) -> None:
    graph.add_events([event(f"r{i}", float(i)) for i in range(3)])
    assert [e.id for e in graph.recent_events(2)] == ["r2", "r1"]
    graph.add_events([event("r9", 9.0)])
    assert [e.id for e in graph.recent_events(2)] == ["r9", "r2"]
    graph.delete(["r9"])
    assert [e.id for e in graph.recent_events(2)] == ["r2", "r1"]
    assert [e.id for e in graph.recent_events(2, session_id="s1")] == ["r2", "r1"]
