"""Which store and job queue ``memory.store`` selects: the embedded ones, or PostgreSQL for a
URL."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from shiyi.config.settings import Settings
from shiyi.memory.jobs import JobQueue
from shiyi.memory.kuzu.jobs import SqliteJobQueue
from shiyi.memory.kuzu.store import EmbeddedStore

if TYPE_CHECKING:
    from shiyi.memory.postgres.store import PostgresStore


def open_store(
    settings: Settings, *, switch_model: bool = False, exclusive: bool = True
) -> tuple[EmbeddedStore | PostgresStore, Path]:
    """The configured store and the local SQLite file for the job queue and embedding cache.

    The embedded store always holds the data directory's lock.  PostgreSQL holds it unless
    ``exclusive=False``: its job queue is in the database (leases keep workers apart), so
    ``shiyi worker`` processes share the directory with each other and with its owner.
    ``switch_model`` accepts a store embedded with another model and drops its vectors.
    """
    config = settings.memory
    if config.store == "embedded":
        embedded = EmbeddedStore(
            settings.memory_dir,
            dimension=config.embed_dimension,
            embedding_model=config.embed_model,
            lock_timeout=config.lock_timeout,
            check_model=not switch_model,
        )
        if switch_model:
            embedded.graph.reset_vectors(config.embed_dimension, config.embed_model)
        return embedded, embedded.sqlite_path
    postgres = _postgres_store_class()(
        config.store,
        dimension=config.embed_dimension,
        embedding_model=config.embed_model,
        check_model=not switch_model,
        directory=settings.memory_dir,
        lock_timeout=config.lock_timeout,
        exclusive=exclusive,
    )
    try:
        if switch_model:
            postgres.reset_vectors(config.embed_dimension, config.embed_model)
    except BaseException:
        postgres.close()
        raise
    assert postgres.sqlite_path is not None  # opened with a directory
    return postgres, postgres.sqlite_path


def _postgres_store_class() -> type[PostgresStore]:
    # Imported only when configured: psycopg is an optional dependency.
    try:
        from shiyi.memory.postgres.store import PostgresStore
    except ImportError as exc:
        from shiyi.memory.postgres import driver_missing

        raise driver_missing(exc) from exc
    return PostgresStore


def open_job_queue(store: str, local_db: Path) -> JobQueue:
    """The queue that goes with ``memory.store``: PostgreSQL for a URL (shared by every
    worker process), else the SQLite file beside the embedded store."""
    if store == "embedded":
        return SqliteJobQueue(local_db)
    try:
        from shiyi.memory.postgres.jobs import PostgresJobQueue
    except ImportError as exc:
        from shiyi.memory.postgres import driver_missing

        raise driver_missing(exc) from exc
    return PostgresJobQueue(store)
