"""Chat models behind any OpenAI-compatible endpoint (OpenAI, DeepSeek, Ollama, vLLM...).

The ``openai`` SDK is imported lazily: importing this module must stay cheap because the
CLI imports it just to build the model.  The SDK's own retries are disabled; retries are
done here so a Retry-After header is honoured and a reply that already started streaming
is never replayed (which would duplicate text the user has seen).
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import AsyncGenerator, AsyncIterator, Mapping, Sequence
from contextlib import aclosing
from http import HTTPStatus
from typing import TYPE_CHECKING, Any

from shiyi.errors import ContextTooLong, EndpointBusy, ModelError, ModelUnavailable
from shiyi.llm.gate import default_limit, gate_for
from shiyi.llm.openai.chunks import ChunkDecoder, EstimatedUsage, _CutOff, _EmptyReply
from shiyi.llm.openai.pricing import cost_of
from shiyi.llm.openai.stream import (
    StreamState,
    _StreamErrorEvent,
    _StreamGarbled,
    _StreamIdle,
    data_events,
)
from shiyi.llm.retry import RetryPolicy, Sleep, retry_after_seconds
from shiyi.llm.tokens import count_text, request_tokens
from shiyi.llm.types import Message, StreamChunk, ToolChoice, ToolSpec

if TYPE_CHECKING:
    from openai import AsyncOpenAI

    from shiyi.config.settings import ModelPrice, ModelSettings

# Ollama, vLLM and llama.cpp servers ignore the key, but the SDK insists on one.
_NO_KEY = "not-needed"
# Request timeout, conflict and rate limit are worth retrying; other 4xx will fail again.
_TRANSIENT_STATUS = frozenset({408, 409, 429})
_NAMED_CHOICES = frozenset({"auto", "none", "required"})
log = logging.getLogger(__name__)
_TIMED_OUT = "request timed out"
# How OpenAI ("context_length_exceeded", "maximum context length"), vLLM, llama.cpp ("exceeds
# the available context size") and Ollama say a prompt does not fit.
_CONTEXT_OVERFLOW = re.compile(
    r"context_length_exceeded|maximum context length|context (?:size|window|length)"
    r"|too many tokens|prompt is too long",
    re.IGNORECASE,
)


class _AttemptFailed(Exception):
    """One attempt failed; carries what the retry loop and the final message need."""

    def __init__(
        self,
        detail: str,
        *,
        retryable: bool,
        status: int | None = None,
        retry_after: float | None = None,
        timed_out: bool = False,
        empty: bool = False,
    ) -> None:
        super().__init__(detail)
        self.detail = detail
        self.retryable = retryable
        self.status = status
        self.retry_after = retry_after
        self.timed_out = timed_out
        self.empty = empty


class OpenAICompatModel:
    """A :class:`~shiyi.llm.protocol.ChatModel` speaking the OpenAI chat completions API."""

    def __init__(
        self,
        settings: ModelSettings,
        prices: Mapping[str, ModelPrice] | None = None,
        *,
        sleep: Sleep = asyncio.sleep,
        role: str | None = None,
        background: bool = False,
    ) -> None:
        """``background``: this model does work beside the conversation (extraction,
        summaries): its requests give way to runs on the same endpoint (see
        :mod:`shiyi.llm.gate`) and fail with :class:`~shiyi.errors.EndpointBusy` instead."""
        self._settings = settings
        self._background = background
        self._prices: Mapping[str, ModelPrice] = prices or {}
        self._policy = RetryPolicy.from_settings(settings, sleep=sleep)
        self._role = role
        self._endpoint = (settings.base_url or "https://api.openai.com/v1").rstrip("/")
        # An httpx client is bound to the event loop it first ran on; the CLI may run
        # several loops over one model's lifetime, so keep one client per loop.
        self._client: tuple[asyncio.AbstractEventLoop, AsyncOpenAI] | None = None
        self._stream_tools = settings.stream_tools
        self._force_choice = settings.force_tool_choice
        self._gate = gate_for(self._endpoint)
        self._limit = settings.max_concurrency or default_limit(self._endpoint)
        """None until the endpoint shows whether it can stream replies offered tools."""

    @property
    def model_name(self) -> str:
        return self._settings.model

    @property
    def endpoint(self) -> str:
        return self._endpoint

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client[1].close()
            self._client = None

    async def stream(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSpec] = (),
        tool_choice: ToolChoice = "auto",
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> AsyncIterator[StreamChunk]:
        body = self._request_body(messages, tools, tool_choice, temperature, max_tokens)
        estimate = EstimatedUsage(lambda: request_tokens(messages, tools), count_text)
        await self._enter_gate()
        try:
            # The clock starts once the slot is ours: waiting behind another conversation
            # on the same endpoint is not this server's slowness.
            ends = asyncio.get_running_loop().time() + self._settings.request_deadline
            replies = self._with_retries(body, tools, estimate)
            async with aclosing(replies) as chunks:
                async for chunk in self._by_deadline(chunks, ends):
                    if self._background and self._gate.must_yield(self._limit):
                        raise EndpointBusy(
                            f"{self._endpoint}: stopped to give its slot to a conversation"
                        )
                    yield chunk
        finally:
            self._gate.leave()

    async def _by_deadline(
        self, chunks: AsyncIterator[StreamChunk], ends: float
    ) -> AsyncIterator[StreamChunk]:
        """``chunks`` until the request's deadline (``ends``, on the loop's clock): a server
        trickling a token every few seconds keeps every read (``timeout``) and the idle
        check alive, forever."""
        while True:
            try:
                async with asyncio.timeout_at(ends):
                    chunk = await anext(chunks)
            except StopAsyncIteration:
                return
            except TimeoutError:
                raise self._deadline_error() from None
            yield chunk

    def _deadline_error(self) -> ModelError:
        seconds = self._settings.request_deadline
        setting = "deadline" if self._settings.deadline is not None else "deadline (5 x timeout)"
        return ModelError(
            f"model endpoint {self._endpoint} did not finish its reply within {seconds:g}s "
            f"(models.{self._role or '<role>'}.{setting}): the server is too slow or stuck "
            "trickling data; raise that setting for a slow server",
            retryable=False,
        )

    async def _enter_gate(self) -> None:
        if not self._background:
            await self._gate.enter_conversation(self._limit)
        elif not self._gate.try_enter_background(self._limit):
            raise EndpointBusy(
                f"{self._endpoint} is serving a conversation; background work waits its turn"
            )

    async def _with_retries(
        self, body: dict[str, Any], tools: Sequence[ToolSpec], estimate: EstimatedUsage
    ) -> AsyncGenerator[StreamChunk, None]:
        attempts = 0
        while True:
            attempts += 1
            delivered = False
            streamed = not tools or self._stream_tools is not False
            try:
                reply = self._attempt(body, estimate) if streamed else self._whole(body, estimate)
                async with aclosing(reply) as chunks:
                    async for chunk in chunks:
                        delivered = True
                        yield chunk
                return
            except _AttemptFailed as failure:
                if delivered:
                    raise self._broken_stream_error(failure) from failure.__cause__
                if _forced(body) and self._force_choice is None and _refused_choice(failure):
                    self._stop_forcing(body, failure)
                    body = {**body, "tool_choice": "auto"}
                    attempts -= 1  # the server's limit, not a failed attempt
                    continue
                if streamed and tools and self._stream_tools is None and _refuses(failure):
                    self._stop_streaming_tools(failure)
                    attempts -= 1  # the server's limit, not a failed attempt
                    continue
                if not failure.retryable or not self._policy.can_retry(attempts):
                    raise self._final_error(failure, attempts) from failure.__cause__
                await self._policy.wait(attempts, failure.retry_after)

    def _stop_streaming_tools(self, failure: _AttemptFailed) -> None:
        """From now on, ask this endpoint for whole replies whenever tools are offered."""
        self._stream_tools = False
        log.warning(
            "%s cannot stream replies that may call tools (%s); asking for whole replies to "
            "tool turns from now on (set models.%s.stream_tools to decide yourself)",
            self._endpoint,
            failure.detail,
            self._role or "<role>",
        )

    def _stop_forcing(self, body: dict[str, Any], failure: _AttemptFailed) -> None:
        """From now on, send tool_choice "auto" where a call would be forced."""
        self._force_choice = False
        log.warning(
            "%s refused a forced tool_choice (%s) with: %s; sending tool_choice 'auto' from "
            "now on (set models.%s.force_tool_choice to decide yourself)",
            self._endpoint,
            json.dumps(body.get("tool_choice")),
            failure.detail,
            self._role or "<role>",
        )

    # --- request ---------------------------------------------------------------------

    def _request_body(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        tool_choice: ToolChoice,
        temperature: float | None,
        max_tokens: int | None,
    ) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model_name,
            "messages": [m.to_openai(include_reasoning=self._send_reasoning(m)) for m in messages],
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if tools:
            # Servers reject tool_choice without tools, so both are sent or neither.
            body["tools"] = [spec.to_openai() for spec in tools]
            forcing = tool_choice not in ("auto", "none")
            unforced = forcing and self._force_choice is False
            body["tool_choice"] = _tool_choice("auto" if unforced else tool_choice)
        temperature = self._settings.temperature if temperature is None else temperature
        if temperature is not None:
            body["temperature"] = temperature
        max_tokens = self._settings.max_tokens if max_tokens is None else max_tokens
        if max_tokens is not None:
            body["max_tokens"] = max_tokens
        return body

    def _send_reasoning(self, message: Message) -> bool:
        """Whether ``message.reasoning`` goes back to the server as ``reasoning_content``.

        ``pass_reasoning_back`` forces it on or off.  Auto: DeepSeek's reasoner rejects
        ``reasoning_content`` on plain assistant turns (400), yet its thinking mode requires
        it on assistant turns that called tools; other providers do not know the field.  So
        it is sent only for DeepSeek models, only on assistant turns with tool calls.
        """
        forced = self._settings.pass_reasoning_back
        if forced is not None:
            return forced
        return bool(message.tool_calls) and "deepseek" in self.model_name.lower()

    def _get_client(self) -> AsyncOpenAI:
        loop = asyncio.get_running_loop()
        if self._client is not None and self._client[0] is loop:
            return self._client[1]
        import openai

        key = self._settings.api_key
        client = openai.AsyncOpenAI(
            api_key=key.get_secret_value() if key is not None else _NO_KEY,
            base_url=self._endpoint,
            timeout=self._settings.timeout,
            max_retries=0,
        )
        self._client = (loop, client)
        return client

    # --- one attempt -----------------------------------------------------------------

    async def _attempt(
        self, body: dict[str, Any], estimate: EstimatedUsage
    ) -> AsyncGenerator[StreamChunk, None]:
        """One streamed request, read line by line (see :mod:`shiyi.llm.openai.stream`)."""
        from openai.types.chat import ChatCompletionChunk

        openai = _sdk()
        decoder = ChunkDecoder(self._cost, estimate)
        state = StreamState()
        try:
            opened = self._get_client().chat.completions.with_streaming_response.create(**body)
            async with opened as response:
                lines = data_events(response.iter_lines(), state, idle=self._settings.timeout)
                async for payload in lines:
                    for chunk in decoder.feed(ChatCompletionChunk.model_validate(payload)):
                        yield chunk
        except _AttemptFailed:
            raise
        except _StreamIdle as exc:
            raise _AttemptFailed(f"the stream sent {exc}", retryable=True, timed_out=True) from exc
        except _StreamErrorEvent as exc:
            raise _AttemptFailed(f"server sent an error event: {exc}", retryable=True) from exc
        except (_StreamGarbled, ValueError) as exc:  # pydantic's ValidationError is a ValueError
            raise _AttemptFailed(f"malformed stream: {exc}", retryable=True) from exc
        except openai.OpenAIError as exc:
            raise _classify(exc) from exc
        except Exception as exc:
            # Transport errors raised while reading the body are not wrapped by the SDK;
            # anything failing here is the server's or the network's.
            raise _classify(exc) from exc
        for chunk in _finished(decoder, done=state.done, pings=state.pings):
            yield chunk

    async def _whole(
        self, body: dict[str, Any], estimate: EstimatedUsage
    ) -> AsyncGenerator[StreamChunk, None]:
        """One request for the whole reply at once, yielded as chunks."""
        from openai.types.chat import ChatCompletion

        openai = _sdk()
        whole = {k: v for k, v in body.items() if k not in ("stream", "stream_options")}
        decoder = ChunkDecoder(self._cost, estimate)
        try:
            completion = await self._get_client().chat.completions.create(**whole)
        except openai.OpenAIError as exc:
            raise _classify(exc) from exc
        if not isinstance(completion, ChatCompletion):
            # The SDK hands back the raw text of a body that is not JSON (an empty one).
            raise _AttemptFailed(_not_a_completion(completion), retryable=True, empty=True)
        for chunk in decoder.feed_completion(completion):
            yield chunk
        for chunk in _finished(decoder, done=True, pings=0):
            yield chunk

    def _cost(self, prompt: int, completion: int, reported_model: str) -> float | None:
        cost = cost_of(prompt, completion, self.model_name, self._prices)
        if cost is None and reported_model:
            # Aliases (e.g. "latest" names) are priced under the model the server reports.
            cost = cost_of(prompt, completion, reported_model, self._prices)
        return cost

    # --- errors ----------------------------------------------------------------------

    def _final_error(self, failure: _AttemptFailed, attempts: int) -> ModelError:
        where = f"model endpoint {self._endpoint}"
        tries = f"after {attempts} attempt{'' if attempts == 1 else 's'}"
        status = failure.status
        if status in (401, 403):
            return ModelUnavailable(
                f"{where} refused the request with {_status_text(status)}: {failure.detail}. "
                f"Check the API key: {self._key_hint()}.",
                status=status,
            )
        if status is not None and not failure.retryable:
            hint = ""
            if status == 404:
                role = self._role or "<role>"
                hint = f" (check models.{role}.model {self.model_name!r} and base_url)"
            rejected = f"{where} rejected the request with {_status_text(status)}"
            if status == 400 and _CONTEXT_OVERFLOW.search(failure.detail):
                return ContextTooLong(
                    f"{rejected}: {failure.detail}. Send a shorter message or start a new session."
                )
            return ModelError(f"{rejected}: {failure.detail}{hint}", status=status)
        if status is not None:
            return ModelError(
                f"{where} answered {_status_text(status)} {tries}: {failure.detail}",
                retryable=True,
                status=status,
            )
        if failure.empty:
            return ModelError(f"{where} sent no reply {tries}: {failure.detail}", retryable=True)
        if failure.timed_out:
            why = "" if failure.detail == _TIMED_OUT else f": {failure.detail}"
            return ModelError(
                f"{where} did not answer within {self._settings.timeout:g}s {tries}{why}",
                retryable=True,
            )
        if not failure.retryable:
            return ModelError(f"{where} failed: {failure.detail}")
        return ModelError(f"{where} could not be reached {tries}: {failure.detail}", retryable=True)

    def _broken_stream_error(self, failure: _AttemptFailed) -> ModelError:
        return ModelError(
            f"model endpoint {self._endpoint} broke off its reply mid-stream: {failure.detail} "
            "(not retried automatically: part of the reply was already delivered)",
            retryable=True,
            status=failure.status,
        )

    def _key_hint(self) -> str:
        role = self._role or "<role>"
        hint = f"set models.{role}.api_key in shiyi.yaml or SHIYI_MODELS__{role.upper()}__API_KEY"
        if self._settings.api_key_env:
            hint = f"export {self._settings.api_key_env}=... or {hint}"
        if self._settings.api_key is None:
            hint = f"no API key is configured; {hint}"
        return hint


def _sdk() -> Any:
    try:
        import openai
    except ImportError as exc:  # a hard dependency, but a broken venv deserves a fix hint
        raise ModelUnavailable(
            f"the openai package is needed for provider openai_compat: {exc}; "
            "install it with: pip install 'openai>=1.40'"
        ) from exc
    return openai


def _finished(decoder: ChunkDecoder, *, done: bool, pings: int) -> list[StreamChunk]:
    try:
        return decoder.finish(done=done)
    except _EmptyReply as exc:
        waited = f" after {pings} keep-alive pings" if pings else ""
        raise _AttemptFailed(f"{exc}{waited}", retryable=True, empty=True) from exc
    except _CutOff as exc:
        raise _AttemptFailed(str(exc), retryable=True) from exc


def _not_a_completion(body: object) -> str:
    text = body if isinstance(body, str) else repr(body)
    if not text.strip():
        return "the server answered with an empty body instead of a chat completion"
    return f"the server answered with something other than a chat completion: {text[:200]!r}"


def _refuses(failure: _AttemptFailed) -> bool:
    """Whether a streamed tool turn failed because the server cannot stream tool calls:
    an empty stream (llama-cpp-python) or an error saying so."""
    detail = failure.detail.lower()
    said_so = failure.status is not None and "stream" in detail and "tool" in detail
    return failure.empty or said_so


_CHOICE_REFUSALS = (400, 422, 500, 501)
"""Statuses a server answered a forced tool_choice with when it could not take one
(llama-cpp-python's server: 500)."""


def _forced(body: dict[str, Any]) -> bool:
    return body.get("tool_choice", "auto") not in ("auto", "none")


def _refused_choice(failure: _AttemptFailed) -> bool:
    return failure.status in _CHOICE_REFUSALS


def _tool_choice(choice: ToolChoice) -> str | dict[str, Any]:
    if choice in _NAMED_CHOICES:
        return choice
    return {"type": "function", "function": {"name": choice}}


def _classify(exc: Exception) -> _AttemptFailed:
    import openai

    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        return _AttemptFailed(
            _server_message(exc),
            retryable=status in _TRANSIENT_STATUS or status >= 500,
            status=status,
            retry_after=retry_after_seconds(exc.response.headers),
        )
    if isinstance(exc, openai.APITimeoutError):
        return _AttemptFailed(_TIMED_OUT, retryable=True, timed_out=True)
    if isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__
        detail = f"{exc.message} ({type(cause).__name__}: {cause})" if cause else exc.message
        return _AttemptFailed(detail, retryable=True)
    if isinstance(exc, openai.APIError):
        # An ``{"error": ...}`` event inside the stream: the server gave up mid-reply.
        return _AttemptFailed(f"server sent an error event: {exc.message}", retryable=True)
    if isinstance(exc, openai.OpenAIError):
        return _AttemptFailed(str(exc), retryable=False)
    if any(cls.__name__ == "TimeoutException" for cls in type(exc).__mro__):
        # A read timeout in the body, not wrapped by the SDK (whose HTTP library is httpx,
        # or a renamed copy of it: matched by name).
        return _AttemptFailed(_TIMED_OUT, retryable=True, timed_out=True)
    return _AttemptFailed(f"{type(exc).__name__}: {exc}", retryable=True)


def _server_message(exc: Any) -> str:
    """The human part of an error body (``{"error": {"message": ...}}``), else the raw text."""
    body = exc.body
    if isinstance(body, Mapping):
        message = body.get("message") or body.get("error")
        if isinstance(message, str) and message:
            return message
    if isinstance(body, str) and body:
        return body[:500]
    return str(exc.message)


def _status_text(status: int) -> str:
    try:
        return f"{status} {HTTPStatus(status).phrase}"
    except ValueError:
        return str(status)
