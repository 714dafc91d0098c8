"""Claude's data export: ``conversations.json``, a list of conversations.

Each conversation has ``uuid``, ``name``, ``created_at`` and ``chat_messages``: ``sender``
(``human`` or ``assistant``), ``created_at`` (ISO-8601), and the words as ``content`` blocks
(``text``; ``tool_use`` / ``tool_result`` / ``thinking`` left out) or, in older exports, as
``text``.  Attached files become a short marker with their name.  When messages name their
``parent_message_uuid`` and the conversation its ``current_leaf_message_uuid``, only the
branch that ends there is kept, as for ChatGPT.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from shiyi.errors import ImportFormatError
from shiyi.memory.transfer.import_formats.records import ImportedConversation
from shiyi.memory.transfer.import_formats.turns import Turn, conversation, session_name

SOURCE = "claude"
_ROLES = {"human": "user", "user": "user", "assistant": "assistant"}


def looks_like(item: object) -> bool:
    return isinstance(item, dict) and isinstance(item.get("chat_messages"), list)


def load(data: list[Any], path: Path) -> list[ImportedConversation]:
    found = []
    for index, item in enumerate(data):
        where = f"conversation {index}"
        if not looks_like(item):
            raise ImportFormatError(
                f"{path}: {where}: expected a Claude conversation with a 'chat_messages' list"
            )
        chat = _conversation(item, path, where)
        if chat.events:
            found.append(chat)
    return found


def _conversation(item: dict[str, Any], path: Path, where: str) -> ImportedConversation:
    title = str(item.get("name") or "")
    session = session_name(
        SOURCE, str(item.get("uuid") or ""), f"{title}\0{item.get('created_at')}"
    )
    messages = _branch(item)
    turns: list[Turn] = []
    for index, message in enumerate(messages):
        at = f"{where}.chat_messages[{index}]"
        if not isinstance(message, dict):
            raise ImportFormatError(f"{path}: {at}: expected a message object with 'sender'")
        role = _ROLES.get(str(message.get("sender")))
        text = _text(message)
        if role is None or not text.strip():
            continue
        ts = _time(message.get("created_at"), path, f"{at}.created_at")
        turns.append(Turn(str(message.get("uuid") or f"m{index}"), role, text, ts))
    return conversation(session, title, turns)


def _branch(item: dict[str, Any]) -> list[Any]:
    messages: list[Any] = item["chat_messages"]
    leaf = item.get("current_leaf_message_uuid")
    by_id = {m.get("uuid"): m for m in messages if isinstance(m, dict)}
    if not isinstance(leaf, str) or leaf not in by_id:
        return messages
    chain: list[Any] = []
    node: Any = by_id[leaf]
    while isinstance(node, dict) and node not in chain:
        chain.append(node)
        node = by_id.get(node.get("parent_message_uuid"))
    return chain[::-1]


def _text(message: dict[str, Any]) -> str:
    blocks = message.get("content")
    pieces: list[str] = []
    if isinstance(blocks, list) and blocks:
        pieces = [
            str(block["text"])
            for block in blocks
            if isinstance(block, dict) and block.get("type") == "text" and block.get("text")
        ]
    elif isinstance(message.get("text"), str):
        pieces = [message["text"]]
    for key in ("attachments", "files"):
        for attached in message.get(key) or ():
            name = attached.get("file_name") if isinstance(attached, dict) else None
            if name:
                pieces.append(f"[attached a file: {name}]")
    return "\n".join(pieces)


def _time(value: object, path: Path, where: str) -> float:
    if not isinstance(value, str):
        raise ImportFormatError(f"{path}: {where}: expected an ISO-8601 time, got {value!r}")
    try:
        moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise ImportFormatError(
            f"{path}: {where}: expected an ISO-8601 time like 2024-05-01T09:30:00Z, got {value!r}"
        ) from None
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()
