"""One memory test-suite, two backends: every test that asks for ``store``, ``open_store`` or
``memory_store`` runs once on the embedded store (Kuzu + SQLite) and once on PostgreSQL
(a real server, see :mod:`tests.support.postgres`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import suppress
from pathlib import Path

import pytest

from shiyi.config import Settings, load_settings
from shiyi.memory.kuzu.store import EmbeddedStore
from shiyi.memory.protocol import MemoryStore
from shiyi.memory.recall.result_cache import WriteCountingStore
from shiyi.memory.service import Memory

BACKENDS = ("embedded", "postgres")
DIM = 8

StoreFactory = Callable[..., MemoryStore]


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def memory_store(backend: str, request: pytest.FixtureRequest) -> str:
    """The value for ``settings.memory.store``: 'embedded' or a fresh database's URL."""
    if backend == "postgres":
        return str(request.getfixturevalue("postgres_url"))
    return "embedded"


@pytest.fixture
def open_store(memory_store: str, tmp_path: Path) -> Iterator[StoreFactory]:
    """Opens (and re-opens) the same store of the test's backend; all closed at the end."""
    opened: list[MemoryStore] = []

    def factory(
        *, dimension: int = DIM, embedding_model: str = "test-model", check_model: bool = True
    ) -> MemoryStore:
        store: MemoryStore
        if memory_store == "embedded":
            store = EmbeddedStore(
                tmp_path / "store",
                dimension=dimension,
                embedding_model=embedding_model,
                check_model=check_model,
            )
        else:
            from shiyi.memory.postgres.store import PostgresStore

            store = PostgresStore(
                memory_store,
                dimension=dimension,
                embedding_model=embedding_model,
                check_model=check_model,
            )
        opened.append(store)
        return store

    yield factory
    for store in opened:
        with suppress(Exception):  # closed by the test already
            store.close()


@pytest.fixture
def store(open_store: StoreFactory) -> MemoryStore:
    return open_store()


@pytest.fixture
def backend_settings(tmp_path: Path, memory_store: str) -> Settings:
    """Settings on the test's backend, with the real embedder."""
    loaded = load_settings(cwd=tmp_path, workspace=tmp_path)
    loaded.memory.store = memory_store
    return loaded


@pytest.fixture
def vectorless_settings(tmp_path: Path, memory_store: str) -> Settings:
    """Settings on the test's backend without an embedder (keyword and graph paths: fast)."""
    loaded = load_settings(cwd=tmp_path, workspace=tmp_path)
    loaded.memory.store = memory_store
    loaded.memory.embedder = "none"
    return loaded


@pytest.fixture
def vectorless_memory(vectorless_settings: Settings) -> Iterator[Memory]:
    """An empty memory on those settings; the test drains its worker itself."""
    opened = Memory.open(vectorless_settings, start_worker=False)
    yield opened
    opened.close()


def next_pairs(store: MemoryStore) -> set[tuple[str, str]]:
    """The NEXT edges (session order) as the backend stores them."""
    store = unwrapped(store)
    if isinstance(store, EmbeddedStore):
        rows = store.graph._read("MATCH (a:Event)-[:NEXT]->(b:Event) RETURN a.id, b.id")
        return {(str(r[0]), str(r[1])) for r in rows}
    return {(str(a), str(b)) for a, b in _postgres_rows(store, "SELECT src, dst FROM event_next")}


def unwrapped(store: MemoryStore) -> MemoryStore:
    """The store under the memory's write-counting wrapper (the result cache's)."""
    return store.inner if isinstance(store, WriteCountingStore) else store


def event_access(store: MemoryStore, event_id: str) -> tuple[int, float | None]:
    """(access_count, last_accessed) of an event: not part of the protocol's records."""
    store = unwrapped(store)
    if isinstance(store, EmbeddedStore):
        rows = store.graph._read(
            "MATCH (e:Event {id: $id}) RETURN e.access_count, e.last_accessed", {"id": event_id}
        )
    else:
        rows = _postgres_rows(
            store, "SELECT access_count, last_accessed FROM events WHERE id = %s", (event_id,)
        )
    count, at = rows[0]
    return int(count or 0), at


def mention_count(store: MemoryStore, entity: str | None = None) -> int:
    store = unwrapped(store)
    if isinstance(store, EmbeddedStore):
        where = "{name: $name}" if entity else ""
        rows = store.graph._read(
            f"MATCH (:Event)-[m:MENTIONS]->(:Entity {where}) RETURN count(m)",
            {"name": entity} if entity else None,
        )
    else:
        where = "WHERE entity = %s" if entity else ""
        rows = _postgres_rows(
            store, f"SELECT count(*) FROM mentions {where}", (entity,) if entity else ()
        )
    return int(rows[0][0])


def session_links(store: MemoryStore) -> list[tuple[str, str]]:
    """(event id, session id) of every IN_SESSION link, sorted."""
    store = unwrapped(store)
    if isinstance(store, EmbeddedStore):
        rows = store.graph._read("MATCH (e:Event)-[:IN_SESSION]->(s:Session) RETURN e.id, s.id")
    else:
        rows = _postgres_rows(
            store, "SELECT e.id, s.id FROM events e JOIN sessions s ON s.id = e.session_id"
        )
    return sorted((str(a), str(b)) for a, b in rows)


def _postgres_rows(store: MemoryStore, query: str, params: tuple[object, ...] = ()) -> list[tuple]:  # type: ignore[type-arg]
    store = unwrapped(store)
    with store._tx() as conn:  # type: ignore[attr-defined]
        return list(conn.execute(query, params).fetchall())
