"""mem0's inputs read and its outputs built: messages in, ``{"results": [...]}`` items out.

Shapes follow mem0's documented Python API (``mem0ai``): a memory item carries ``id``,
``memory``, ``hash`` (md5 of the text), ``metadata``, ``created_at``/``updated_at`` (ISO
8601), ``user_id``/``agent_id``/``run_id``, and ``score`` in search results; a stored message
also its ``role`` and ``actor_id`` (the message's ``name``), as mem0's ``infer=False`` does.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from shiyi.compat.mem0.ledger import Owner
from shiyi.errors import MemoryRequestError
from shiyi.memory.models import EventRecord, FactRecord

MESSAGE_HELP = 'pass a string, one {"role": ..., "content": ...} dict, or a list of such dicts'


@dataclass(slots=True, frozen=True)
class Turn:
    role: str
    content: str
    name: str = ""


def turns_of(messages: object) -> list[Turn]:
    """mem0's three forms of ``messages``; system messages are instructions, not memories
    (mem0 skips them too)."""
    if isinstance(messages, str):
        items: list[object] = [{"role": "user", "content": messages}]
    elif isinstance(messages, Mapping):
        items = [messages]
    elif isinstance(messages, list):
        items = list(messages)
    else:
        raise MemoryRequestError(f"messages is a {type(messages).__name__}: {MESSAGE_HELP}")
    turns = []
    for index, item in enumerate(items):
        if not isinstance(item, Mapping):
            raise MemoryRequestError(
                f"messages[{index}] is a {type(item).__name__}: {MESSAGE_HELP}"
            )
        role, content = item.get("role"), item.get("content")
        if not isinstance(role, str) or not role.strip():
            raise MemoryRequestError(f"messages[{index}] has no 'role' string: {MESSAGE_HELP}")
        if not isinstance(content, str):
            raise MemoryRequestError(
                f"messages[{index}]['content'] must be text, got {type(content).__name__}"
            )
        name = item.get("name")
        if role != "system" and content.strip():
            turns.append(Turn(role, content, name if isinstance(name, str) else ""))
    return turns


def check_ids(user_id: str | None, agent_id: str | None, run_id: str | None, verb: str) -> None:
    """mem0's rule: ``add``, ``search``, ``get_all`` and ``delete_all`` need one of the ids."""
    for name, value in (("user_id", user_id), ("agent_id", agent_id), ("run_id", run_id)):
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise MemoryRequestError(f"{verb}: {name} must be a non-empty string, got {value!r}")
    if user_id is None and agent_id is None and run_id is None:
        hint = " (to delete every memory, call reset())" if verb == "delete_all" else ""
        raise MemoryRequestError(
            f"{verb}: at least one of 'user_id', 'agent_id' or 'run_id' must be given{hint}"
        )


def iso(ts: float | None) -> str | None:
    return None if ts is None else datetime.fromtimestamp(ts, UTC).isoformat()


def text_of(record: EventRecord | FactRecord) -> str:
    return record.content if isinstance(record, EventRecord) else record.text


def item(
    record: EventRecord | FactRecord, owner: Owner | None, score: float | None = None
) -> dict[str, Any]:
    """One memory in mem0's shape; ``owner`` None: a memory shiyi stored itself (its own
    agent's conversation), shown under its shiyi user."""
    text = text_of(record)
    if isinstance(record, EventRecord):
        created, updated = record.ts, owner.updated_at if owner else None
    else:
        created, updated = record.created_at, record.updated_at or None
    out: dict[str, Any] = {
        "id": record.id,
        "memory": text,
        "hash": hashlib.md5(text.encode()).hexdigest(),
        "metadata": dict(owner.metadata) if owner else {},
        "created_at": iso(created),
        "updated_at": iso(updated),
        "user_id": owner.user_id if owner else record.user_id,
        "agent_id": owner.agent_id if owner else None,
        "run_id": owner.run_id if owner else None,
    }
    if score is not None:
        out["score"] = score
    if isinstance(record, EventRecord):
        out["role"] = owner.role if owner and owner.role else record.role
        out["actor_id"] = owner.actor_id if owner else None
    return out


_LOGICAL = frozenset({"AND", "OR", "NOT", "and", "or", "not", "$and", "$or", "$not"})


def check_filters(wanted: Mapping[str, Any]) -> None:
    for key, value in wanted.items():
        if key in _LOGICAL:
            # taken as a metadata key, {"AND": [...]} matched nothing and said nothing
            raise MemoryRequestError(
                f"filters[{key!r}]: logical operators are not supported; give the keys "
                "themselves (all must match), e.g. {'category': 'music', 'mood': 'calm'}"
            )
        if isinstance(value, Mapping) and (
            set(value) != {"in"} or not isinstance(value["in"], list)
        ):
            raise MemoryRequestError(
                f"filters[{key!r}]: only equality or {{'in': [...]}} is supported, got "
                f"{dict(value)!r}"
            )


def matches(owner: Owner | None, wanted: Mapping[str, Any]) -> bool:
    """mem0's filters: each key equals (``user_id``/``agent_id``/``run_id`` or a metadata
    key); a value ``{"in": [...]}`` matches any of them."""
    for key, value in wanted.items():
        if owner is None:
            return False
        have = getattr(owner, key) if key in ("user_id", "agent_id", "run_id") else None
        if key not in ("user_id", "agent_id", "run_id"):
            if key not in owner.metadata:
                return False
            have = owner.metadata[key]
        if isinstance(value, Mapping):
            if have not in value["in"]:
                return False
        elif have != value:
            return False
    return True
