"""The script and wire format of the fake OpenAI server (see :mod:`tests.support.fake_openai`).

Steps are :class:`FakeReply` or :class:`FakeError`; :func:`stream_events` and
:func:`completion_json` turn a reply into exactly what a real OpenAI-compatible server sends
(``chat.completion.chunk`` events, or one ``chat.completion`` object).
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeAlias

# --- the script ------------------------------------------------------------------------


@dataclass(frozen=True)
class FakeToolCall:
    """A tool call; its argument JSON is sent split across ``pieces`` chunks."""

    name: str
    arguments: Mapping[str, Any] | str = field(default_factory=dict)
    id: str | None = None
    pieces: int = 3

    def raw_arguments(self) -> str:
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(dict(self.arguments), ensure_ascii=False)


@dataclass(frozen=True)
class FakeReply:
    """A successful reply. ``text``/``reasoning`` as one string (split every ``chunk_size``
    characters) or as the exact list of pieces to stream."""

    text: str | Sequence[str] = ""
    reasoning: str | Sequence[str] = ""
    tool_calls: Sequence[FakeToolCall] = ()
    usage: tuple[int, int] | None = (12, 7)
    finish_reason: str | None = None
    model: str | None = None
    chunk_size: int = 4
    delay: float = 0.0
    """Seconds to sleep before each streamed event (with ``chunk_size=1``: a server that
    trickles its reply a token at a time, each read well within any read timeout)."""
    break_after: int | None = None
    """Drop the connection after this many events (a mid-stream network failure)."""
    pings: int = 0
    """Keep-alive comments (``: ping``) sent before the first event, ``delay`` apart."""
    finish: bool = True
    """Send a finish reason (some local servers never do)."""
    done: bool = True
    """End the stream with ``data: [DONE]``."""
    interrupted: bool = False
    """Stream only the role chunk (llama-cpp-python's reply to a request another one
    interrupted)."""
    empty: bool = False
    """Answer 200 and close without a single event (llama-cpp-python, asked to stream a
    reply that may call tools); asked for a whole reply, answer 200 with an empty body."""


@dataclass(frozen=True)
class FakeError:
    """An HTTP error answer in OpenAI's ``{"error": {...}}`` shape."""

    status: int
    message: str = "fake error"
    type: str = "server_error"
    retry_after: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)


FakeStep: TypeAlias = FakeReply | FakeError


def step_from_json(data: Mapping[str, Any]) -> FakeStep:
    if "error" in data:
        err = data["error"]
        retry_after = err.get("retry_after")
        return FakeError(
            status=int(err.get("status", 500)),
            message=str(err.get("message", "fake error")),
            type=str(err.get("type", "server_error")),
            retry_after=None if retry_after is None else str(retry_after),
        )
    usage = data.get("usage", (12, 7))
    return FakeReply(
        text=data.get("text", ""),
        reasoning=data.get("reasoning", ""),
        tool_calls=tuple(
            FakeToolCall(c["name"], c.get("arguments", {}), c.get("id"))
            for c in data.get("tool_calls", ())
        ),
        usage=None if usage is None else (int(usage[0]), int(usage[1])),
        finish_reason=data.get("finish_reason"),
        delay=float(data.get("delay", 0.0)),
        break_after=data.get("break_after"),
    )


def load_script(path: Path) -> list[FakeStep]:
    return [step_from_json(step) for step in json.loads(path.read_text(encoding="utf-8"))]


# --- wire format -----------------------------------------------------------------------


def _pieces(value: str | Sequence[str], size: int) -> list[str]:
    if not isinstance(value, str):
        return list(value)
    size = max(1, size)
    return [value[i : i + size] for i in range(0, len(value), size)]


def _split(text: str, parts: int) -> list[str]:
    size = max(1, -(-len(text) // max(1, parts)))
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def _call_id(reply_no: int, index: int, call: FakeToolCall) -> str:
    return call.id or f"call_{reply_no}_{index}"


def _finish_reason(reply: FakeReply) -> str:
    return reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop")


def _usage(reply: FakeReply) -> dict[str, int] | None:
    if reply.usage is None:
        return None
    prompt, completion = reply.usage
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def stream_events(
    reply: FakeReply, *, model: str, reply_no: int = 1, include_usage: bool = True
) -> list[dict[str, Any]]:
    """The ``chat.completion.chunk`` objects a real server would stream for ``reply``."""
    base = {
        "id": f"chatcmpl-fake-{reply_no}",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": reply.model or model,
        "system_fingerprint": "fp_fake",
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return {**base, "choices": [choice]}

    events = [chunk({"role": "assistant", "content": ""})]
    events += [
        chunk({"content": None, "reasoning_content": piece})
        for piece in _pieces(reply.reasoning, reply.chunk_size)
    ]
    events += [chunk({"content": piece}) for piece in _pieces(reply.text, reply.chunk_size)]
    for index, call in enumerate(reply.tool_calls):
        head = {"index": index, "id": _call_id(reply_no, index, call), "type": "function"}
        head["function"] = {"name": call.name, "arguments": ""}
        events.append(chunk({"tool_calls": [head]}))
        events += [
            chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
            for piece in _split(call.raw_arguments(), call.pieces)
        ]
    if reply.interrupted:
        return events[:1]
    if reply.finish:
        events.append(chunk({}, _finish_reason(reply)))
    usage = _usage(reply)
    if include_usage and usage is not None:
        events.append({**base, "choices": [], "usage": usage})
    return events


def completion_json(reply: FakeReply, *, model: str, reply_no: int = 1) -> dict[str, Any]:
    """The non-streaming ``chat.completion`` object for ``reply``."""
    text = "".join(_pieces(reply.text, reply.chunk_size))
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    reasoning = "".join(_pieces(reply.reasoning, reply.chunk_size))
    if reasoning:
        message["reasoning_content"] = reasoning
    if reply.tool_calls:
        message["tool_calls"] = [
            {
                "id": _call_id(reply_no, i, call),
                "type": "function",
                "function": {"name": call.name, "arguments": call.raw_arguments()},
            }
            for i, call in enumerate(reply.tool_calls)
        ]
    choice = {"index": 0, "message": message, "logprobs": None}
    choice["finish_reason"] = _finish_reason(reply)
    return {
        "id": f"chatcmpl-fake-{reply_no}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": reply.model or model,
        "choices": [choice],
        "usage": _usage(reply),
    }
