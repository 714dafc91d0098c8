"""Prepare logged messages for the model: repair, sanitise and window them.

The full context engineering (budgets, compression, focused files) builds on this; here we
make sure what we send is always a valid conversation.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace

from shiyi.llm.types import Message, ToolCall

INTERRUPTED_RESULT = "Error: this tool call did not finish (the run was interrupted)."


def repair(messages: Sequence[Message]) -> list[Message]:
    """Give every tool call a result and drop results whose call is unknown.

    A process killed mid-tool leaves an assistant message whose calls have no results;
    OpenAI-compatible APIs reject such a history, so the missing results are filled in.
    """
    out: list[Message] = []
    pending: dict[str, str] = {}
    for message in messages:
        if message.role == "tool":
            if message.tool_call_id in pending:
                pending.pop(message.tool_call_id)
                out.append(message)
            continue
        _close_pending(out, pending)
        out.append(message)
        pending = {call.id: call.name for call in message.tool_calls}
    _close_pending(out, pending)
    return out


def _close_pending(out: list[Message], pending: dict[str, str]) -> None:
    for call_id, name in pending.items():
        out.append(Message("tool", INTERRUPTED_RESULT, tool_call_id=call_id, name=name))
    pending.clear()


def sanitize_arguments(message: Message) -> Message:
    """Replace malformed tool-call JSON by ``{}`` so the server never sees it again.

    The log keeps the raw text; the model already got an error result explaining it.
    """
    if not message.tool_calls or all(_is_json_object(c.arguments) for c in message.tool_calls):
        return message
    calls = tuple(
        c if _is_json_object(c.arguments) else ToolCall(c.id, c.name, "{}")
        for c in message.tool_calls
    )
    return replace(message, tool_calls=calls)


def _is_json_object(text: str) -> bool:
    try:
        return isinstance(json.loads(text or "{}"), dict)
    except json.JSONDecodeError:
        return False
