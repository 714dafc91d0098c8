"""``create_app(service)``: the FastAPI application of ``shiyi serve``."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Any

from fastapi import APIRouter, Depends, FastAPI, Query, Request, Response
from fastapi.responses import JSONResponse

from shiyi import __version__
from shiyi.api.errors import ErrorResponse
from shiyi.api.schemas import (
    Health,
    MessageIn,
    RunOut,
    RunResult,
    SessionCreate,
    SessionDetail,
    SessionList,
    SessionOut,
)
from shiyi.events import Event, TextDelta
from shiyi.interfaces.server.deps import get_service
from shiyi.interfaces.server.errors import install_error_handlers
from shiyi.interfaces.server.identity import Caller
from shiyi.interfaces.server.knowledge_routes import close_knowledge, install_knowledge
from shiyi.interfaces.server.mcp_route import install_mcp
from shiyi.interfaces.server.memory_page_routes import install_page
from shiyi.interfaces.server.memory_page_routes import router as memory_page_router
from shiyi.interfaces.server.memory_routes import router as memory_router
from shiyi.interfaces.server.openai_routes import install_openai
from shiyi.interfaces.server.script_routes import router as script_router
from shiyi.interfaces.server.security import install_security
from shiyi.interfaces.server.service import AgentService, RunInfo, final_status
from shiyi.interfaces.server.streaming import SSE_MEDIA_TYPE, EventStreamResponse, sse_frames
from shiyi.interfaces.server.wire import message_out, run_out, session_out

Service = Annotated[AgentService, Depends(get_service)]
_ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorResponse} for code in (400, 401, 404, 409, 413, 422)
}

router = APIRouter(responses=_ERRORS)


@router.post("/v1/sessions", status_code=201, response_model=SessionOut, tags=["sessions"])
async def create_session(
    service: Service, who: Caller, body: SessionCreate | None = None
) -> SessionOut:
    title = body.title if body is not None else ""
    session_id = service.create_session(who, title)
    return session_out(service.log.get_session(session_id, owner=who.owner))


@router.get("/v1/sessions", response_model=SessionList, tags=["sessions"])
async def list_sessions(
    service: Service, who: Caller, limit: Annotated[int, Query(ge=1, le=500)] = 50
) -> SessionList:
    found = service.log.list_sessions(limit, owner=who.owner)
    return SessionList(sessions=[session_out(s) for s in found])


@router.get("/v1/sessions/{session_id}", response_model=SessionDetail, tags=["sessions"])
async def get_session(service: Service, who: Caller, session_id: str) -> SessionDetail:
    info = session_out(service.log.get_session(session_id, owner=who.owner))
    return SessionDetail(
        **info.model_dump(),
        messages=[message_out(m) for m in service.log.messages(session_id)],
        runs=[run_out(r) for r in service.log.runs(session_id)],
    )


@router.delete(
    "/v1/sessions/{session_id}", status_code=204, response_class=Response, tags=["sessions"]
)
async def delete_session(service: Service, who: Caller, session_id: str) -> Response:
    service.delete_session(session_id, who)
    return Response(status_code=204)


_STREAM_DOC: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "The run's events as server-sent events, or all of them as JSON.",
        "content": {
            SSE_MEDIA_TYPE: {"schema": {"type": "string"}},
            "application/json": {"schema": {"$ref": "#/components/schemas/RunResult"}},
        },
    }
}


@router.post(
    "/v1/sessions/{session_id}/messages",
    response_model=None,
    responses=_STREAM_DOC,
    tags=["runs"],
    openapi_extra={"x-streaming": True},
)
async def send_message(
    request: Request,
    service: Service,
    who: Caller,
    session_id: str,
    body: MessageIn,
    stream: bool = True,
) -> Response:
    """Send a message. The first event, ``routed``, says where it went: into the session's
    active run (``join``), a new run (``new``, after the active one ends), or a new run
    seeded with memory about the ended run ``run_id`` names (``continue``)."""
    service.require_session(session_id, who)
    service.check_run_id(session_id, body.run_id, who)
    events = service.send(session_id, body.text, who, body.run_id)
    if stream and not _wants_json(request):
        return EventStreamResponse(sse_frames(events))
    return JSONResponse((await _collect(events)).model_dump())


def _wants_json(request: Request) -> bool:
    accept = request.headers.get("accept", "")
    return "application/json" in accept and SSE_MEDIA_TYPE not in accept


async def _collect(events: AsyncIterator[Event]) -> RunResult:
    seen = [event async for event in events]
    text = "".join(e.text for e in seen if isinstance(e, TextDelta))
    return RunResult(
        events=[e.model_dump(mode="json") for e in seen], status=final_status(seen), text=text
    )


@router.get("/v1/runs/{run_id}", response_model=RunOut, tags=["runs"])
async def get_run(service: Service, who: Caller, run_id: str) -> RunOut:
    return _run_out(service.run(run_id, who))


@router.post("/v1/runs/{run_id}/cancel", response_model=RunOut, tags=["runs"])
async def cancel_run(service: Service, who: Caller, run_id: str) -> RunOut:
    return _run_out(service.cancel(run_id, who))


def _run_out(info: RunInfo) -> RunOut:
    return RunOut(
        run_id=info.run_id,
        session_id=info.session_id,
        status=info.status,
        active=info.active,
        goal=info.goal,
        iterations=info.iterations,
        detail=info.detail,
    )


async def healthz() -> Health:
    return Health(version=__version__)


def create_app(service: AgentService) -> FastAPI:
    """The API over ``service``; refuses (ConfigError) to expose itself without a token."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        service.start()
        try:
            async with mcp_running():
                yield
        finally:
            close_knowledge(app)
            service.close()

    app = FastAPI(title="shiyi", version=__version__, lifespan=lifespan)
    app.state.service = service
    install_security(app, service.settings.server, service.identities)
    install_error_handlers(app)
    app.add_api_route("/healthz", healthz, methods=["GET"], response_model=Health, tags=["meta"])
    app.include_router(router)
    app.include_router(memory_page_router, responses=_ERRORS)  # before /v1/memory/{memory_id}
    app.include_router(memory_router, responses=_ERRORS)
    app.include_router(script_router, responses=_ERRORS)
    install_knowledge(app, service)
    install_openai(app)
    mcp_running = install_mcp(app, service)  # /mcp: the memory tools, as the API's caller
    install_page(app)
    return app
