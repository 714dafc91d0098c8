"""Run the API: ``shiyi serve`` in the foreground, or in a background thread of ``shiyi chat``.

The socket is bound before the service starts, so port 0 (any free port) works and the owner
record (``server.json``) always names the address that really answers.
"""

from __future__ import annotations

import secrets
import socket
import sys
import threading
import time
from typing import TYPE_CHECKING

from pydantic import SecretStr

from shiyi.client.owner import live_owner, owner_hint
from shiyi.config.settings import Settings
from shiyi.errors import ConfigError, StorageError
from shiyi.interfaces.server.security import check_exposure

if TYPE_CHECKING:
    import uvicorn

    from shiyi.app import App
    from shiyi.interfaces.server.service import AgentService


def with_address(settings: Settings, host: str | None, port: int | None) -> Settings:
    update = {k: v for k, v in {"host": host, "port": port}.items() if v is not None}
    if not update:
        return settings
    return settings.model_copy(update={"server": settings.server.model_copy(update=update)})


def bind(host: str, port: int) -> socket.socket:
    """A listening-ready socket on ``host:port`` (0: a free port); ConfigError if taken."""
    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError as exc:
        sock.close()
        raise ConfigError(
            f"cannot listen on {host}:{port} ({exc.strerror or exc}); pick another port with "
            "--port (or server.port), or 0 for any free one."
        ) from None
    return sock


def _refuse_second_owner(settings: Settings) -> None:
    owner = live_owner(settings.data_dir)
    if owner is not None:
        raise StorageError(
            f"the data dir {settings.data_dir} is already served by pid {owner.pid} at "
            f"{owner.address} (`{owner.command or 'shiyi'}`); use that service, stop it, or "
            f"set SHIYI_HOME to another data dir ({owner_hint(settings.data_dir, owner)})."
        )


def serve(settings: Settings, *, host: str | None = None, port: int | None = None) -> int:
    """Run until interrupted; a refused exposure raises ConfigError before anything opens."""
    import uvicorn

    from shiyi.interfaces.server.app import create_app
    from shiyi.interfaces.server.service import AgentService

    settings = with_address(settings, host, port)
    check_exposure(settings.server)
    _refuse_second_owner(settings)
    sock = bind(settings.server.host, settings.server.port)
    settings = with_address(settings, None, int(sock.getsockname()[1]))
    try:
        settings = _announced_model(settings)
        settings, token = _with_owner_token(settings)
        service = AgentService(settings, freeze_gc=True, owner_token=token)
    except BaseException:
        sock.close()
        raise
    try:
        config = uvicorn.Config(create_app(service), log_level="info", timeout_graceful_shutdown=5)
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        service.close()
        sock.close()
    return 0


def _announced_model(settings: Settings) -> Settings:
    """The main model to serve (a server found here when none is configured), said on stderr."""
    from shiyi.llm.first_model import pick_main_model

    chosen = pick_main_model(settings)
    if chosen.note:
        print(chosen.note, file=sys.stderr, flush=True)
    return chosen.settings


def _with_start_token(settings: Settings) -> tuple[Settings, str]:
    """Without a configured token, a random one for this start (returned, for server.json).

    Loopback is no boundary: every program on the machine reaches it, a sandboxed command
    sharing the network too, and a token-less API reads and changes the memory and the
    knowledge base."""
    server = settings.server
    if (server.token is not None and server.token.get_secret_value()) or server.users:
        return settings, ""
    token = secrets.token_urlsafe(32)
    update = {"server": server.model_copy(update={"token": SecretStr(token)})}
    return settings.model_copy(update=update), token


def _with_owner_token(settings: Settings) -> tuple[Settings, str]:
    """With ``server.users`` and no ``server.token``, a random token for the configured
    identity, recorded in server.json (0600) for the owner's own commands: `shiyi memory`
    and `shiyi mcp` had met 401 while the server ran (its users' tokens are not theirs)."""
    server = settings.server
    if not server.users or (server.token is not None and server.token.get_secret_value()):
        return settings, ""
    token = secrets.token_urlsafe(32)
    update = {"server": server.model_copy(update={"token": SecretStr(token)})}
    return settings.model_copy(update=update), token


class BackgroundServer:
    """The API on loopback in a daemon thread, serving an open app (its model and memory).

    ``shiyi chat`` owns the store; serving it lets ``shiyi memory search`` (and friends) in
    another terminal work through this process instead of failing on the store lock.
    """

    def __init__(
        self, server: uvicorn.Server, thread: threading.Thread, service: AgentService
    ) -> None:
        self._server = server
        self._thread = thread
        self.service = service
        self.address = service.address

    @classmethod
    def start(
        cls,
        app: App,
        *,
        port: int = 0,
        timeout: float = 20.0,
    ) -> BackgroundServer:
        import uvicorn

        from shiyi.interfaces.server.app import create_app
        from shiyi.interfaces.server.service import AgentService

        settings = with_address(app.settings, "127.0.0.1", port)
        _refuse_second_owner(settings)
        settings, token = _with_start_token(settings)
        sock = bind("127.0.0.1", port)
        settings = with_address(settings, None, int(sock.getsockname()[1]))
        service = AgentService(settings, app=app, owner_token=token)
        config = uvicorn.Config(create_app(service), log_level="warning", lifespan="on")
        server = uvicorn.Server(config)
        thread = threading.Thread(
            target=server.run, kwargs={"sockets": [sock]}, name="shiyi-api", daemon=True
        )
        thread.start()
        deadline = time.monotonic() + timeout
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                server.should_exit = True
                sock.close()
                raise StorageError("the background API did not start; see the log above")
            time.sleep(0.01)
        return cls(server, thread, service)

    def stop(self, timeout: float = 10.0) -> None:
        self._server.should_exit = True
        self._thread.join(timeout)
