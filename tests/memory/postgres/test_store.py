"""What only the PostgreSQL store has: versioned migrations, connection errors, selection by
URL, VACUUM as compaction and the HNSW path for large tables (a real server)."""

from __future__ import annotations

import random
from pathlib import Path

import psycopg
import pytest

from shiyi.config import load_settings
from shiyi.errors import ConfigError, StorageError
from shiyi.memory.models import EventRecord, FactRecord, said_time
from shiyi.memory.postgres import reads, schema
from shiyi.memory.postgres.store import PostgresStore
from shiyi.memory.scopes import Viewer
from shiyi.memory.service import Memory


def events(count: int) -> list[EventRecord]:
    return [EventRecord(f"e{i}", "s", "r", float(i), "user", f"note {i}", "imported", i)
            for i in range(count)]  # fmt: skip


def test_migrations_are_recorded_once_and_newer_schemas_refused(postgres_url: str) -> None:
    PostgresStore(postgres_url, dimension=4, embedding_model="m").close()
    PostgresStore(postgres_url, dimension=4, embedding_model="m").close()  # nothing to do
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        rows = conn.execute("SELECT version, description FROM schema_migrations").fetchall()
        assert rows == [
            (1, "initial schema"),
            (2, "relation owners"),
            (3, "derived events"),
            (4, "statement time"),
            (5, "echoes unembedded"),
            (6, "owner searches"),
            (7, "keyword owner index"),
            (8, "workspace facts index"),
        ]
        conn.execute(
            "INSERT INTO schema_migrations (version, description) VALUES (%s, 'future')",
            (schema.LATEST_VERSION + 1,),
        )
    with pytest.raises(StorageError, match="newer than this shiyi understands"):
        PostgresStore(postgres_url, dimension=4, embedding_model="m")


def test_a_version_2_database_gets_statement_times(postgres_url: str) -> None:
    """Facts stored before statement times open with none (dated by valid_from)."""
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        conn.execute(
            "CREATE TABLE schema_migrations (version integer PRIMARY KEY,"
            " description text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())"
        )
        for number, (description, step) in enumerate(schema.MIGRATIONS[:2], start=1):
            step(conn, 4)
            conn.execute("INSERT INTO schema_migrations VALUES (%s, %s)", (number, description))
        schema.write_meta(conn, schema.META_MODEL, "m")
        schema.write_meta(conn, schema.META_DIMENSION, "4")
        conn.execute(
            "INSERT INTO facts (id, key, value, kind, scope, confidence, status, tier,"
            " created_at, valid_from, user_id, agent_id) VALUES ('fact_old', 'city', 'Oslo',"
            " 'semantic', 'user', 0.9, 'active', 'long', 1.0, 2.0, 'default', 'shiyi')"
        )
    store = PostgresStore(postgres_url, dimension=4, embedding_model="m")
    try:
        [old] = store.get_facts(["fact_old"])
        assert (old.value, old.said_at, old.said_in, said_time(old)) == ("Oslo", None, [], 2.0)
    finally:
        store.close()


def test_unreachable_server_and_bad_urls_say_what_to_fix() -> None:
    with pytest.raises(StorageError) as caught:
        PostgresStore("postgresql://shiyi:secret@127.0.0.1:9/memory", connect_timeout=2)
    message = str(caught.value)
    assert "cannot connect to the memory database postgresql://127.0.0.1:9/memory" in message
    assert "check that the server is running" in message
    assert "secret" not in message  # the password never shows
    with pytest.raises(ConfigError, match="postgresql:// URL"):
        PostgresStore("mysql://localhost/memory")
    with pytest.raises(ConfigError, match="bad port"):
        PostgresStore("postgresql://localhost:99999999/memory")


def test_a_missing_database_is_named(postgres_server: str) -> None:
    missing = postgres_server.rsplit("/", 1)[0] + "/no_such_db"
    with pytest.raises(StorageError, match='database "no_such_db" does not exist'):
        PostgresStore(missing)


def test_settings_accept_only_embedded_or_a_postgresql_url(tmp_path: Path) -> None:
    (tmp_path / "shiyi.yaml").write_text("memory:\n  store: sqlite:///memory.db\n")
    with pytest.raises(ConfigError, match="must be 'embedded' or a postgresql://"):
        load_settings(cwd=tmp_path, workspace=tmp_path)


def test_a_postgresql_url_selects_the_postgres_store(tmp_path: Path, postgres_url: str) -> None:
    settings = load_settings(cwd=tmp_path, workspace=tmp_path)
    settings.memory.store = postgres_url
    settings.memory.embedder = "none"
    memory = Memory.open(settings, start_worker=False)
    try:
        assert isinstance(memory.store, PostgresStore)
        assert not (settings.memory_dir / "graph.kuzu").exists()
    finally:
        memory.close()


def test_compact_keeps_the_data(postgres_url: str) -> None:
    store = PostgresStore(postgres_url, dimension=4, embedding_model="m")
    try:
        store.add_events(events(50))
        store.delete([f"e{i}" for i in range(40)])
        store.compact()  # VACUUM FULL: no transaction around it
        assert store.counts()["events"] == 10
        assert [h.id for h in store.keyword_search("note 45", 1)] == ["e45"]
    finally:
        store.close()


def test_large_tables_use_hnsw_with_the_same_answers(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(9)
    store = PostgresStore(postgres_url, dimension=8, embedding_model="m")
    try:
        store.add_events(events(300))
        store.set_embeddings("event", [(f"e{i}", [rng.gauss(0, 1) for _ in range(8)])
                                       for i in range(300)])  # fmt: skip
        queries = [[rng.gauss(0, 1) for _ in range(8)] for _ in range(20)]
        exact = [[h.id for h in store.vector_search("event", q, 10)] for q in queries]
        monkeypatch.setattr(reads, "EXACT_SCAN_ROWS", 0)  # every table counts as large
        store.analyze()
        with store._tx() as conn:
            reads.nearest(conn, "events", "id", "[" + ",".join(["0.5"] * 8) + "]", 10,
                          exact=False)  # fmt: skip
            plan = conn.execute(  # with the settings that search left in the transaction
                "EXPLAIN SELECT id FROM events ORDER BY embedding <=> %s::vector LIMIT 10",
                ("[" + ",".join(["0.5"] * 8) + "]",),
            ).fetchall()
        assert any("events_embedding" in str(line) for line in plan), plan
        approximate = [[h.id for h in store.vector_search("event", q, 10)] for q in queries]
        agree = sum(len(set(a) & set(e)) for a, e in zip(approximate, exact, strict=True))
        assert agree / 200 >= 0.95  # ef_search 200 over 300 vectors: (nearly) exact
    finally:
        store.close()


def _cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / (sum(x * x for x in a) ** 0.5 * sum(y * y for y in b) ** 0.5)


@pytest.mark.parametrize(("theirs", "copies"), [(8, 0), (60, 0), (10, 100)])
def test_a_viewer_with_few_vectors_among_many_gets_their_nearest(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch, theirs: int, copies: int
) -> None:
    """The HNSW index's iterative scan gives up after ``hnsw.max_scan_tuples`` rows: were
    it used for a user holding a few vectors among another user's many, they would get
    fewer than asked for.  PostgreSQL plans such a search through the owner index and an
    exact sort instead (a big store in small: 600 rows, a scan cap of 40).  ``copies``:
    another user holds that many copies of each of the viewer's vectors (a shared server
    where everyone talks of the same things), so the index walk meets theirs first."""
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        name = admin.execute("SELECT current_database()").fetchone()[0]  # type: ignore[index]
        admin.execute(f'ALTER DATABASE "{name}" SET hnsw.max_scan_tuples = 40')
    monkeypatch.setattr(reads, "EXACT_SCAN_ROWS", 100)
    rng = random.Random(5)
    total = 600 if not copies else theirs * (copies + 1)
    owner = {f"e{i}": "ana" if i < theirs else "bo" for i in range(total)}
    vectors = {key: [rng.uniform(-1, 1) for _ in range(4)] for key in owner}
    if copies:
        vectors |= {f"e{i}": vectors[f"e{i % theirs}"] for i in range(theirs, total)}
    store = PostgresStore(postgres_url, dimension=4, embedding_model="m")
    try:
        store.add_events(
            [EventRecord(key, "s", "r", float(i), "user", f"n {i}", "imported", i, user_id=who)
             for i, (key, who) in enumerate(owner.items())]
        )  # fmt: skip
        store.set_embeddings("event", list(vectors.items()))
        with store._tx() as conn:
            conn.execute("ANALYZE events")
        query = [1.0, 0.0, 0.0, 0.0]
        nearest = sorted(
            (key for key, who in owner.items() if who == "ana"),
            key=lambda key: -_cosine(vectors[key], query),
        )
        found = store.vector_search("event", query, 8, Viewer("ana").owners())
        assert [s.id for s in found] == nearest[:8]
        many = store.vector_search("event", query, 8, Viewer("bo").owners())
        assert len(many) == 8 and all(owner[s.id] == "bo" for s in many)  # through the index
    finally:
        store.close()


@pytest.mark.parametrize("scope", ["user", "agent"])
def test_a_viewer_with_few_facts_among_many_gets_their_nearest(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch, scope: str
) -> None:
    """As for turns: a user holding a few facts among another user's many (copies of theirs,
    and shared workspace facts) gets their nearest, compared exactly, not the index walk
    that gives up after ``hnsw.max_scan_tuples`` rows."""
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        name = admin.execute("SELECT current_database()").fetchone()[0]  # type: ignore[index]
        admin.execute(f'ALTER DATABASE "{name}" SET hnsw.max_scan_tuples = 40')
    monkeypatch.setattr(reads, "EXACT_SCAN_ROWS", 100)
    rng = random.Random(7)
    mine = {f"f{i}": [rng.uniform(-1, 1) for _ in range(4)] for i in range(10)}
    theirs = {f"g{i}": mine[f"f{i % 10}"] for i in range(3000)}
    shared = {f"w{i}": [rng.uniform(-1, 1) for _ in range(4)] for i in range(5)}
    store = PostgresStore(postgres_url, dimension=4, embedding_model="m")
    try:
        store.upsert_facts(
            [FactRecord(k, k, f"fact {k}", scope=scope, user_id="ana", created_at=1.0)  # type: ignore[arg-type]
             for k in mine]
            + [FactRecord(k, k, f"fact {k}", scope="user", user_id="bo", created_at=1.0)
               for k in theirs]
            + [FactRecord(k, k, f"fact {k}", scope="workspace", user_id="bo", created_at=1.0)
               for k in shared]
        )  # fmt: skip
        store.set_embeddings("fact", list((mine | theirs | shared).items()))
        with store._tx() as conn:
            conn.execute("ANALYZE facts")
        query = [1.0, 0.0, 0.0, 0.0]
        seen = mine | shared
        nearest = sorted(seen, key=lambda key: -_cosine(seen[key], query))
        found = store.vector_search("fact", query, 8, Viewer("ana").owners())
        assert [s.id for s in found] == nearest[:8]
        many = store.vector_search("fact", query, 8, Viewer("bo").owners())
        assert len(many) == 8 and all(s.id[0] in "gw" for s in many)  # through the index
    finally:
        store.close()
