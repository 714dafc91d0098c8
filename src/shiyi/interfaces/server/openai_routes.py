"""``POST /v1/chat/completions`` and ``GET /v1/models``: shiyi's agent behind OpenAI's chat API.

Each request is one run of the agent (memory, tools, context engineering) in the session
the conversation maps to (:mod:`~shiyi.interfaces.server.openai_sessions`); the model name
picks an agent profile.  The agent's own tool calls stay inside the run: the reply's content
is its words only, the calls shown as ``reasoning_content`` notes in a stream.  Same bearer
tokens and scopes as the rest of the API; errors in OpenAI's shape.  Left out of shiyi's
OpenAPI document: OpenAI's own specification describes these routes.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

from fastapi import APIRouter, FastAPI, Request, Response
from fastapi.responses import JSONResponse

from shiyi.api.errors import wire_error_for
from shiyi.errors import ContextTooLong, OpenAIRequestError, ShiyiError
from shiyi.events import (
    ErrorEvent,
    Event,
    ReasoningDelta,
    RunEnd,
    RunStatus,
    TextDelta,
    ToolCallEvent,
    UsageEvent,
)
from shiyi.interfaces.server.deps import get_service
from shiyi.interfaces.server.identity import current_identity
from shiyi.interfaces.server.openai_sessions import SESSION_HEADER, Conversation, SessionMapper
from shiyi.interfaces.server.openai_wire import (
    DONE_FRAME,
    Completion,
    Tally,
    data_frame,
    error_json,
    finish_reason,
    model_card,
    parse_request,
)
from shiyi.interfaces.server.service import AgentService
from shiyi.interfaces.server.streaming import EventStreamResponse
from shiyi.sessions.log import new_id

DEFAULT_MODEL = "shiyi"
_STARTED = int(time.time())

router = APIRouter(include_in_schema=False)


@dataclass(frozen=True, slots=True)
class Profile:
    name: str
    tools: tuple[str, ...] | None
    description: str


def profiles(service: AgentService) -> dict[str, Profile]:
    """The model names served: ``shiyi`` (server.tools) and each of server.profiles."""
    found = {DEFAULT_MODEL: Profile(DEFAULT_MODEL, None, "shiyi's agent with server.tools")}
    for name, profile in service.settings.server.profiles.items():
        tools = tuple(profile.tools) if profile.tools is not None else None
        found[name] = Profile(name, tools, profile.description)
    return found


def _profile(service: AgentService, model: str) -> Profile:
    found = profiles(service)
    if model not in found:
        raise OpenAIRequestError(
            404,
            f"the model {model!r} does not exist; shiyi serves the agent profiles "
            f"{', '.join(sorted(found))} (GET /v1/models; more in server.profiles)",
            param="model",
            code="model_not_found",
        )
    return found[model]


@router.get("/v1/models")
async def list_models(request: Request) -> JSONResponse:
    service = await get_service(request)
    cards = [model_card(p.name, _STARTED, p.description) for p in profiles(service).values()]
    return JSONResponse({"object": "list", "data": cards})


@router.get("/v1/models/{model}")
async def get_model(request: Request, model: str) -> JSONResponse:
    service = await get_service(request)
    profile = _profile(service, model)
    return JSONResponse(model_card(profile.name, _STARTED, profile.description))


@router.post("/v1/chat/completions")
async def chat_completions(request: Request) -> Response:
    service = await get_service(request)
    who = await current_identity(request)
    chat = parse_request(await request.body())
    profile = _profile(service, chat.model)
    conversation = Conversation.of(chat)
    mapper = SessionMapper(service)
    try:
        session_id = mapper.resolve(
            who, chat.model, conversation, request.headers.get(SESSION_HEADER)
        )
        run_id = new_id("run")  # a run of its own: a chat turn never joins another
        events = service.send(session_id, conversation.input, who, run_id, profile.tools)
        await anext(events)  # routed: a refusal (an active run...) is still a status code
    except OpenAIRequestError:
        raise
    except ShiyiError as exc:
        raise _openai_error(exc) from None

    def answered(reply: str) -> None:
        mapper.answered(who, chat.model, conversation, session_id, reply)

    completion = Completion(id=f"chatcmpl-{run_id}", model=chat.model)
    headers = {"X-Shiyi-Session": session_id, "X-Shiyi-Run": run_id}
    if chat.stream:
        usage = chat.stream_options is not None and chat.stream_options.include_usage
        frames = _stream(events, completion, include_usage=usage, answered=answered)
        response = EventStreamResponse(frames)
        response.headers.update(headers)
        return response
    outcome = await _collect(events)
    if outcome.status == "failed":
        raise _run_failed(outcome)
    answered(outcome.text)
    body = completion.body(outcome.text, finish_reason(outcome.status), outcome.tally)
    return JSONResponse(body, headers=headers)


@dataclass(slots=True)
class Outcome:
    text: str = ""
    status: RunStatus | None = None
    error: ErrorEvent | None = None
    tally: Tally = field(default_factory=Tally)

    def see(self, event: Event) -> None:
        if isinstance(event, TextDelta):
            self.text += event.text
        elif isinstance(event, UsageEvent):
            self.tally.prompt_tokens += event.prompt_tokens
            self.tally.completion_tokens += event.completion_tokens
        elif isinstance(event, ErrorEvent):
            self.error = event
        elif isinstance(event, RunEnd):
            self.status = event.status


async def _collect(events: AsyncIterator[Event]) -> Outcome:
    outcome = Outcome()
    async for event in events:
        outcome.see(event)
    return outcome


async def _stream(
    events: AsyncIterator[Event],
    completion: Completion,
    *,
    include_usage: bool,
    answered: Callable[[str], None],
) -> AsyncIterator[str]:
    outcome = Outcome()
    try:
        yield completion.chunk({"role": "assistant", "content": ""})
        async for event in events:
            outcome.see(event)
            if isinstance(event, TextDelta) and event.text:
                yield completion.chunk({"content": event.text})
            elif isinstance(event, ReasoningDelta) and event.text:
                yield completion.chunk({"reasoning_content": event.text})
            elif isinstance(event, ToolCallEvent):
                yield completion.chunk({"reasoning_content": f"\n[shiyi ran {event.name}]\n"})
    finally:
        aclose = getattr(events, "aclose", None)
        if aclose is not None:
            await aclose()
    if outcome.status == "failed":
        yield data_frame(error_json(_run_failed(outcome)))
        yield DONE_FRAME
        return
    answered(outcome.text)
    yield completion.chunk({}, finish_reason(outcome.status))
    if include_usage:
        yield completion.chunk({}, usage=outcome.tally.usage(), choices=False)
    yield DONE_FRAME


def _run_failed(outcome: Outcome) -> OpenAIRequestError:
    """A run that failed: 503 when its error may pass (the model busy, unreachable)."""
    error = outcome.error
    message = error.message if error is not None else "the agent's run failed"
    if error is not None and error.code == ContextTooLong.code:
        # the caller's to fix, as OpenAI answers it: a 500 made the SDK send it twice more
        return OpenAIRequestError(
            400, message, type="invalid_request_error", code=error.code, param="messages"
        )
    retryable = error is not None and error.retryable
    return OpenAIRequestError(
        503 if retryable else 500,
        f"shiyi's agent could not answer: {message}",
        type="server_error",
        code="model_unavailable" if retryable else "run_failed",
    )


_TYPES = {401: "authentication_error", 404: "invalid_request_error", 409: "conflict_error"}


def _openai_error(exc: ShiyiError) -> OpenAIRequestError:
    row = wire_error_for(exc)
    kind = _TYPES.get(row.status, "server_error" if row.status >= 500 else "invalid_request_error")
    return OpenAIRequestError(row.status, str(exc), type=kind, code=row.code)


async def _openai_error_response(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, OpenAIRequestError)
    return JSONResponse(error_json(exc), status_code=exc.status)


def install_openai(app: FastAPI) -> None:
    app.include_router(router)
    app.add_exception_handler(OpenAIRequestError, _openai_error_response)
