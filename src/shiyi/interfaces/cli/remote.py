"""Finding the process that owns the data dir, so a command can use its API instead.

Kuzu allows one read-write process per store.  While ``shiyi serve`` or ``shiyi chat`` owns
the data dir, ``shiyi memory ...`` and ``shiyi run`` talk to it over HTTP (its address is in
``server.json``); a stale record (its process gone, or its pid reused by another process) is
detected and removed, and the command then opens the store itself.
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, NoReturn

import typer

from shiyi.client.owner import Owner, check_owner, owner_hint, owner_path, pid_alive

if TYPE_CHECKING:
    from shiyi.client import Client
    from shiyi.config import Settings

READY_SECONDS = 15.0


def find_owner(settings: Settings) -> Owner | None:
    """The live owner of the data dir other than this process (a stale record is cleared)."""
    check = check_owner(settings.data_dir)  # removes a stale record
    if check.stale is not None:
        typer.echo(
            f"shiyi: note: cleared a stale owner record of pid {check.stale.pid} "
            f"({check.stale.address}) in {owner_path(settings.data_dir)}: {check.reason}",
            err=True,
        )
    owner = check.owner
    return owner if owner is not None and owner.pid != os.getpid() else None


def service_client(settings: Settings, *, quiet: bool = False) -> Client | None:
    """A client for the owner's API, once it answers; None when no live process owns it."""
    from shiyi.client import Client, ServiceUnavailable

    owner = find_owner(settings)
    if owner is None:
        return None
    client = Client(owner.address, token=owner_token(settings, owner))
    deadline = time.monotonic() + READY_SECONDS
    while True:  # the owner writes its record just before it starts listening
        try:
            client.health()
            break
        except ServiceUnavailable:
            if not pid_alive(owner.pid):
                client.close()
                return service_client(settings, quiet=quiet)  # it died: clear and re-check
            if time.monotonic() > deadline:
                client.close()
                _fail(
                    f"pid {owner.pid} owns {settings.data_dir} (`{owner.command or 'shiyi'}`) "
                    f"but its API at {owner.address} does not answer; wait for it, or stop it; "
                    + owner_hint(settings.data_dir, owner)
                )
            time.sleep(0.1)
    if not quiet:
        typer.echo(
            f"shiyi: using the running service of pid {owner.pid} at {owner.address}", err=True
        )
    return client


def owner_token(settings: Settings, owner: Owner) -> str | None:
    """The bearer token for the owner's API: the one it made for this start (a chat's, in
    its record), else ``server.token`` from the config."""
    if owner.token:
        return owner.token
    return settings.server.token.get_secret_value() if settings.server.token else None


def refuse_while_owned(settings: Settings, command: str) -> None:
    """For commands the API cannot do: fail with who owns the store and what to do."""
    owner = find_owner(settings)
    if owner is not None:
        _fail(
            f"`shiyi {command}` needs the memory store, which pid {owner.pid} "
            f"(`{owner.command or 'shiyi'}`, {owner.address}) has open; stop that process "
            "first, or run the command through it when the API offers it; "
            + owner_hint(settings.data_dir, owner)
        )


def _fail(message: str) -> NoReturn:
    typer.echo(f"shiyi: error: {message}", err=True)
    raise typer.Exit(2)
