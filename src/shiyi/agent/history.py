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


def estimate_tokens(message: Message) -> int:
    # About 3.5 characters a token for mixed prose and code; CJK runs closer to 1.
    size = len(message.content) + sum(len(c.arguments) + len(c.name) for c in message.tool_calls)
    return size * 2 // 7 + 4


def tail_window(messages: Sequence[Message], budget_tokens: int) -> list[Message]:
    """The newest messages that fit ``budget_tokens``, never splitting a call from its result.

    Walks backwards and stops at the budget, so the cost is the window's size, not the
    session's.  The newest block is always kept, even alone over budget.
    """
    start = len(messages)
    used = 0
    index = len(messages) - 1
    while index >= 0:
        block_start = index
        # Tool results belong to the assistant message before them: take them together.
        while block_start > 0 and messages[block_start].role == "tool":
            block_start -= 1
        cost = sum(estimate_tokens(m) for m in messages[block_start : index + 1])
        if start < len(messages) and used + cost > budget_tokens:
            break
        used += cost
        start = block_start
        index = block_start - 1
    return list(messages[start:])
