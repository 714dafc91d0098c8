"""Answers that fit a client: a listing or a search is cut to a size every MCP client reads.

The official client refuses a message over 1 MiB (its stdio line and HTTP event limit), and
each memory is carried twice, as structured content and as readable text. A user may hold
facts of 100,000 characters, so fifty of them in one listing had made every later listing
of that user's memories fail in the client, with nothing to fix it from the model's side.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import TypeVar

from pydantic import BaseModel

T = TypeVar("T", bound=BaseModel)

# Leaves room below 1 MiB for the JSON-RPC envelope and the escaping of quotes, newlines
# and control characters, which can grow a text by a few percent.
ANSWER_BYTES = 600_000
# A listing's readable line shows this much of each memory; get_memory shows it whole.
LINE_CHARS = 2_000


def clipped(text: str, ident: str) -> str:
    """The text as a listing shows it: whole when short, else its start and how to get it."""
    if len(text) <= LINE_CHARS:
        return text
    more = len(text) - LINE_CHARS
    return f"{text[:LINE_CHARS]}… ({more:,} more characters: get_memory {ident})"


def fitting(items: Sequence[T], line: Callable[[T], str], budget: int = ANSWER_BYTES) -> int:
    """How many of ``items``, in order, fit ``budget`` bytes as structured content plus their
    readable line (UTF-8, as sent); at least one, so a single large memory is still shown."""
    used = 0
    for count, item in enumerate(items):
        used += len(json.dumps(item.model_dump(mode="json")).encode())
        used += len(line(item).encode())
        if used > budget and count > 0:
            return count
    return len(items)
