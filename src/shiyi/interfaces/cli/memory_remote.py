"""The API client of the process that owns the data dir, for ``shiyi memory ...``.

Used when ``shiyi serve`` or ``shiyi chat`` has the store open (see
:mod:`shiyi.interfaces.cli.remote`); the commands call memory's operations over it
(:class:`shiyi.client.memory_ops.RemoteMemory`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported lazily: `shiyi --help` must stay fast
    from shiyi.client import Client


@contextmanager
def connected(config: Path | None) -> Iterator[Client | None]:
    """The owner's client (None: nobody owns the data dir, open the store here)."""
    from shiyi.errors import ShiyiError
    from shiyi.interfaces.cli.common import fail, load
    from shiyi.interfaces.cli.remote import service_client

    client = service_client(load(config))
    if client is None:
        yield None
        return
    try:
        yield client
    except ShiyiError as exc:  # what the server refused ends the command as a local refusal does
        fail(str(exc))
    finally:
        client.close()
