"""The PostgreSQL schema, its versioned migrations and the open-time checks.

The graph is relational here: nodes are tables (``sessions``, ``events``, ``entities``,
``facts``) and every edge kind is a table of key pairs (``mentions``, ``relations``,
``about``, ``derived_from``, ``supersedes``) whose foreign keys cascade, so deleting a node
removes its edges the way Kuzu's ``DETACH DELETE`` does.  ``IN_SESSION`` is the
``events.session_id`` column; ``NEXT`` is the view ``event_next`` (the session's order by
``ts, iteration, segment, id``), always right without the re-linking the embedded store does.

Vectors are ``vector(D)`` columns of the node tables with HNSW indexes (``vector_cosine_ops``).

Keyword search keeps shiyi's own terms (:func:`shiyi.index.text.tokenize`: numbers,
identifiers, paths, jieba-segmented Chinese).  ``to_tsvector`` would re-parse them (``2024-05-01``
and ``main.py`` fall apart), so each document's distinct terms go into the tsvector verbatim
(``array_to_tsvector``, GIN-indexed for ``@@``) and its term counts into ``tf``.  Statement
triggers keep the corpus statistics BM25 needs (documents, tokens, per-term document counts),
so ranking is the same BM25 as SQLite FTS5's in the embedded store.

Migrations run in one transaction under an advisory lock: two processes opening a fresh
database at once cannot both create it.
"""

from __future__ import annotations

from collections.abc import Callable

import psycopg
from psycopg.rows import TupleRow

from shiyi.errors import StorageError
from shiyi.memory.postgres.owners import backfill_keyword_owners
from shiyi.memory.text.echoes import MEMORY_TOOL, legacy_prefixes

Conn = psycopg.Connection[TupleRow]

META_MODEL = "embedding_model"
META_DIMENSION = "embedding_dimension"
REINDEX_HINT = "run `shiyi memory reindex --all` to re-embed the memories with the configured model"
_MIGRATION_LOCK = 0x5348_4959  # "SHIY": one advisory lock id for schema changes

VECTOR_TABLES = {"event": "events", "fact": "facts", "entity": "entities"}
"""Node kind -> the table holding its ``embedding`` column."""

# embedded_order: when a node was first embedded; equal similarities (identical texts) rank
# by it, as the embedded store's matrix rows do.
_V1_TABLES = """
CREATE SEQUENCE embedding_order;
CREATE TABLE meta (key text PRIMARY KEY, value text NOT NULL);
CREATE TABLE sessions (
    id text PRIMARY KEY, title text NOT NULL DEFAULT '', created_at double precision,
    user_id text NOT NULL DEFAULT 'default', agent_id text NOT NULL DEFAULT 'shiyi'
);
CREATE TABLE events (
    id text PRIMARY KEY,
    session_id text NOT NULL REFERENCES sessions (id),
    run_id text NOT NULL, ts double precision NOT NULL, role text NOT NULL,
    content text NOT NULL, summary text NOT NULL DEFAULT '',
    iteration bigint NOT NULL DEFAULT 0, segment bigint NOT NULL DEFAULT 0,
    segment_type text NOT NULL, user_id text NOT NULL, agent_id text NOT NULL,
    access_count bigint NOT NULL DEFAULT 0, last_accessed double precision,
    embedding vector({dim}), embedded_order bigint
);
CREATE INDEX events_session_order ON events (session_id, ts, iteration, segment);
CREATE INDEX events_run_order ON events (run_id, iteration, segment);
CREATE INDEX events_newest ON events (ts DESC, iteration DESC, segment DESC);
CREATE INDEX events_user ON events (user_id);
CREATE INDEX events_unembedded ON events (ts, iteration, segment) WHERE embedding IS NULL;
CREATE VIEW event_next AS
    SELECT src, dst FROM (
        SELECT id AS src, lead(id) OVER (
            PARTITION BY session_id ORDER BY ts, iteration, segment, id) AS dst
        FROM events) AS chain
    WHERE dst IS NOT NULL;
CREATE TABLE entities (
    name text PRIMARY KEY, type text NOT NULL DEFAULT 'concept',
    display text NOT NULL DEFAULT '', aliases text[] NOT NULL DEFAULT '{{}}',
    embedding vector({dim}), embedded_order bigint
);
CREATE INDEX entities_aliases ON entities USING gin (aliases);
CREATE TABLE facts (
    id text PRIMARY KEY, key text NOT NULL DEFAULT '', value text NOT NULL,
    kind text NOT NULL, scope text NOT NULL, confidence double precision NOT NULL,
    status text NOT NULL, tier text NOT NULL,
    created_at double precision, updated_at double precision,
    valid_from double precision, valid_to double precision, expires_at double precision,
    access_count bigint NOT NULL DEFAULT 0, last_accessed double precision,
    user_id text NOT NULL, agent_id text NOT NULL, workspace_id text NOT NULL DEFAULT 'default',
    trigger text NOT NULL DEFAULT '', steps text[] NOT NULL DEFAULT '{{}}',
    success_rate double precision, usage_count bigint NOT NULL DEFAULT 0,
    evidence_count bigint NOT NULL DEFAULT 1, anchor text NOT NULL DEFAULT '',
    source text NOT NULL DEFAULT 'explicit', conflicts_with text NOT NULL DEFAULT '',
    embedding vector({dim}), embedded_order bigint
);
CREATE INDEX facts_key ON facts (key);
CREATE INDEX facts_status ON facts (status, updated_at DESC);
CREATE INDEX facts_newest ON facts (updated_at DESC);
CREATE INDEX facts_user ON facts (user_id);
CREATE INDEX facts_expiring ON facts (expires_at)
    WHERE tier = 'short' AND status IN ('active', 'pending');
CREATE TABLE mentions (
    event_id text NOT NULL REFERENCES events (id) ON DELETE CASCADE,
    entity text NOT NULL REFERENCES entities (name) ON DELETE CASCADE,
    seq bigint GENERATED ALWAYS AS IDENTITY,
    PRIMARY KEY (event_id, entity)
);
CREATE INDEX mentions_entity ON mentions (entity, event_id);
CREATE TABLE relations (
    src text NOT NULL REFERENCES entities (name) ON DELETE CASCADE,
    dst text NOT NULL REFERENCES entities (name) ON DELETE CASCADE,
    type text NOT NULL, weight double precision NOT NULL DEFAULT 1.0,
    valid_from double precision, valid_to double precision,
    seq bigint GENERATED ALWAYS AS IDENTITY,
    PRIMARY KEY (src, dst, type)
);
CREATE INDEX relations_dst ON relations (dst);
CREATE TABLE about (
    fact_id text NOT NULL REFERENCES facts (id) ON DELETE CASCADE,
    entity text NOT NULL REFERENCES entities (name) ON DELETE CASCADE,
    seq bigint GENERATED ALWAYS AS IDENTITY,
    PRIMARY KEY (fact_id, entity)
);
CREATE INDEX about_entity ON about (entity);
CREATE TABLE derived_from (
    fact_id text NOT NULL REFERENCES facts (id) ON DELETE CASCADE,
    event_id text NOT NULL REFERENCES events (id) ON DELETE CASCADE,
    seq bigint GENERATED ALWAYS AS IDENTITY,
    PRIMARY KEY (fact_id, event_id)
);
CREATE INDEX derived_from_event ON derived_from (event_id);
CREATE TABLE supersedes (
    newer text NOT NULL REFERENCES facts (id) ON DELETE CASCADE,
    older text NOT NULL REFERENCES facts (id) ON DELETE CASCADE,
    seq bigint GENERATED ALWAYS AS IDENTITY,
    PRIMARY KEY (newer, older)
);
CREATE INDEX supersedes_older ON supersedes (older);
"""

_V1_VECTOR_INDEXES = """
CREATE INDEX events_embedding ON events USING hnsw (embedding vector_cosine_ops);
CREATE INDEX facts_embedding ON facts USING hnsw (embedding vector_cosine_ops);
CREATE INDEX entities_embedding ON entities USING hnsw (embedding vector_cosine_ops);
"""

# seq: the embedded index's rowid twin (stable across re-indexing one id; BM25 scoring
# budgets walk it newest first).  length: tokens in the document, repeats counted.
_V1_KEYWORDS = """
CREATE TABLE keyword_docs (
    seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
    id text PRIMARY KEY, node text NOT NULL,
    terms tsvector NOT NULL, tf jsonb NOT NULL, length integer NOT NULL
);
CREATE INDEX keyword_docs_terms ON keyword_docs USING gin (terms);
CREATE TABLE keyword_stats (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    docs bigint NOT NULL, tokens bigint NOT NULL
);
INSERT INTO keyword_stats VALUES (true, 0, 0);
CREATE TABLE keyword_df (term text PRIMARY KEY, docs bigint NOT NULL);
CREATE FUNCTION keyword_docs_counted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('DELETE', 'UPDATE') THEN
        UPDATE keyword_stats SET docs = docs - (SELECT count(*) FROM old_docs),
            tokens = tokens - (SELECT coalesce(sum(length), 0) FROM old_docs);
        UPDATE keyword_df AS df SET docs = df.docs - gone.n
        FROM (SELECT term, count(*) AS n FROM old_docs, unnest(tsvector_to_array(terms)) term
              GROUP BY term) AS gone
        WHERE df.term = gone.term;
        -- A term no document holds any more goes: forgetting must not leave its text here.
        DELETE FROM keyword_df AS df USING old_docs, unnest(tsvector_to_array(old_docs.terms)) t
        WHERE df.term = t AND df.docs <= 0;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        UPDATE keyword_stats SET docs = docs + (SELECT count(*) FROM new_docs),
            tokens = tokens + (SELECT coalesce(sum(length), 0) FROM new_docs);
        -- Sorted: concurrent writers lock the same rows in the same order (no deadlock).
        INSERT INTO keyword_df AS df (term, docs)
        SELECT term, count(*) FROM new_docs, unnest(tsvector_to_array(terms)) term
        GROUP BY term ORDER BY term
        ON CONFLICT (term) DO UPDATE SET docs = df.docs + excluded.docs;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER keyword_docs_inserted AFTER INSERT ON keyword_docs
    REFERENCING NEW TABLE AS new_docs FOR EACH STATEMENT EXECUTE FUNCTION keyword_docs_counted();
CREATE TRIGGER keyword_docs_updated AFTER UPDATE ON keyword_docs
    REFERENCING OLD TABLE AS old_docs NEW TABLE AS new_docs
    FOR EACH STATEMENT EXECUTE FUNCTION keyword_docs_counted();
CREATE TRIGGER keyword_docs_deleted AFTER DELETE ON keyword_docs
    REFERENCING OLD TABLE AS old_docs FOR EACH STATEMENT EXECUTE FUNCTION keyword_docs_counted();
"""


def _v1_initial(conn: Conn, dimension: int) -> None:
    conn.execute(_V1_TABLES.format(dim=dimension))
    conn.execute(_V1_VECTOR_INDEXES)
    conn.execute(_V1_KEYWORDS)


Migration = Callable[[Conn, int], None]


def _v2_relation_owners(conn: Conn, dimension: int) -> None:
    """Relations carry whose conversation said them (old ones: '', the configured identity's);
    each owner has its own edge."""
    conn.execute(
        "ALTER TABLE relations ADD COLUMN user_id text NOT NULL DEFAULT '',"
        " ADD COLUMN agent_id text NOT NULL DEFAULT '',"
        " DROP CONSTRAINT relations_pkey, ADD PRIMARY KEY (src, dst, type, user_id, agent_id)"
    )


def _v3_event_derived(conn: Conn, dimension: int) -> None:
    """Events say whether they only repeat memory (:mod:`shiyi.memory.text.echoes`); older ones
    are marked where their text tells: a memory tool's call or result."""
    conn.execute("ALTER TABLE events ADD COLUMN derived text NOT NULL DEFAULT ''")
    for segment_type in ("tool_call", "tool_result"):
        conn.execute(
            "UPDATE events SET derived = %s WHERE segment_type = %s AND EXISTS"
            " (SELECT 1 FROM unnest(%s::text[]) AS p WHERE left(content, length(p)) = p)",
            (MEMORY_TOOL, segment_type, legacy_prefixes(segment_type)),
        )


def _v4_statement_time(conn: Conn, dimension: int) -> None:
    """Facts carry when they were said and by which turns (old ones: unknown, empty)."""
    conn.execute(
        "ALTER TABLE facts ADD COLUMN said_at double precision,"
        " ADD COLUMN said_in text[] NOT NULL DEFAULT '{}'"
    )


def _v5_echoes_unembedded(conn: Conn, dimension: int) -> None:
    """Echoes (derived turns, never recalled) have no vector: the ones an older worker
    embedded only took places in the vector path."""
    conn.execute("UPDATE events SET embedding = NULL WHERE derived <> '' AND embedding IS NOT NULL")


def _v6_owner_searches(conn: Conn, dimension: int) -> None:
    """Keyword documents carry their owner tag (:mod:`shiyi.memory.scopes`): a search limited
    to one viewer's owners filters inside its query; one owner's newest events, and their
    mentions of an entity, are index ranges."""
    conn.execute(
        "CREATE INDEX IF NOT EXISTS events_owner_newest"
        " ON events (user_id, agent_id, ts DESC, iteration DESC, segment DESC)"
    )
    # whose turn mentions the entity (an event's owner never changes): one owner's mentions
    # of an entity are one index range, however many another owner has
    conn.execute(
        "ALTER TABLE mentions ADD COLUMN IF NOT EXISTS user_id text NOT NULL DEFAULT '',"
        " ADD COLUMN IF NOT EXISTS agent_id text NOT NULL DEFAULT ''"
    )
    conn.execute(
        "UPDATE mentions AS m SET user_id = e.user_id, agent_id = e.agent_id FROM events AS e"
        " WHERE e.id = m.event_id"
    )
    conn.execute(
        "CREATE INDEX IF NOT EXISTS mentions_owner ON mentions (entity, user_id, agent_id)"
    )
    conn.execute("ALTER TABLE keyword_docs ADD COLUMN IF NOT EXISTS owner text NOT NULL DEFAULT ''")
    backfill_keyword_owners(conn)


def _v7_keyword_owner_index(conn: Conn, dimension: int) -> None:
    """One owner's keyword documents are one index range: a viewer who may see few of them is
    scored over those alone (:func:`shiyi.memory.postgres.keywords.search`)."""
    conn.execute("CREATE INDEX IF NOT EXISTS keyword_docs_owner ON keyword_docs (owner)")


def _v8_workspace_facts_index(conn: Conn, dimension: int) -> None:
    """A workspace's shared facts are one index range: with a user's own (``facts_user``),
    the facts a viewer may see are counted, and compared exactly when few, without reading
    every user's (:func:`shiyi.memory.postgres.reads.vector_search`)."""
    conn.execute(
        "CREATE INDEX IF NOT EXISTS facts_workspace ON facts (workspace_id)"
        " WHERE scope = 'workspace'"
    )


MIGRATIONS: list[tuple[str, Migration]] = [
    ("initial schema", _v1_initial),
    ("relation owners", _v2_relation_owners),
    ("derived events", _v3_event_derived),
    ("statement time", _v4_statement_time),
    ("echoes unembedded", _v5_echoes_unembedded),
    ("owner searches", _v6_owner_searches),
    ("keyword owner index", _v7_keyword_owner_index),
    ("workspace facts index", _v8_workspace_facts_index),
]
"""Index i migrates to version i + 1; append new steps, never edit shipped ones."""
LATEST_VERSION = len(MIGRATIONS)


def migrate(
    conn: Conn,
    where: str,
    dimension: int,
    model: str,
    *,
    check_model: bool = True,
) -> None:
    """Bring the database to the latest schema; record or check the embedding model."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
        _ensure_vector_extension(conn, where)
        conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY,"
            " description text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())"
        )
        version = current_version(conn)
        if version > LATEST_VERSION:
            raise StorageError(
                f"the memory database {where} has schema version {version}, newer than this "
                f"shiyi understands ({LATEST_VERSION}); upgrade shiyi to open it"
            )
        for number in range(version + 1, LATEST_VERSION + 1):
            description, step = MIGRATIONS[number - 1]
            step(conn, dimension)
            conn.execute(
                "INSERT INTO schema_migrations (version, description) VALUES (%s, %s)",
                (number, description),
            )
        if version == 0:
            write_meta(conn, META_MODEL, model)
            write_meta(conn, META_DIMENSION, str(dimension))
    if check_model:
        check_embedding_model(conn, where, dimension, model)


def _ensure_vector_extension(conn: Conn, where: str) -> None:
    installed = conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone()
    if installed:
        return
    try:
        with conn.transaction():  # a savepoint: the error below must not abort the migration
            conn.execute("CREATE EXTENSION vector")
    except psycopg.Error as exc:
        raise StorageError(
            f"the memory database {where} has no pgvector extension and this user cannot "
            f"create it ({str(exc).strip()}); install pgvector on the server and run "
            "`CREATE EXTENSION vector;` in the database as a superuser"
        ) from exc


def current_version(conn: Conn) -> int:
    row = conn.execute("SELECT max(version) FROM schema_migrations").fetchone()
    return int(row[0]) if row and row[0] is not None else 0


def read_meta(conn: Conn, key: str) -> str | None:
    row = conn.execute("SELECT value FROM meta WHERE key = %s", (key,)).fetchone()
    return str(row[0]) if row else None


def write_meta(conn: Conn, key: str, value: str) -> None:
    conn.execute(
        "INSERT INTO meta (key, value) VALUES (%s, %s)"
        " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (key, value),
    )


def check_embedding_model(conn: Conn, where: str, dimension: int, model: str) -> None:
    stored_model = read_meta(conn, META_MODEL)
    stored_dimension = read_meta(conn, META_DIMENSION)
    if stored_model == model and stored_dimension == str(dimension):
        return
    raise StorageError(
        f"the memory database {where} was embedded with model {stored_model!r} "
        f"(dimension {stored_dimension}), but the configured embedding model is {model!r} "
        f"(dimension {dimension}); {REINDEX_HINT}, or configure {stored_model!r} again"
    )


def reset_vectors(conn: Conn, dimension: int, embedding_model: str) -> None:
    """Drop every vector and retype the columns for another model (``memory reindex``)."""
    with conn.transaction():
        for table in VECTOR_TABLES.values():
            conn.execute(f"DROP INDEX IF EXISTS {table}_embedding")
            conn.execute(f"ALTER TABLE {table} DROP COLUMN embedding")
            conn.execute(f"ALTER TABLE {table} ADD COLUMN embedding vector({int(dimension)})")
            conn.execute(f"UPDATE {table} SET embedded_order = NULL")
        conn.execute(_V1_VECTOR_INDEXES)
        conn.execute(
            "CREATE INDEX IF NOT EXISTS events_unembedded ON events (ts, iteration, segment)"
            " WHERE embedding IS NULL"
        )
        write_meta(conn, META_MODEL, embedding_model)
        write_meta(conn, META_DIMENSION, str(dimension))
