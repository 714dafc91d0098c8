"""``search_knowledge``: bound to a knowledge base, offered to the agent only when one exists."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from shiyi.agent import Agent
from shiyi.config import Settings
from shiyi.index.embeddings import MiniLMEmbedder
from shiyi.knowledge import KnowledgeBase
from shiyi.llm.scripted import ScriptedModel, call, reply
from shiyi.tools.base import ToolContext
from shiyi.tools.builtins.knowledge import knowledge_tools, knowledge_tools_for
from tests.conftest import collect
from tests.knowledge.conftest import embedder, write_corpus

__all__ = ["embedder"]  # the shared session fixture


@pytest.fixture
def filled(settings: Settings, embedder: MiniLMEmbedder) -> Settings:
    """A data dir with a knowledge base holding the generated corpus (under the workspace)."""
    settings.memory.enabled = False  # the tool works without a memory
    kb = KnowledgeBase.open(settings, embedder=embedder, fast_model=None)
    try:
        report = asyncio.run(kb.add([write_corpus(settings.workspace / "docs")["auth"].parent]))
        assert not report.failed
    finally:
        kb.close()
    return settings


async def test_the_tool_returns_passages_with_file_and_section(
    filled: Settings, embedder: MiniLMEmbedder
) -> None:
    kb = KnowledgeBase.open(filled, embedder=embedder, fast_model=None)
    try:
        (tool,) = knowledge_tools(lambda: kb, filled.workspace)
        assert tool.spec.name == "search_knowledge" and tool.read_only
        ctx = ToolContext.for_dir(filled.workspace)
        text = await tool.invoke(tool.validate({"query": "error AUTH-401", "limit": 2}), ctx)
    finally:
        kb.close()
    first = text.split("\n\n[2]")[0]
    assert first.startswith("[1] docs/auth.txt › auth  (")
    assert "AUTH-401" in first
    assert text.count("\n[") + (text[0] == "[") == 2


def test_offered_only_when_a_knowledge_base_exists(settings: Settings, filled: Settings) -> None:
    assert [t.spec.name for t in knowledge_tools_for(filled)] == ["search_knowledge"]
    filled.knowledge.enabled = False
    assert knowledge_tools_for(filled) == []


def test_not_offered_without_a_knowledge_base(settings: Settings) -> None:
    assert knowledge_tools_for(settings) == []
    assert not KnowledgeBase.path_for(settings).exists()  # asking created nothing


async def test_the_agent_searches_its_knowledge_base(filled: Settings) -> None:
    model = ScriptedModel(
        [
            reply("", call("search_knowledge", query="Which region does Project Kestrel use?")),
            reply("Kestrel runs in sa-east-1."),
        ]
    )
    agent = Agent.from_settings(filled, model=model)
    try:
        assert "search_knowledge" in agent.tools.names()
        events = await collect(agent.send("Where does Kestrel run?"))
    finally:
        agent.close()
    result = next(e for e in events if e.type == "tool_result")
    assert result.ok  # type: ignore[union-attr]
    tool_message = model.requests[1].messages[-1].content
    assert "sa-east-1" in tool_message
    assert "docs/kestrel.md › Project Kestrel" in tool_message


def test_agent_without_knowledge_base_has_no_such_tool(settings: Settings) -> None:
    settings.memory.enabled = False
    agent = Agent.from_settings(settings, model=ScriptedModel())
    try:
        assert "search_knowledge" not in agent.tools.names()
    finally:
        agent.close()


def test_search_knowledge_may_be_listed_in_tools_enabled(filled: Settings) -> None:
    filled.tools.enabled = ["read_file", "search_knowledge"]
    agent = Agent.from_settings(filled, model=ScriptedModel())
    try:
        assert set(agent.tools.names()) == {"read_file", "search_knowledge"}
    finally:
        agent.close()


def test_a_broken_knowledge_base_is_a_tool_error(filled: Settings, tmp_path: Path) -> None:
    from shiyi.errors import ToolError

    def broken() -> KnowledgeBase:
        from shiyi.errors import StorageError

        raise StorageError("the file is corrupt")

    (tool,) = knowledge_tools(broken)
    with pytest.raises(ToolError, match="cannot be searched: the file is corrupt"):
        asyncio.run(tool.invoke({"query": "x", "limit": 1}, ToolContext.for_dir(tmp_path)))
