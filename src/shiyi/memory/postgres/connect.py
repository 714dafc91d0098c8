"""Connections and pools for the store and the job queue, with one clear "unreachable" error."""

from __future__ import annotations

import psycopg
from psycopg_pool import ConnectionPool, PoolTimeout

from shiyi.errors import StorageError
from shiyi.memory.postgres.schema import Conn


def unreachable(what: str, where: str, exc: Exception) -> StorageError:
    """``what``: "memory" or "job queue"; ``where``: the URL without its password."""
    detail = " ".join(str(exc).split())
    return StorageError(
        f"cannot connect to the {what} database {where} ({detail}); check that the server "
        "is running and reachable, and the user, password and database in memory.store"
    )


def connect(url: str, what: str, where: str, timeout: float) -> Conn:
    try:
        return psycopg.connect(url, connect_timeout=max(1, int(timeout)))
    except psycopg.OperationalError as exc:
        raise unreachable(what, where, exc) from exc


def open_pool(
    url: str,
    what: str,
    where: str,
    *,
    name: str,
    min_size: int,
    max_size: int,
    timeout: float,
    autocommit: bool = False,
) -> ConnectionPool[Conn]:
    """An opened pool; a server that does not answer within ``timeout`` is a StorageError."""
    kwargs: dict[str, object] = {"connect_timeout": max(1, int(timeout)), "application_name": name}
    if autocommit:
        kwargs["autocommit"] = True
    pool: ConnectionPool[Conn] = ConnectionPool(
        url, min_size=min_size, max_size=max_size, kwargs=kwargs, open=False, name=name
    )
    try:
        pool.open(wait=True, timeout=timeout)
    except PoolTimeout as exc:
        pool.close()
        raise unreachable(what, where, exc) from exc
    return pool
