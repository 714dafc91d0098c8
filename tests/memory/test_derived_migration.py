"""Stores written before echoes were marked (issue 30) open with their memory tools' turns
marked derived, on both backends and in the embedded store's SQLite mirror; a reply's quoting
cannot be told afterwards, so older replies stay evidence."""

from __future__ import annotations

from pathlib import Path

import kuzu

from shiyi.index.sqlite_file import SqliteFile
from shiyi.memory.kuzu import schema
from shiyi.memory.kuzu.connection import KuzuGraph
from shiyi.memory.kuzu.event_rows import EventRows
from shiyi.memory.models import EventRecord
from shiyi.memory.protocol import MemoryStore
from shiyi.memory.text.echoes import MEMORY_TOOL
from tests.memory.conftest import StoreFactory
from tests.support.records import turn

OLD_TURNS = [
    ("user_message", "where do I live?"),
    ("tool_call", 'query_memory({"query": "where do I live"})'),
    ("tool_result", "query_memory -> <memory> I live in Berlin </memory>"),
    ("response", "You live in Berlin."),
    ("tool_call", 'read_file({"path": "query_memory.txt"})'),
    ("tool_result", "remember -> Remembered (semantic, user, id fact_1): I live in Berlin"),
]
EXPECTED = ["", MEMORY_TOOL, MEMORY_TOOL, "", "", MEMORY_TOOL]


def old_events() -> list[EventRecord]:
    return [
        turn(i, text, segment_type=kind, role="user" if kind == "user_message" else "assistant")
        for i, (kind, text) in enumerate(OLD_TURNS)
    ]


def test_a_version_3_graph_marks_its_memory_tool_turns(tmp_path: Path) -> None:
    path = tmp_path / "graph.kuzu"
    db = kuzu.Database(str(path))
    conn = kuzu.Connection(db)
    for number, step in enumerate(schema.MIGRATIONS[:3], start=1):
        step(conn, 8)
        schema.write_meta(conn, schema.META_VERSION, str(number))
    schema.write_meta(conn, schema.META_MODEL, "test-model")
    schema.write_meta(conn, schema.META_DIMENSION, "8")
    for event in old_events():
        conn.execute(
            "CREATE (:Event {id: $id, session_id: 's1', run_id: 'r1', ts: $ts, role: $role,"
            " content: $content, summary: '', iteration: $i, segment: 0,"
            " segment_type: $kind, user_id: 'default', agent_id: 'shiyi', access_count: 0})",
            {"id": event.id, "ts": event.ts, "role": event.role, "content": event.content,
             "i": event.iteration, "kind": event.segment_type},
        )  # fmt: skip
    conn.close()
    db.close()

    graph = KuzuGraph(path, dimension=8, embedding_model="test-model")
    try:
        assert graph.get_meta(schema.META_VERSION) == str(schema.LATEST_VERSION)
        found = {e.id: e.derived for e in graph.get_events([e.id for e in old_events()])}
        assert [found[e.id] for e in old_events()] == EXPECTED
    finally:
        graph.close()


OLD_MIRROR = """
CREATE TABLE ev_rows (
    id TEXT PRIMARY KEY, session_id TEXT NOT NULL, run_id TEXT NOT NULL, ts REAL NOT NULL,
    role TEXT NOT NULL, content TEXT NOT NULL, summary TEXT NOT NULL,
    iteration INTEGER NOT NULL, segment INTEGER NOT NULL, segment_type TEXT NOT NULL,
    user_id TEXT NOT NULL, agent_id TEXT NOT NULL
) WITHOUT ROWID;
"""


def test_an_older_event_mirror_gets_the_column_and_the_marks(tmp_path: Path) -> None:
    file = SqliteFile(tmp_path / "memory.sqlite3")
    try:
        with file.write("old mirror") as conn:
            conn.executescript(OLD_MIRROR)
            for e in old_events():
                conn.execute(
                    "INSERT INTO ev_rows VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                    (e.id, e.session_id, e.run_id, e.ts, e.role, e.content, "", e.iteration,
                     e.segment, e.segment_type, e.user_id, e.agent_id),
                )  # fmt: skip
        rows = EventRows(file).get([e.id for e in old_events()])
        assert [rows[e.id].derived for e in old_events()] == EXPECTED
    finally:
        file.close()


def test_both_backends_store_and_reread_the_mark(open_store: StoreFactory) -> None:
    store: MemoryStore = open_store()
    marked = old_events()
    for event, mark in zip(marked, EXPECTED, strict=True):
        event.derived = mark
    marked[3].derived = "quotes_memory"
    store.add_events(marked)
    store.close()
    again = open_store()
    found = {e.id: e.derived for e in again.get_events([e.id for e in marked])}
    assert [found[e.id] for e in marked] == [e.derived for e in marked]


def test_a_version_2_postgres_store_marks_its_memory_tool_turns(postgres_url: str) -> None:
    from shiyi.memory.postgres.store import PostgresStore

    store = PostgresStore(postgres_url, dimension=8, embedding_model="test-model")
    store.add_events(old_events())
    with store._tx() as conn:  # as a store from before version 3 has them
        conn.execute("ALTER TABLE events DROP COLUMN derived")
        conn.execute("ALTER TABLE facts DROP COLUMN said_at, DROP COLUMN said_in")
        conn.execute("ALTER TABLE keyword_docs DROP COLUMN owner")
        conn.execute("DELETE FROM schema_migrations WHERE version >= 3")
    store.close()
    again = PostgresStore(postgres_url, dimension=8, embedding_model="test-model")
    try:
        found = {e.id: e.derived for e in again.get_events([e.id for e in old_events()])}
        assert [found[e.id] for e in old_events()] == EXPECTED
    finally:
        again.close()


def test_an_older_store_drops_the_vectors_of_its_echoes(open_store: StoreFactory) -> None:
    # an older worker embedded the memory tools' turns too; they only took the vector
    # path's places, so opening the store at the new version drops those vectors
    store: MemoryStore = open_store()
    marked = old_events()
    for event, mark in zip(marked, EXPECTED, strict=True):
        event.derived = mark
    store.add_events(marked)
    store.set_embeddings(
        "event", [(e.id, [1.0, float(i)] + [0.0] * 6) for i, e in enumerate(marked)]
    )
    _back_one_version(store)
    store.close()
    again = open_store()
    kept = {hit.id for hit in again.vector_search("event", [1.0] + [0.0] * 7, 10)}
    assert kept == {e.id for e, mark in zip(marked, EXPECTED, strict=True) if not mark}
    assert again.counts()["embedded_events"] == EXPECTED.count("")
    assert again.events_missing_embeddings(10) == []  # and nothing asks to embed them again


def _back_one_version(store: MemoryStore) -> None:
    """Mark ``store`` as written by the shiyi before the step that drops echoes' vectors (the
    embedded store's latest; PostgreSQL's steps after it run again too)."""
    from shiyi.memory.kuzu.store import EmbeddedStore
    from shiyi.memory.postgres import schema as pg_schema
    from shiyi.memory.postgres.store import PostgresStore

    if isinstance(store, EmbeddedStore):
        store.graph.set_meta(schema.META_VERSION, str(schema.LATEST_VERSION - 1))
    else:
        assert isinstance(store, PostgresStore)
        steps = [name for name, _ in pg_schema.MIGRATIONS]
        echoes = steps.index("echoes unembedded") + 1
        with store._tx() as conn:
            conn.execute("DELETE FROM schema_migrations WHERE version >= %s", (echoes,))
