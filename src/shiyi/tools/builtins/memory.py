"""Memory tools: the model asks its long-term memory, and stores what it is told to keep."""

from __future__ import annotations

import asyncio
from typing import Literal

from shiyi.errors import ScopeDenied, ToolError
from shiyi.memory.lifecycle.explicit import Remembered, Statement
from shiyi.memory.recall.config import MODES, Mode
from shiyi.memory.service import Memory
from shiyi.tools.base import FunctionTool, Tool, tool


def memory_tools(memory: Memory) -> list[Tool]:
    """``query_memory``, ``expand_memory`` and ``remember`` bound to one memory."""

    @tool(read_only=True, name="query_memory")
    async def query_memory(
        query: str,
        mode: Literal["hybrid", "semantic", "graph", "recent", "keyword"] = "hybrid",
        kinds: list[str] | None = None,
        limit: int = 5,
    ) -> str:
        """Search long-term memory: past conversations, facts, preferences and procedures.

        Use it when the user refers to something from before ("last time", "my project",
        "as I said") or when remembered context would help.

        Args:
            query: What to look for, in the user's words.
            mode: hybrid (default, all paths), semantic (meaning), graph (entities and their
                relations), recent (latest turns), keyword (exact words, numbers, ids).
            kinds: Only these kinds, e.g. ["preference", "procedural", "episodic"].
            limit: How many memories to return (1-20).
        """
        chosen: Mode = mode if mode in MODES else "hybrid"
        count = max(1, min(20, limit))
        return await asyncio.to_thread(
            memory.query_text, query, mode=chosen, kinds=kinds, limit=count
        )

    @tool(read_only=True, name="expand_memory")
    async def expand_memory(anchor: str, window: int = 3) -> str:
        """Show the conversation around a remembered episode.

        Args:
            anchor: The anchor shown with a memory, like run_abc123:2:0.
            window: How many segments before and after to include (1-10).
        """
        events = await asyncio.to_thread(memory.expand, anchor, max(1, min(10, window)))
        if not events:
            return f"No remembered turns around {anchor}."
        return "\n".join(f"[{e.anchor.key()}] {e.role}: {e.content}" for e in events)

    @tool(sequential=True, name="remember")
    async def remember(
        text: str,
        kind: Literal[
            "preference", "semantic", "episodic", "procedural", "decision", "convention", "todo"
        ] = "semantic",
        key: str = "",
        scope: Literal["user", "agent", "workspace"] = "user",
    ) -> str:
        """Store something in long-term memory because the user asked you to remember it.

        Args:
            text: The thing to remember, as one self-contained sentence.
            kind: preference, semantic (a fact), episodic, procedural (how to do something),
                decision, convention or todo.
            key: The attribute this sets, e.g. "home_city" or "favourite_editor": a new value
                for the same key replaces the old one (which stays in history).  Empty: a
                plain statement ("my favourite editor is Helix", "I live in Munich") sets
                its own.
            scope: user (about the user), agent (how you should work) or workspace (shared
                with every agent of the project).
        """
        statement = Statement(text, kind, key, scope=scope)
        try:
            done = await asyncio.to_thread(memory.remember_outcome, statement)
        except ScopeDenied as exc:
            raise ToolError(str(exc)) from exc
        return remembered_text(done)

    tools: list[FunctionTool] = [query_memory, expand_memory, remember]
    return list(tools)


def remembered_text(done: Remembered) -> str:
    """The tool's answer: what is stored now, and what it replaced or confirmed, so the model
    can tell the user what memory believes."""
    fact = done.fact
    stored = f"({fact.kind}, {fact.scope}, id {fact.id}): {fact.text}"
    if done.outcome == "confirmed":
        return f"Already remembered {stored}. Saying it again confirmed it; no copy was made."
    replaced = "; ".join(repr(old.value) for old in done.replaced)
    if replaced:
        return f"Remembered {stored}. It replaces {replaced} (kept in history)."
    return f"Remembered {stored}"
