"""ChatGPT's data export: ``conversations.json``, a list of conversations.

Each conversation's messages are a tree (``mapping``: node id -> ``{message, parent,
children}``): editing a message or regenerating a reply starts a branch.  The chat as the
user last saw it is the path from ``current_node`` up through the parents; the other
branches are left out.  Kept: the user's and ChatGPT's words (``author.role`` user or
assistant, ``recipient`` all), each at its own ``create_time``.  Left out: system and tool
messages, the assistant's calls to its tools, hidden context (custom instructions) and
reasoning notes.  A part that is not text (an image, a file) becomes a short marker, so a
turn that only shared an image still says so.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from shiyi.errors import ImportFormatError
from shiyi.memory.transfer.import_formats.records import ImportedConversation
from shiyi.memory.transfer.import_formats.turns import Turn, conversation, session_name

SOURCE = "chatgpt"
_TEXT_TYPES = frozenset({"text", "multimodal_text"})
_ROLES = frozenset({"user", "assistant"})


def looks_like(item: object) -> bool:
    return isinstance(item, dict) and isinstance(item.get("mapping"), dict)


def load(data: list[Any], path: Path) -> list[ImportedConversation]:
    found = []
    for index, item in enumerate(data):
        where = f"conversation {index}"
        if not looks_like(item):
            raise ImportFormatError(
                f"{path}: {where}: expected a ChatGPT conversation with a 'mapping' of messages"
            )
        chat = _conversation(item, path, where)
        if chat.events:
            found.append(chat)
    return found


def _conversation(item: dict[str, Any], path: Path, where: str) -> ImportedConversation:
    mapping: dict[str, Any] = item["mapping"]
    conversation_id = str(item.get("conversation_id") or item.get("id") or "")
    title = str(item.get("title") or "")
    session = session_name(SOURCE, conversation_id, f"{title}\0{item.get('create_time')}")
    start = _number(item.get("create_time")) or 0.0
    turns: list[Turn] = []
    last = start
    for node_id in _branch(mapping, item.get("current_node"), path, where):
        message = mapping[node_id].get("message")
        if not isinstance(message, dict) or not _spoken(message):
            continue
        text = _text(message.get("content"))
        if not text.strip():
            continue
        # A message without a time (old exports' first turns) follows the one before it.
        ts = _number(message.get("create_time")) or last
        last = max(last, ts)
        role = str(message["author"]["role"])
        turns.append(Turn(str(message.get("id") or node_id), role, text, ts))
    return conversation(session, title, turns)


def _branch(mapping: dict[str, Any], current: object, path: Path, where: str) -> list[str]:
    """Node ids from the root to ``current_node`` (without one: the newest leaf)."""
    node_id = current if isinstance(current, str) and current in mapping else _newest_leaf(mapping)
    chain: list[str] = []
    seen: set[str] = set()
    while isinstance(node_id, str) and node_id in mapping:
        if node_id in seen:
            raise ImportFormatError(
                f"{path}: {where}.mapping: expected a tree, but node {node_id!r} is its own "
                "ancestor"
            )
        seen.add(node_id)
        chain.append(node_id)
        node = mapping[node_id]
        node_id = node.get("parent") if isinstance(node, dict) else None
    return chain[::-1]


def _newest_leaf(mapping: dict[str, Any]) -> str | None:
    leaves = [
        (_number((node.get("message") or {}).get("create_time")) or 0.0, node_id)
        for node_id, node in mapping.items()
        if isinstance(node, dict) and not node.get("children")
    ]
    return max(leaves)[1] if leaves else None


def _spoken(message: dict[str, Any]) -> bool:
    author = message.get("author")
    if not isinstance(author, dict) or author.get("role") not in _ROLES:
        return False
    if message.get("recipient", "all") != "all":  # the assistant calling one of its tools
        return False
    metadata = message.get("metadata") or {}
    hidden = (
        metadata.get("is_visually_hidden_from_conversation") if isinstance(metadata, dict) else None
    )
    content = message.get("content")
    kind = content.get("content_type") if isinstance(content, dict) else None
    return not hidden and kind in _TEXT_TYPES


def _text(content: object) -> str:
    if not isinstance(content, dict):
        return ""
    parts = content.get("parts")
    if not isinstance(parts, list):
        return str(content.get("text") or "")
    pieces = [_part_text(part) for part in parts]
    return "\n".join(piece for piece in pieces if piece)


def _part_text(part: object) -> str:
    if isinstance(part, str):
        return part
    if not isinstance(part, dict):
        return ""
    if isinstance(part.get("text"), str):  # e.g. a voice message's transcription
        return str(part["text"])
    kind = str(part.get("content_type") or "attachment")
    if kind == "image_asset_pointer":
        return "[shared an image]"
    name = part.get("name") or part.get("file_name")
    return f"[shared a file: {name}]" if name else f"[shared {kind.replace('_', ' ')}]"


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)
