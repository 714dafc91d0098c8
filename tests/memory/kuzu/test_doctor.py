"""`shiyi doctor`'s checks on a real embedded store: each copy made to disagree on purpose,
found, repaired, and found agreeing afterwards."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from shiyi.memory.kuzu.doctor import DoctorOptions, DoctorReport, examine
from shiyi.memory.kuzu.jobs import SqliteJobQueue
from shiyi.memory.kuzu.store import EmbeddedStore
from shiyi.memory.models import EntityRecord, EventRecord, FactRecord, RelationRecord

DIM = 8
CHECK = DoctorOptions(dimension=DIM, embedding_model="m")
REPAIR = DoctorOptions(dimension=DIM, embedding_model="m", repair=True)
REBUILD = DoctorOptions(dimension=DIM, embedding_model="m", rebuild_graph=True)
REBUILD_SQLITE = DoctorOptions(dimension=DIM, embedding_model="m", rebuild_sqlite=True)


def unit(i: int) -> list[float]:
    return [1.0 if k == i % DIM else 0.0 for k in range(DIM)]


def events(n: int) -> list[EventRecord]:
    return [
        EventRecord(f"e{i}", "s", "r", 100.0 + i, "user", f"turn {i} about ops", "user_message", i)
        for i in range(n)
    ]


@pytest.fixture
def directory(tmp_path: Path) -> Path:
    """A store with 4 embedded turns linked to an entity, and one fact."""
    store = EmbeddedStore(tmp_path, dimension=DIM, embedding_model="m")
    try:
        store.add_events(events(4))
        store.set_embeddings("event", [(f"e{i}", unit(i)) for i in range(4)])
        store.upsert_entities([EntityRecord("ops")])
        store.link_mentions([(f"e{i}", "ops") for i in range(4)])
        fact = FactRecord(id="f1", key="deploy", value="uses vault", kind="convention")
        store.upsert_facts([fact])
        store.set_embeddings("fact", [("f1", unit(0))])
    finally:
        store.close()
    return tmp_path


def damage(directory: Path, action: Callable[[EmbeddedStore], object]) -> None:
    store = EmbeddedStore(directory, dimension=DIM, embedding_model="m")
    try:
        action(store)
    finally:
        store.close()


def problems(report: DoctorReport) -> list[str]:
    return [f"{f.where}: {f.problem}" for f in report.remaining]


def test_a_healthy_store_agrees_with_itself(directory: Path) -> None:
    report = examine(directory, CHECK)
    assert report.findings == []
    counts = dict(report.counts)
    assert counts["graph.kuzu"].startswith("events 4  facts 1  entities 1")
    assert counts["  keyword index"] == "events 4  facts 1"
    assert counts["  vectors"] == "events 4/4  facts 1/1  entities 0/1"


def test_a_short_keyword_index_is_found_and_rebuilt(directory: Path) -> None:
    damage(directory, lambda s: s.keywords.delete(["e1", "e2", "f1"]))
    assert problems(examine(directory, CHECK)) == [
        "keyword index: 2 turns and 1 facts are missing from it"
    ]
    repaired = examine(directory, REPAIR)
    assert [f.fixed for f in repaired.findings] == ["indexed 2 turns and 1 facts again"]
    assert examine(directory, CHECK).findings == []
    store = EmbeddedStore(directory, dimension=DIM, embedding_model="m")
    try:
        assert {hit.id for hit in store.keyword_search("turn 2 vault", 10)} >= {"e2", "f1"}
    finally:
        store.close()


def test_stale_keyword_documents_are_removed(directory: Path) -> None:
    damage(directory, lambda s: s.keywords.add([("gone", "event", "a turn that left")]))
    assert problems(examine(directory, CHECK)) == [
        "keyword index: 1 documents name turns or facts that no longer exist"
    ]
    examine(directory, REPAIR)
    assert examine(directory, CHECK).findings == []


def test_turns_lost_by_either_copy_are_copied_back(directory: Path) -> None:
    damage(directory, lambda s: s.event_rows.delete(["e0"]))
    damage(directory, lambda s: s.graph.delete(["e3"]))
    assert problems(examine(directory, CHECK)) == [
        "event mirror: 1 turns of the graph are missing from the mirror",
        "graph.kuzu: 1 turns the mirror holds are missing from the graph",
    ]
    examine(directory, REPAIR)
    report = examine(directory, CHECK)
    # e3 is back in the graph without its vector, and the worker was asked for it.
    assert report.findings == []
    jobs = SqliteJobQueue(directory / "memory.sqlite3")
    try:
        assert jobs.pending_count(["ingest", "embed"]) >= 1
    finally:
        jobs.close()


def test_vectors_nobody_will_compute_are_queued(directory: Path) -> None:
    damage(directory, lambda s: s.add_events(events(6)[4:]))  # no job was queued for them
    assert problems(examine(directory, CHECK)) == [
        "vectors: 2 turns have no vector and no job will embed them"
    ]
    examine(directory, REPAIR)
    jobs = SqliteJobQueue(directory / "memory.sqlite3")
    try:
        claimed = jobs.claim(["embed"], limit=10)
        assert sorted(i for job in claimed for i in job.payload["ids"]) == ["e4", "e5"]
    finally:
        jobs.close()


def test_failed_jobs_are_queued_again(directory: Path) -> None:
    jobs = SqliteJobQueue(directory / "memory.sqlite3")
    jobs.enqueue("extract", {"ids": ["e0"]}, max_attempts=1)
    job = jobs.claim(["extract"])[0]
    jobs.fail(job, "model was down", retry_in=0)
    jobs.close()
    assert problems(examine(directory, CHECK)) == ["jobs: 1 jobs failed (see `shiyi memory jobs`)"]
    examine(directory, REPAIR)
    assert examine(directory, CHECK).findings == []


def test_an_empty_graph_is_reported_then_rebuilt_from_the_mirror(directory: Path) -> None:
    graph = directory / "graph.kuzu"
    graph.write_bytes(b"")
    report = examine(directory, REPAIR)  # --repair alone never touches the graph
    assert [f.where for f in report.remaining] == ["graph.kuzu"]
    assert "is empty (0 bytes)" in report.remaining[0].problem
    assert graph.stat().st_size == 0
    rebuilt = examine(directory, REBUILD)
    fixed = {f.where: f.fixed for f in rebuilt.findings}
    assert "rebuilt 4 turns, 4 entity links, 1 facts and 0 relations" in fixed["graph.kuzu"]
    moved = list(directory.glob("graph.kuzu.damaged-*"))
    assert len(moved) == 1 and moved[0].stat().st_size == 0  # kept, not deleted
    store = EmbeddedStore(directory, dimension=DIM, embedding_model="m")
    try:
        assert [e.id for e in store.recent_events(10)] == ["e3", "e2", "e1", "e0"]
        assert len(store.graph.neighbourhood(["ops"], 1, 10).event_ids) == 4  # links are back
        [fact] = store.get_facts(["f1"])
        assert (fact.key, fact.value, fact.kind) == ("deploy", "uses vault", "convention")
    finally:
        store.close()
    # Vectors were only in the graph: the rebuild asked the worker for them again.
    assert (
        fixed["vectors"]
        == "queued 4 turns and 1 facts for embedding (the next shiyi process does it)"
    )
    jobs = SqliteJobQueue(directory / "memory.sqlite3")
    try:
        queued = {
            (j.payload["node"], i) for j in jobs.claim(["embed"], 10) for i in j.payload["ids"]
        }
        assert queued == {
            ("event", "e0"),
            ("event", "e1"),
            ("event", "e2"),
            ("event", "e3"),
            ("fact", "f1"),
        }
    finally:
        jobs.close()


def test_a_rebuilt_graph_believes_what_the_damaged_one_believed(directory: Path) -> None:
    def believe(store: EmbeddedStore) -> None:
        store.add_events(events(6)[4:])
        store.upsert_entities([EntityRecord("ana", "person", "Ana", ["annie"])])
        store.upsert_entities([EntityRecord("ana", "concept", "", ["ana b"])])  # merged
        store.upsert_entities([EntityRecord("lisbon", "place", "Lisbon")])
        store.add_relations([RelationRecord("ana", "lisbon", "lives_in", 0.9, 10.0, None, "u")])
        old = FactRecord(
            id="f2", key="city", value="Porto", status="superseded", user_id="u",
            entities=["ana"], source_events=["e4"],
        )  # fmt: skip
        new = FactRecord(
            id="f3", key="city", value="Lisbon", user_id="u", evidence_count=2,
            entities=["ana", "lisbon"], source_events=["e5"], said_in=["e5"],
        )  # fmt: skip
        store.upsert_facts([old, new])
        store.add_supersedes([("f3", "f2")])
        gone = FactRecord(id="f4", key="pet", value="a cat", user_id="u", entities=["ana"])
        store.upsert_facts([gone])
        store.delete(["f4"])  # forgotten: must not come back

    damage(directory, believe)
    before = _beliefs(directory)
    (directory / "graph.kuzu").write_bytes(b"")
    rebuilt = examine(directory, REBUILD)
    assert "3 facts and 1 relations" in {f.where: f.fixed for f in rebuilt.findings}["graph.kuzu"]
    after = _beliefs(directory)
    assert after == before
    assert after[0]["f3"].status == "active" and after[0]["f2"].status == "superseded"
    assert sorted(after[0]["f3"].entities) == ["ana", "lisbon"]
    assert after[0]["f3"].source_events == ["e5"] and after[0]["f3"].evidence_count == 2
    assert "f4" not in after[0]
    assert after[1] == {"f2": "f3"}
    assert after[2] == ("person", "Ana", ["annie", "ana b"])
    assert after[3] == [("ana", "lisbon", "lives_in", 0.9, 10.0)]


def _beliefs(directory: Path) -> tuple[dict[str, FactRecord], dict[str, str], object, object]:
    """What the store believes: facts, which replaced which, Ana, and her relations."""
    store = EmbeddedStore(directory, dimension=DIM, embedding_model="m")
    try:
        ids = store.fact_ids(100)
        facts = {f.id: f for f in store.get_facts(ids)}
        for fact in facts.values():
            fact.entities.sort()
        [ana] = store.find_entities(["ana"])
        hood = store.neighbourhood(["ana"], 1, 10)
        relations = [(r.src, r.dst, r.type, r.weight, r.valid_from) for r in hood.relations]
        return facts, store.superseded_by(ids), (ana.type, ana.display, ana.aliases), relations
    finally:
        store.close()


def test_a_fact_the_copy_lacks_is_found_and_copied(directory: Path) -> None:
    damage(directory, lambda s: s.fact_rows.delete(["f1"]))
    assert problems(examine(directory, CHECK)) == [
        "fact copy: 1 facts of the graph are missing from memory.sqlite3's copy"
    ]
    examine(directory, REPAIR)
    assert examine(directory, CHECK).findings == []
    (directory / "graph.kuzu").write_bytes(b"")
    examine(directory, REBUILD)
    store = EmbeddedStore(directory, dimension=DIM, embedding_model="m")
    try:
        assert [f.value for f in store.get_facts(["f1"])] == ["uses vault"]
    finally:
        store.close()


def test_a_store_from_before_the_copy_is_copied_at_open(directory: Path) -> None:
    with sqlite3.connect(directory / "memory.sqlite3") as conn:
        for table in ("fact_rows", "fact_supersedes", "fact_rows_meta", "entity_rows",
                      "relation_rows", "entity_rows_meta"):  # fmt: skip
            conn.execute(f"DROP TABLE {table}")
    conn.close()
    damage(directory, lambda s: None)  # an open copies what the graph holds
    (directory / "graph.kuzu").write_bytes(b"")
    examine(directory, REBUILD)
    store = EmbeddedStore(directory, dimension=DIM, embedding_model="m")
    try:
        assert [f.value for f in store.get_facts(["f1"])] == ["uses vault"]
        assert [e.name for e in store.find_entities(["ops"])] == ["ops"]
    finally:
        store.close()


def test_a_damaged_sqlite_file_is_reported_then_rebuilt_from_the_graph(directory: Path) -> None:
    path = directory / "memory.sqlite3"
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    data = bytearray(path.read_bytes())
    data[4096 : 4096 * 3] = b"\xee" * (4096 * 2)  # pages of its tables, not the header
    path.write_bytes(bytes(data))
    report = examine(directory, REPAIR)  # --repair alone never moves it
    assert [f.where for f in report.remaining] == ["memory.sqlite3"]
    message = report.remaining[0].problem
    assert "do not delete it" in message and "shiyi doctor --rebuild-sqlite" in message
    assert ".recover" in message
    rebuilt = examine(directory, REBUILD_SQLITE)
    assert not rebuilt.remaining
    moved = [p for p in directory.glob("memory.sqlite3.damaged-*") if p.name[-4:] != "-shm"]
    assert [p.read_bytes() for p in moved if p.name[-4:] != "-wal"] == [bytes(data)]
    assert examine(directory, CHECK).findings == []
    store = EmbeddedStore(directory, dimension=DIM, embedding_model="m")
    try:
        assert {hit.id for hit in store.keyword_search("turn 2 vault", 10)} >= {"e2", "f1"}
        assert store.mention_rows.degree(["ops"]) == {"ops": 4}
    finally:
        store.close()


def test_an_unreadable_graph_is_moved_aside_byte_for_byte(directory: Path) -> None:
    graph = directory / "graph.kuzu"
    garbage = b"\x07 not kuzu " * 900
    graph.write_bytes(garbage)
    report = examine(directory, CHECK)
    assert "cannot be opened" in problems(report)[0]
    assert graph.read_bytes() == garbage
    rebuilt = examine(directory, REBUILD)
    assert not rebuilt.remaining
    assert [p.read_bytes() for p in directory.glob("graph.kuzu.damaged-*")] == [garbage]


def test_with_both_files_damaged_nothing_is_moved(directory: Path) -> None:
    (directory / "graph.kuzu").write_bytes(b"")
    sqlite = directory / "memory.sqlite3"
    for side in directory.glob("memory.sqlite3-*"):
        side.unlink()
    sqlite.write_bytes(b"\x02 broken " * 500)
    report = examine(directory, REBUILD_SQLITE)
    assert "neither can be rebuilt" in problems(report)[0]
    assert sqlite.read_bytes() == b"\x02 broken " * 500
    assert (directory / "graph.kuzu").stat().st_size == 0
    assert not list(directory.glob("*.damaged-*"))
