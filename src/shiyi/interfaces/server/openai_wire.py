"""OpenAI's chat-completions wire format: the request shiyi accepts, the bodies and stream
chunks it answers with, and errors in OpenAI's ``{"error": {message, type, param, code}}``.

Only what a chat client needs is read from the request; sampling options (temperature,
max_tokens, ...) are accepted and left to shiyi's own model settings, as the agent, not the
caller, drives the model.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from shiyi.errors import OpenAIRequestError
from shiyi.events import RunStatus

Role = Literal["system", "developer", "user", "assistant", "tool", "function"]


def error_json(exc: OpenAIRequestError) -> dict[str, Any]:
    return error_body(exc.message, exc.type, exc.param, exc.openai_code)


def error_body(
    message: str, type: str, param: str | None = None, code: str | None = None
) -> dict[str, Any]:
    return {"error": {"message": message, "type": type, "param": param, "code": code}}


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="allow")

    role: Role
    content: str | list[dict[str, Any]] | None = None
    name: str | None = None

    def text(self, where: str, *, strict: bool = True) -> str:
        """The message's text.  A non-text part (an image...) of the new input is a 400
        naming where it was; in the history it becomes a marker, so one image sent earlier
        does not refuse every later turn of the chat."""
        if self.content is None or isinstance(self.content, str):
            return self.content or ""
        texts: list[str] = []
        for i, part in enumerate(self.content):
            if part.get("type") != "text" or not isinstance(part.get("text"), str):
                if not strict:
                    texts.append(f"[shared {str(part.get('type') or 'a part').replace('_', ' ')}]")
                    continue
                raise OpenAIRequestError(
                    400,
                    f"{where}.content[{i}] is a {part.get('type')!r} part; shiyi's agent "
                    "reads text parts only (type 'text').",
                    param=f"{where}.content",
                )
            texts.append(part["text"])
        return "\n".join(texts)


class StreamOptions(BaseModel):
    model_config = ConfigDict(extra="allow")

    include_usage: bool = False


class ChatRequest(BaseModel):
    model_config = ConfigDict(extra="allow")

    model: str = Field(min_length=1)
    messages: list[ChatMessage] = Field(min_length=1)
    stream: bool = False
    stream_options: StreamOptions | None = None
    user: str | None = None
    n: int | None = None
    tools: list[dict[str, Any]] | None = None
    functions: list[dict[str, Any]] | None = None


def parse_request(raw: bytes) -> ChatRequest:
    """The request, or a 400 naming the first field that is wrong and how."""
    try:
        data = json.loads(raw or b"null")
    except ValueError as exc:
        raise OpenAIRequestError(400, f"the request body is not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise OpenAIRequestError(
            400, "the request body must be a JSON object with model and messages"
        )
    try:
        request = ChatRequest.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        param = ".".join(str(part) for part in first.get("loc", ()))
        raise OpenAIRequestError(
            400, f"{param}: {first.get('msg', 'invalid')}", param=param
        ) from None
    if request.n not in (None, 1):
        raise OpenAIRequestError(
            400, "n must be 1: shiyi's agent gives one reply per run", param="n"
        )
    if request.tools or request.functions:
        raise OpenAIRequestError(
            400,
            "client-side tools are not supported: shiyi's agent runs its own tools "
            "(server.tools / server.profiles); send the request without `tools`.",
            param="tools" if request.tools else "functions",
        )
    if request.messages[-1].role != "user":
        raise OpenAIRequestError(
            400,
            f"the last message must be the user's new input (it is {request.messages[-1].role!r})",
            param="messages",
        )
    return request


FINISH: dict[str, str] = {"max_iterations": "length", "usage_limit": "length"}
"""finish_reason by run status; any other ending run is ``stop``."""


def finish_reason(status: RunStatus | None) -> str:
    return FINISH.get(status or "completed", "stop")


@dataclass(slots=True)
class Tally:
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def usage(self) -> dict[str, int]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.prompt_tokens + self.completion_tokens,
        }


@dataclass(slots=True)
class Completion:
    """One answer's identity: its id (the run's), model name and creation time."""

    id: str
    model: str
    created: int = 0

    def __post_init__(self) -> None:
        self.created = self.created or int(time.time())

    def body(self, text: str, reason: str, tally: Tally) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": "chat.completion",
            "created": self.created,
            "model": self.model,
            "system_fingerprint": None,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text, "refusal": None},
                    "logprobs": None,
                    "finish_reason": reason,
                }
            ],
            "usage": tally.usage(),
        }

    def chunk(
        self,
        delta: dict[str, Any],
        reason: str | None = None,
        usage: dict[str, int] | None = None,
        *,
        choices: bool = True,
    ) -> str:
        body: dict[str, Any] = {
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "system_fingerprint": None,
            "choices": (
                [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": reason}]
                if choices
                else []
            ),
        }
        if usage is not None:
            body["usage"] = usage
        return data_frame(body)


def data_frame(body: dict[str, Any]) -> str:
    return f"data: {json.dumps(body, ensure_ascii=False)}\n\n"


DONE_FRAME = "data: [DONE]\n\n"


def model_card(name: str, created: int, description: str = "") -> dict[str, Any]:
    card: dict[str, Any] = {"id": name, "object": "model", "created": created, "owned_by": "shiyi"}
    if description:
        card["description"] = description
    return card


OPENAI_PATHS = ("/v1/chat/completions", "/v1/models")


def guard_error(path: str, status: int, code: str, message: str) -> dict[str, Any] | None:
    """The auth guard's error in OpenAI's shape, for the OpenAI routes (else None)."""
    if not path.startswith(OPENAI_PATHS):
        return None
    kind = _GUARD_TYPES.get(status, "invalid_request_error")
    return error_body(message, kind, None, "invalid_api_key" if status == 401 else code)


_GUARD_TYPES = {401: "authentication_error", 403: "permission_error"}
