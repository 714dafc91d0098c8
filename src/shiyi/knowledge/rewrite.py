"""Multi-query rewriting (seed 001, 5.2.1) and HyDE (5.2.2) with the ``fast`` model.

Both are optional helpers of search: any failure (no usable model, an error, a timeout, an
answer that does not parse) means searching with the question alone, never a failed search.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from typing import Protocol

from shiyi.errors import ModelError
from shiyi.llm.assemble import ReplyAssembler
from shiyi.llm.protocol import ChatModel
from shiyi.llm.types import Message, ToolSpec

log = logging.getLogger(__name__)

TOOL_NAME = "search_queries"
MAX_QUERY_CHARS = 200
_NUMBERING = re.compile(r"^\s*(?:[-*•]|\d+[.)、]|[(（]?\d+[)）])\s*")

REWRITE_PROMPT = (
    "You turn a user's question into search queries for a document search engine. Write "
    "{count} different queries that would find the passages answering it: rephrase, use the "
    "technical terms and synonyms documentation would use, expand abbreviations, and if the "
    "question is not in English add one English query. Each query is short (under 12 words). "
    "Call search_queries once with them."
)
HYDE_PROMPT = (
    "Write a short passage (3 to 5 sentences) that answers the question the way a technical "
    "document would, with concrete terms. If you do not know the facts, write a plausible "
    "answer anyway: it is only used to find similar text. Reply with the passage only, in "
    "the language of the question."
)


class QueryRewriter(Protocol):
    async def rewrite(self, query: str, count: int) -> list[str]:
        """Up to ``count`` alternative queries (never the query itself); [] on failure."""
        ...


class HypotheticalWriter(Protocol):
    async def hypothetical(self, query: str) -> str:
        """A plausible answer passage to embed instead of the question; "" on failure."""
        ...


def rewrite_tool() -> ToolSpec:
    schema = {
        "type": "object",
        "properties": {
            "queries": {"type": "array", "items": {"type": "string"}, "minItems": 1},
        },
        "required": ["queries"],
    }
    return ToolSpec(TOOL_NAME, "Search the documents with these queries.", schema)


class ModelRewriter:
    """Both helpers on one chat model, each call bounded by ``timeout`` seconds."""

    def __init__(self, model: ChatModel, timeout: float = 20.0) -> None:
        self.model = model
        self.timeout = timeout

    async def rewrite(self, query: str, count: int) -> list[str]:
        if count <= 0 or not query.strip():
            return []
        messages = [
            Message("system", REWRITE_PROMPT.format(count=count)),
            Message("user", query),
        ]
        reply = await self._ask(messages, tools=[rewrite_tool()], max_tokens=300)
        if reply is None:
            return []
        return clean_queries(parse_queries(reply), query, count)

    async def hypothetical(self, query: str) -> str:
        if not query.strip():
            return ""
        messages = [Message("system", HYDE_PROMPT), Message("user", query)]
        reply = await self._ask(messages, tools=[], max_tokens=250)
        return " ".join(reply.content.split()) if reply is not None else ""

    async def _ask(
        self, messages: list[Message], *, tools: list[ToolSpec], max_tokens: int
    ) -> Message | None:
        assembler = ReplyAssembler()

        async def stream() -> None:
            async for chunk in self.model.stream(
                messages,
                tools=tools,
                tool_choice=tools[0].name if tools else "auto",
                temperature=0.0,
                max_tokens=max_tokens,
            ):
                assembler.add(chunk)

        try:
            await asyncio.wait_for(stream(), self.timeout)
        except (ModelError, TimeoutError) as exc:
            log.warning("searching without %s: %s", "rewrites" if tools else "HyDE", exc)
            return None
        return assembler.message()


def parse_queries(reply: Message) -> list[str]:
    """Queries from the tool call, else from a JSON list or numbered lines in the text."""
    call = next((c for c in reply.tool_calls if c.name == TOOL_NAME), None)
    if call is not None:
        try:
            data = json.loads(call.arguments)
        except json.JSONDecodeError:
            data = None
        if isinstance(data, dict) and isinstance(data.get("queries"), list):
            return [q for q in data["queries"] if isinstance(q, str)]
    text = reply.content.strip()
    start, end = text.find("["), text.rfind("]")
    if 0 <= start < end:
        try:
            listed = json.loads(text[start : end + 1])
        except json.JSONDecodeError:
            listed = None
        if isinstance(listed, list):
            return [q for q in listed if isinstance(q, str)]
    return [_NUMBERING.sub("", line) for line in text.splitlines()]


def clean_queries(queries: list[str], original: str, count: int) -> list[str]:
    """Distinct, non-empty, bounded queries other than the original, at most ``count``."""
    seen = {" ".join(original.lower().split())}
    out: list[str] = []
    for query in queries:
        text = " ".join(query.strip().strip("\"'“”").split())[:MAX_QUERY_CHARS]
        key = text.lower()
        if text and key not in seen:
            seen.add(key)
            out.append(text)
    return out[:count]
