"""FastAPI dependencies shared by the routers."""

from __future__ import annotations

from fastapi import Request

from shiyi.interfaces.server.service import AgentService


async def get_service(request: Request) -> AgentService:
    """Async on purpose: FastAPI runs a plain-def dependency in a worker thread, which cost
    every request a thread hand-off (first event p95 at 50 sessions: 0.8 s)."""
    service = request.app.state.service
    assert isinstance(service, AgentService)
    return service
