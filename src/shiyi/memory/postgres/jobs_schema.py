"""The job queue's tables in PostgreSQL and their versioned migrations.

Kept apart from the store's schema (:mod:`shiyi.memory.postgres.schema`): its own migrations
table (``shiyi_jobs_migrations``) and its own advisory lock, so the queue and the store can be
upgraded independently and a database may hold just the queue.

Times are the server's (``timestamptz``, ``now()``): leases compare with one clock even when
the workers run on machines whose clocks disagree.
"""

from __future__ import annotations

from collections.abc import Callable

from shiyi.errors import StorageError
from shiyi.memory.postgres.schema import Conn

JOBS_TABLE = "shiyi_jobs"
_MIGRATION_LOCK = 0x5348_4A42  # "SHJB": not the store's lock id, so neither waits on the other

# Partial indexes: a claim scans only ready pending rows in id order; the lease reaper only
# running rows; done rows (most of the table after a while) are in neither.
_V1 = f"""
CREATE TABLE {JOBS_TABLE} (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    kind text NOT NULL,
    payload jsonb NOT NULL,
    status text NOT NULL DEFAULT 'pending'
        CHECK (status IN ('pending', 'running', 'done', 'failed')),
    attempts integer NOT NULL DEFAULT 0,
    max_attempts integer NOT NULL DEFAULT 5,
    run_after timestamptz NOT NULL DEFAULT '-infinity',
    last_error text NOT NULL DEFAULT '',
    claimed_by text,
    claimed_host text,
    claimed_pid integer,
    lease_token uuid,
    lease_expires_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX {JOBS_TABLE}_ready ON {JOBS_TABLE} (kind, id) WHERE status = 'pending';
CREATE INDEX {JOBS_TABLE}_leases ON {JOBS_TABLE} (lease_expires_at) WHERE status = 'running';
CREATE INDEX {JOBS_TABLE}_failed ON {JOBS_TABLE} (updated_at) WHERE status = 'failed';
CREATE INDEX {JOBS_TABLE}_done ON {JOBS_TABLE} (updated_at) WHERE status = 'done';
CREATE INDEX {JOBS_TABLE}_payload ON {JOBS_TABLE} (kind, md5(payload::text));
"""


def _v1_initial(conn: Conn) -> None:
    conn.execute(_V1)


Migration = Callable[[Conn], None]
MIGRATIONS: list[tuple[str, Migration]] = [("job queue with leases", _v1_initial)]
"""Index i migrates to version i + 1; append new steps, never edit shipped ones."""
LATEST_VERSION = len(MIGRATIONS)


def migrate(conn: Conn, where: str) -> None:
    """Bring the queue's tables to the latest version (safe when many workers start at once:
    the advisory lock lets one of them migrate while the others wait)."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
        conn.execute(
            "CREATE TABLE IF NOT EXISTS shiyi_jobs_migrations (version integer PRIMARY KEY,"
            " description text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())"
        )
        row = conn.execute("SELECT max(version) FROM shiyi_jobs_migrations").fetchone()
        version = int(row[0]) if row and row[0] is not None else 0
        if version > LATEST_VERSION:
            raise StorageError(
                f"the job queue in {where} has schema version {version}, newer than this "
                f"shiyi understands ({LATEST_VERSION}); upgrade shiyi on this machine"
            )
        for number in range(version + 1, LATEST_VERSION + 1):
            description, step = MIGRATIONS[number - 1]
            step(conn)
            conn.execute(
                "INSERT INTO shiyi_jobs_migrations (version, description) VALUES (%s, %s)",
                (number, description),
            )
