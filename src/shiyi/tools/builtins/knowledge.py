"""``search_knowledge``: the model searches the documents the user added with ``shiyi kb add``."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from shiyi.errors import ShiyiError, ToolError
from shiyi.tools.base import FunctionTool, Tool, tool

if TYPE_CHECKING:
    from shiyi.knowledge import KnowledgeBase


def knowledge_tools(open_kb: Callable[[], KnowledgeBase], root: Path | None = None) -> list[Tool]:
    """``search_knowledge`` over the knowledge base ``open_kb`` opens on the first call (so
    an agent that never searches documents pays nothing for it)."""
    opened: list[KnowledgeBase] = []
    lock = threading.Lock()

    def knowledge_base() -> KnowledgeBase:
        with lock:
            if not opened:
                opened.append(open_kb())
            return opened[0]

    @tool(read_only=True, name="search_knowledge")
    async def search_knowledge(query: str, limit: int = 5) -> str:
        """Search the user's knowledge base: documents, manuals, notes, PDFs and code files
        the user added. Returns passages with their file and section.

        Use it for questions the user's own documents may answer; use query_memory for what
        was said in past conversations.

        Args:
            query: What to look for, as a question or keywords.
            limit: How many passages to return (1-10).
        """
        from shiyi.index.spelling import reading_note
        from shiyi.knowledge import format_passages

        try:
            kb = await asyncio.to_thread(knowledge_base)
            result = await kb.search(query, kb.options(limit=max(1, min(10, limit))))
        except ShiyiError as exc:
            raise ToolError(f"the knowledge base cannot be searched: {exc}") from exc
        return reading_note(result.read_as) + format_passages(result.passages, root)

    tools: list[FunctionTool] = [search_knowledge]
    return list(tools)
