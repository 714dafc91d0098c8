"""``search_knowledge``: bound to a knowledge base, offered to the agent only when one exists."""

from __future__ import annotations

import asyncio

import pytest

from shiyi.config import Settings
from shiyi.index.embeddings import MiniLMEmbedder
from shiyi.knowledge import KnowledgeBase
from shiyi.llm.scripted import ScriptedModel, call, reply
from shiyi.tools.base import ToolContext
from shiyi.tools.builtins.knowledge import knowledge_tools
from tests.conftest import AppOpener, collect
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


async def search_with_the_tool(
    settings: Settings, embedder: MiniLMEmbedder, query: str, limit: int
) -> str:
    """The ``search_knowledge`` tool's answer over ``settings``' knowledge base."""
    kb = KnowledgeBase.open(settings, embedder=embedder, fast_model=None)
    try:
        (tool,) = knowledge_tools(lambda: kb, settings.workspace)
        assert tool.spec.name == "search_knowledge" and tool.read_only
        ctx = ToolContext.for_dir(settings.workspace)
        return await tool.invoke(tool.validate({"query": query, "limit": limit}), ctx)
    finally:
        kb.close()


async def test_the_tool_says_how_it_read_a_typing_slip(
    filled: Settings, embedder: MiniLMEmbedder
) -> None:
    text = await search_with_the_tool(filled, embedder, "authentcation fails AUTH-401", 1)
    assert text.startswith(
        'Searched "authentcation" as "authentication".\n[1] docs/auth.txt › auth  ('
    )


async def test_the_tool_returns_passages_with_file_and_section(
    filled: Settings, embedder: MiniLMEmbedder
) -> None:
    text = await search_with_the_tool(filled, embedder, "error AUTH-401", 2)
    first = text.split("\n\n[2]")[0]
    assert first.startswith("[1] docs/auth.txt › auth  (")  # searched as typed: no note
    assert "AUTH-401" in first
    assert text.count("\n[") + (text[0] == "[") == 2


async def test_the_agent_searches_its_knowledge_base(filled: Settings, open_app: AppOpener) -> None:
    app = open_app(
        filled,
        reply("", call("search_knowledge", query="Which region does Project Kestrel use?")),
        reply("Kestrel runs in sa-east-1."),
    )
    agent = app.agent()
    assert "search_knowledge" in agent.tools.names()
    events = await collect(agent.send("Where does Kestrel run?"))
    model = app.models.main
    assert isinstance(model, ScriptedModel)
    result = next(e for e in events if e.type == "tool_result")
    assert result.ok  # type: ignore[union-attr]
    tool_message = model.requests[1].messages[-1].content
    assert "sa-east-1" in tool_message
    assert "docs/kestrel.md › Project Kestrel" in tool_message


def test_agent_without_knowledge_base_has_no_such_tool(
    settings: Settings, open_app: AppOpener
) -> None:
    settings.memory.enabled = False
    assert "search_knowledge" not in open_app(settings).agent().tools.names()
    assert not KnowledgeBase.path_for(settings).exists()  # asking created nothing


def test_offered_only_while_the_setting_is_on(filled: Settings, open_app: AppOpener) -> None:
    assert "search_knowledge" in open_app(filled).agent().tools.names()
    filled.knowledge.enabled = False
    assert "search_knowledge" not in open_app(filled).agent().tools.names()


def test_search_knowledge_may_be_listed_in_tools_enabled(
    filled: Settings, open_app: AppOpener
) -> None:
    filled.tools.enabled = ["read_file", "search_knowledge"]
    assert set(open_app(filled).agent().tools.names()) == {"read_file", "search_knowledge"}
