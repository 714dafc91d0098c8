"""The Kuzu graph schema, its versioned migrations and the open-time checks.

Embeddings live in 1:1 side tables (``EventVec``, ``FactVec``, ``EntityVec``) keyed by the
node's id, not in an ``embedding`` column of the node itself: Kuzu 0.11.3 refuses ``SET`` on a
column that carries a vector index ("Cannot set property ... because it is used in one or more
indexes. Try delete and then insert"), while inserts and deletes keep the HNSW index current.
A side row can be deleted and re-inserted freely; a node with edges cannot.
"""

from __future__ import annotations

import warnings
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import kuzu

from shiyi.errors import StorageError
from shiyi.memory.kuzu.guard import GRAPH_HOLDS, damaged_graph_fix
from shiyi.memory.models import NodeKind
from shiyi.memory.text.echoes import MEMORY_TOOL, legacy_prefixes

META_VERSION = "schema_version"
META_MODEL = "embedding_model"
META_DIMENSION = "embedding_dimension"
REINDEX_HINT = "run `shiyi memory reindex --all` to re-embed the memories with the configured model"


@dataclass(frozen=True, slots=True)
class VectorTable:
    """Where one node kind keeps its vectors and the name of their HNSW index."""

    table: str
    index: str


VECTOR_TABLES: dict[NodeKind, VectorTable] = {
    "event": VectorTable("EventVec", "event_vec_idx"),
    "fact": VectorTable("FactVec", "fact_vec_idx"),
    "entity": VectorTable("EntityVec", "entity_vec_idx"),
}

_NODE_TABLES = (
    "CREATE NODE TABLE IF NOT EXISTS Meta(key STRING PRIMARY KEY, value STRING)",
    "CREATE NODE TABLE IF NOT EXISTS Session(id STRING PRIMARY KEY, title STRING,"
    " created_at DOUBLE, user_id STRING, agent_id STRING)",
    "CREATE NODE TABLE IF NOT EXISTS Event(id STRING PRIMARY KEY, session_id STRING,"
    " run_id STRING, ts DOUBLE, role STRING, content STRING, summary STRING, iteration INT64,"
    " segment INT64, segment_type STRING, user_id STRING, agent_id STRING,"
    " access_count INT64, last_accessed DOUBLE)",
    "CREATE NODE TABLE IF NOT EXISTS Entity(name STRING PRIMARY KEY, type STRING,"
    " display STRING, aliases STRING[])",
    "CREATE NODE TABLE IF NOT EXISTS Fact(id STRING PRIMARY KEY, key STRING, value STRING,"
    " kind STRING, scope STRING, confidence DOUBLE, status STRING, tier STRING,"
    " expires_at DOUBLE, access_count INT64, last_accessed DOUBLE, created_at DOUBLE,"
    " updated_at DOUBLE, valid_from DOUBLE, valid_to DOUBLE, user_id STRING, agent_id STRING)",
)
_REL_TABLES = (
    "CREATE REL TABLE IF NOT EXISTS IN_SESSION(FROM Event TO Session)",
    "CREATE REL TABLE IF NOT EXISTS NEXT(FROM Event TO Event)",
    "CREATE REL TABLE IF NOT EXISTS MENTIONS(FROM Event TO Entity)",
    "CREATE REL TABLE IF NOT EXISTS RELATED_TO(FROM Entity TO Entity, type STRING,"
    " weight DOUBLE, valid_from DOUBLE, valid_to DOUBLE)",
    "CREATE REL TABLE IF NOT EXISTS ABOUT(FROM Fact TO Entity)",
    "CREATE REL TABLE IF NOT EXISTS DERIVED_FROM(FROM Fact TO Event)",
    "CREATE REL TABLE IF NOT EXISTS SUPERSEDES(FROM Fact TO Fact)",
)

Migration = Callable[[kuzu.Connection, int], None]
"""Brings the schema from the previous version to this one; gets the embedding dimension."""


def execute(conn: kuzu.Connection, query: str, params: dict[str, Any] | None = None) -> list[Any]:
    """Run one statement and return its rows as lists; Kuzu errors become StorageError.

    A statement with parameters runs prepared once per connection (:func:`prepared`):
    Kuzu 0.11.3 keeps the native memory of every statement it prepares, and
    ``conn.execute(query, params)`` prepares anew each time: a server's worker grew by
    ~400 KB a message that way, for good (issue 29)."""
    try:
        if params and not query.lstrip().upper().startswith("COPY"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                result = conn.execute(prepared(conn, query), params)
        else:
            result = conn.execute(query, params or {})
    except RuntimeError as exc:
        raise StorageError(f"graph store query failed: {exc}") from exc
    first = result[0] if isinstance(result, list) else result
    return [list(row) for row in first.get_all()]


def prepared(conn: kuzu.Connection, query: str) -> Any:
    """``query`` prepared on ``conn``, from the connection's cache (which the code's fixed
    set of statements bounds; :data:`MAX_PREPARED` caps it all the same).  Kuzu binds a
    prepared statement again when the schema changed since, so a cached one stays right."""
    cache: dict[str, Any] = _PREPARED.setdefault(conn, {})
    statement = cache.pop(query, None)
    if statement is None:
        statement = conn.prepare(query)
        if len(cache) >= MAX_PREPARED:
            del cache[next(iter(cache))]  # the least recently used
    cache[query] = statement  # (re)inserted last: the most recently used
    return statement


def lookup(conn: kuzu.Connection, query: str, keys: Sequence[str]) -> list[Any]:
    """Rows of ``query`` (which takes one ``$id``) for each key, via a prepared statement.

    Kuzu resolves ``{id: $id}`` through the primary-key index, but ``id IN $ids`` and
    ``UNWIND $ids ... MATCH`` scan the table: at 100k events, 20 ids cost 17 ms that way and
    3 ms as prepared single lookups.
    """
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            statement = prepared(conn, query)
            rows: list[Any] = []
            for key in keys:
                result = conn.execute(statement, {"id": key})
                first = result[0] if isinstance(result, list) else result
                rows += [list(r) for r in first.get_all()]
    except RuntimeError as exc:
        raise StorageError(f"graph store query failed: {exc}") from exc
    return rows


# Prepared statements belong to their connection; weak keys let closed connections go.
BUFFER_POOL_BYTES = 512 * 1024 * 1024
MAX_PREPARED = 256
"""Prepared statements kept per connection (the code runs fewer distinct ones)."""

_PREPARED: weakref.WeakKeyDictionary[kuzu.Connection, dict[str, Any]] = weakref.WeakKeyDictionary()


def create_vector_tables(conn: kuzu.Connection, dimension: int) -> None:
    """Vector side tables (no HNSW index: see :mod:`shiyi.index.vector_cache` for why)."""
    for vt in VECTOR_TABLES.values():
        execute(
            conn,
            f"CREATE NODE TABLE IF NOT EXISTS {vt.table}"
            f"(id STRING PRIMARY KEY, embedding FLOAT[{dimension}])",
        )


def drop_vector_tables(conn: kuzu.Connection) -> None:
    for vt in VECTOR_TABLES.values():
        if vt.index in existing_indexes(conn):
            execute(conn, f"CALL DROP_VECTOR_INDEX('{vt.table}', '{vt.index}')")
        execute(conn, f"DROP TABLE IF EXISTS {vt.table}")


def existing_indexes(conn: kuzu.Connection) -> set[str]:
    return {str(row[1]) for row in execute(conn, "CALL SHOW_INDEXES() RETURN *")}


def _v1_initial(conn: kuzu.Connection, dimension: int) -> None:
    for ddl in (*_NODE_TABLES, *_REL_TABLES):
        execute(conn, ddl)
    create_vector_tables(conn, dimension)


_V2_FACT_COLUMNS = (
    "workspace_id STRING DEFAULT 'default'",
    "trigger STRING DEFAULT ''",
    "steps STRING[] DEFAULT []",
    "success_rate DOUBLE",
    "usage_count INT64 DEFAULT 0",
    "evidence_count INT64 DEFAULT 1",
    "anchor STRING DEFAULT ''",
    "source STRING DEFAULT 'explicit'",
    "conflicts_with STRING DEFAULT ''",
)


def _v2_fact_lifecycle(conn: kuzu.Connection, dimension: int) -> None:
    """Shared scopes, procedures, evidence counts, anchors and conflicts on facts."""
    for column in _V2_FACT_COLUMNS:
        execute(conn, f"ALTER TABLE Fact ADD {column}")


def _v3_relation_owners(conn: kuzu.Connection, dimension: int) -> None:
    """Relations carry whose conversation said them (old ones: '', the configured identity's)."""
    for column in ("user_id STRING DEFAULT ''", "agent_id STRING DEFAULT ''"):
        execute(conn, f"ALTER TABLE RELATED_TO ADD {column}")


def _v4_event_derived(conn: kuzu.Connection, dimension: int) -> None:
    """Events say whether they only repeat memory (:mod:`shiyi.memory.text.echoes`); older ones
    are marked where their text tells: a memory tool's call or result."""
    execute(conn, "ALTER TABLE Event ADD derived STRING DEFAULT ''")
    for segment_type in ("tool_call", "tool_result"):
        execute(
            conn,
            "MATCH (e:Event) WHERE e.segment_type = $type"
            " AND any(p IN $prefixes WHERE starts_with(e.content, p))"
            " SET e.derived = $mark",
            {"type": segment_type, "prefixes": legacy_prefixes(segment_type), "mark": MEMORY_TOOL},
        )


def _v5_statement_time(conn: kuzu.Connection, dimension: int) -> None:
    """Facts carry when they were said and by which turns (old ones: unknown, empty)."""
    for column in ("said_at DOUBLE", "said_in STRING[] DEFAULT []"):
        execute(conn, f"ALTER TABLE Fact ADD {column}")


def _v6_echoes_unembedded(conn: kuzu.Connection, dimension: int) -> None:
    """Echoes (derived turns, never recalled) have no vector: the ones an older worker
    embedded only took places in the vector path (RealMem dev with each query's
    ``query_memory`` call and result stored: hybrid R@20 0.830 with their vectors, 0.838
    without)."""
    execute(conn, "MATCH (e:Event), (v:EventVec) WHERE v.id = e.id AND e.derived <> '' DELETE v")


MIGRATIONS: list[Migration] = [
    _v1_initial,
    _v2_fact_lifecycle,
    _v3_relation_owners,
    _v4_event_derived,
    _v5_statement_time,
    _v6_echoes_unembedded,
]
"""Index i migrates to version i + 1; append new steps, never edit shipped ones."""
LATEST_VERSION = len(MIGRATIONS)


def open_database(path: Path) -> kuzu.Database:
    """Open (or create) the database file, turning Kuzu's raw errors into clear ones."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        # Kuzu's default buffer pool is 80% of the machine's memory: the 100k-event benchmark
        # peaked at 3.2 GB. 512 MB holds that store's working set.
        return kuzu.Database(str(path), buffer_pool_size=BUFFER_POOL_BYTES)
    except RuntimeError as exc:
        raise StorageError(_open_failure_message(path, str(exc))) from exc


def _open_failure_message(path: Path, raw: str) -> str:
    if "Could not set lock" in raw:
        return (
            f"the memory graph at {path} is open in another process; close it "
            "(only one process may use the store at a time)"
        )
    if path.is_dir():
        return f"the memory graph path {path} is a directory, not a Kuzu database file"
    return (
        f"the memory graph at {path} cannot be opened ({raw.splitlines()[0]}); it may be "
        f"corrupt or written by another Kuzu version. It holds {GRAPH_HOLDS}; do not delete "
        f"it. {damaged_graph_fix(path)}"
    )


def read_meta(conn: kuzu.Connection, key: str) -> str | None:
    rows = execute(conn, "MATCH (m:Meta {key: $k}) RETURN m.value", {"k": key})
    return str(rows[0][0]) if rows else None


def write_meta(conn: kuzu.Connection, key: str, value: str) -> None:
    execute(conn, "MERGE (m:Meta {key: $k}) SET m.value = $v", {"k": key, "v": value})


def _has_meta_table(conn: kuzu.Connection) -> bool:
    return any(row[1] == "Meta" for row in execute(conn, "CALL SHOW_TABLES() RETURN *"))


def current_version(conn: kuzu.Connection) -> int:
    if not _has_meta_table(conn):
        return 0
    return int(read_meta(conn, META_VERSION) or 0)


def migrate(
    conn: kuzu.Connection, path: Path, dimension: int, model: str, *, check_model: bool = True
) -> None:
    """Run pending migrations, record the embedding model on creation, refuse mismatches.

    ``check_model=False`` lets ``shiyi memory reindex`` open a store built with another model.
    """
    version = current_version(conn)
    if version > LATEST_VERSION:
        raise StorageError(
            f"the memory graph at {path} has schema version {version}, newer than this shiyi "
            f"understands ({LATEST_VERSION}); upgrade shiyi to open it"
        )
    for number in range(version + 1, LATEST_VERSION + 1):
        MIGRATIONS[number - 1](conn, dimension)
        write_meta(conn, META_VERSION, str(number))
    if version == 0:
        write_meta(conn, META_MODEL, model)
        write_meta(conn, META_DIMENSION, str(dimension))
    if check_model:
        check_embedding_model(conn, path, dimension, model)


def check_embedding_model(conn: kuzu.Connection, path: Path, dimension: int, model: str) -> None:
    stored_model = read_meta(conn, META_MODEL)
    stored_dimension = read_meta(conn, META_DIMENSION)
    if stored_model == model and stored_dimension == str(dimension):
        return
    raise StorageError(
        f"the memory graph at {path} was embedded with model {stored_model!r} "
        f"(dimension {stored_dimension}), but the configured embedding model is {model!r} "
        f"(dimension {dimension}); {REINDEX_HINT}, or configure {stored_model!r} again"
    )
