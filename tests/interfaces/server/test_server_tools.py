"""Which tools a served agent gets: the read-only built-ins, the memory and plan tools, and
one knowledge base shared by every session."""

from __future__ import annotations

import asyncio
from pathlib import Path

from shiyi.config import Settings
from shiyi.knowledge import KnowledgeBase
from shiyi.llm.scripted import call, reply
from tests.interfaces.server.conftest import LiveFactory, stream_events


def _knowledge_base(settings: Settings, workspace: Path) -> None:
    (workspace / "docs").mkdir()
    (workspace / "docs" / "birds.md").write_text(
        "# Birds\n\n## Herons\n\nThe grey heron nests in colonies called heronries.\n"
    )
    kb = KnowledgeBase.open(settings, embedder=None, fast_model=None)
    try:
        report = asyncio.run(kb.add([workspace / "docs"]))
        assert not report.failed
    finally:
        kb.close()


def test_served_agents_get_repo_map_web_search_and_the_knowledge_base(
    live: LiveFactory, settings: Settings, workspace: Path
) -> None:
    _knowledge_base(settings, workspace)
    server = live(
        [reply("looking", call("search_knowledge", query="heronries")), reply("they nest")],
    )
    events = [stream_events(server.client, server.session(), "where do herons nest?")]
    events.append(stream_events(server.client, server.session(), "and again?"))
    offered = set(server.model.requests[0].tool_names)
    assert {"repo_map", "web_search", "search_knowledge", "query_memory"} <= offered
    assert "bash" not in offered
    result = next(data for kind, data in events[0] if kind == "tool_result")
    assert result["ok"] is True
    assert "heronries" in server.model.requests[1].last.content  # what the model read
    # Both sessions' agents hold the one tool object: one knowledge base is open.
    agents = list(server.service._agents.values())
    assert len(agents) == 2
    assert agents[0].tools.get("search_knowledge") is agents[1].tools.get("search_knowledge")
