"""``shiyi serve``: check the exposure, open the service and run uvicorn."""

from __future__ import annotations

from shiyi.config.settings import Settings
from shiyi.interfaces.server.security import check_exposure


def with_address(settings: Settings, host: str | None, port: int | None) -> Settings:
    update = {k: v for k, v in {"host": host, "port": port}.items() if v is not None}
    if not update:
        return settings
    return settings.model_copy(update={"server": settings.server.model_copy(update=update)})


def serve(settings: Settings, *, host: str | None = None, port: int | None = None) -> int:
    """Run until interrupted; a refused exposure raises ConfigError before anything opens."""
    import uvicorn

    from shiyi.interfaces.server.app import create_app
    from shiyi.interfaces.server.service import AgentService

    settings = with_address(settings, host, port)
    check_exposure(settings.server)
    service = AgentService(settings)
    try:
        app = create_app(service)
        uvicorn.run(
            app,
            host=settings.server.host,
            port=settings.server.port,
            log_level="info",
            timeout_graceful_shutdown=5,
        )
    finally:
        service.close()
    return 0
