"""FastAPI dependencies shared by the routers."""

from __future__ import annotations

from fastapi import Request

from shiyi.interfaces.server.service import AgentService


def get_service(request: Request) -> AgentService:
    service = request.app.state.service
    assert isinstance(service, AgentService)
    return service
