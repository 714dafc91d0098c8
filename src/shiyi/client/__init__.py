"""A Python client for the ``shiyi serve`` API (sync and async), iterating typed events.

>>> from shiyi.client import Client
>>> with Client("http://127.0.0.1:8765") as client:            # doctest: +SKIP
...     session = client.create_session("demo").id
...     for event in client.send(session, "what is in notes.txt?"):
...         print(event.type)

:func:`find_service` returns the address of the live process that owns a data dir (from
its ``server.json``), clearing a stale record left by a killed one.
"""

from __future__ import annotations

from pathlib import Path

from shiyi.client.aio import AsyncClient
from shiyi.client.owner import Owner, live_owner
from shiyi.client.sync import Client
from shiyi.errors import (
    ClientError,
    Conflict,
    NotFound,
    PayloadTooLarge,
    RequestError,
    ServerError,
    ServiceUnavailable,
    UnauthorizedError,
    ValidationFailed,
)


def find_service(data_dir: Path) -> Owner | None:
    """The live owner of ``data_dir`` (pid, address), or None when no process serves it."""
    return live_owner(data_dir)


__all__ = [
    "AsyncClient",
    "Client",
    "ClientError",
    "Conflict",
    "NotFound",
    "Owner",
    "PayloadTooLarge",
    "RequestError",
    "ServerError",
    "ServiceUnavailable",
    "UnauthorizedError",
    "ValidationFailed",
    "find_service",
]
