"""The plain answer layout: what a tiny model sees when it only has to answer in words.

SmolLM2-135M, given the full layout (persona, tool list, ``<context>`` notes with the time,
the run's tool calls as turns), answered 14 of 20 everyday messages with words copied from
it ("a personal assistant that works with tools and a long-term memory", "2026 11 28 12 35
utc saturday", "You can't call a tool now") or with a wrong fact.  Given a request a model
its size was trained on (one short system line, one user turn), it answers.  So a guided
small model's answering steps get:

* no system message of shiyi's, or one line (:data:`PLAIN_SYSTEM`) and the recalled
  memories; no tool section;
* the last few plain exchanges of the session (no tool turns: with one in view the model
  wrote calls as text);
* one user turn: what it needs, as data with short labels (facts the agent worked out,
  this run's tool results), then the user's message.

Labels are shorter than the echo check's run of words (:data:`shiyi.agent.echo.RUN_WORDS`)
so there is no sentence of shiyi's for the model to copy: what it can repeat is data.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import replace

from shiyi.llm.types import Message

PLAIN_SYSTEM = "You are a helpful assistant. Answer the user briefly."
"""Said only with recalled memories to go with it; otherwise there is no system message and
the model's chat template puts its own default (SmolLM2's was its training's: "Say hello"
got a hello with it and none with a persona line of ours)."""
PLAIN_MAX_TOKENS = 128
"""A plain answer's cap when none is configured: a tiny model's answer is in its first
sentences, and what follows drifts (a repeated reply ran to the 1,024-token cap)."""
EARLIER_MESSAGES = 4
"""Plain user/assistant messages of the session kept before the newest user message."""
MEMORY_LABEL = "Facts about the user:"
"""Recalled memories follow it at the end of the system message (in the user turn,
SmolLM2-135M answered "I don't have the ability to provide personal information")."""
_NUMBERED = re.compile(r"^ *\d+\| ?", re.M)
_TOOL_NOTE = re.compile(r"\n*\[(?:shiyi\]|from this session's tool memory).*", re.S)
_RESULT_CHARS = 4000
"""A tiny model's context is small and it reads slowly: a longer result is cut."""
MEMORY_CHARS = 300
"""A recalled memory is cut to this, as in the ``<memory>`` block
(:func:`~shiyi.memory.recall.present.format_hits`): one remembered 100 KB paste had made every
later prompt that recalled it overflow an 8,192-token context."""
EARLIER_CHARS = 2000
"""An earlier message of the session is cut to this: it is context, not the request."""


def plain_request(
    history: Sequence[Message],
    *,
    memories: Sequence[str] = (),
    facts: Sequence[str] = (),
    system: str = PLAIN_SYSTEM,
) -> list[Message]:
    """The request for an answer in words to the newest user message of ``history``."""
    opening = []
    if memories:
        lines = "\n".join(
            f"- {_clipped(' '.join(text.split()), MEMORY_CHARS)}" for text in memories
        )
        opening.append(Message("system", f"{system}\n{MEMORY_LABEL}\n{lines}"))
    at = _newest_user(history)
    if at is None:
        return opening
    earlier = [m for m in history[:at] if _plain(m)][-EARLIER_MESSAGES:]
    while earlier and earlier[0].role != "user":
        earlier = earlier[1:]  # a template may insist on a user turn first
    earlier = [_cut(m, EARLIER_CHARS) for m in earlier]
    sections = [_clipped(fact, MEMORY_CHARS) for fact in facts]
    sections += tool_results(history[at + 1 :])
    sections.append(history[at].content)
    return [*opening, *earlier, Message("user", "\n\n".join(sections))]


def _clipped(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _cut(message: Message, limit: int) -> Message:
    if len(message.content) <= limit:
        return message
    return replace(message, content=_clipped(message.content, limit))


def tool_results(messages: Sequence[Message]) -> list[str]:
    """Each tool result in ``messages`` as labelled data ("notes.txt:\\n<its text>")."""
    calls = {call.id: call for message in messages for call in message.tool_calls}
    out: list[str] = []
    for message in messages:
        if message.role != "tool":
            continue
        call = calls.get(message.tool_call_id or "")
        name = message.name or (call.name if call else "tool")
        text = _TOOL_NOTE.sub("", message.content).strip()[:_RESULT_CHARS]
        out.append(f"{_label(name, call.arguments if call else '')}\n{_clean(name, text)}")
    return out


def _label(name: str, arguments: str) -> str:
    try:
        parsed = json.loads(arguments or "{}")
    except ValueError:
        parsed = {}
    path = parsed.get("path") if isinstance(parsed, dict) else None
    if name == "read_file" and isinstance(path, str):
        return f"{path}:"
    if name == "list_dir":
        return "Files here:"
    return f"{name} returned:"


def _clean(name: str, text: str) -> str:
    if name == "read_file":
        return _NUMBERED.sub("", text)  # line numbers are for edits, not for reading
    if name == "list_dir":
        return text.split("\n", 1)[1] if "\n" in text else text  # the folder's own name
    return text


def _plain(message: Message) -> bool:
    return (
        message.role in ("user", "assistant")
        and not message.tool_calls
        and bool(message.content.strip())
    )


def _newest_user(messages: Sequence[Message]) -> int | None:
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].role == "user":
            return index
    return None
