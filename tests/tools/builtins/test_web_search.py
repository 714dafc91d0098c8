"""The web_search tool: what the model reads, the offline result, and session tool memory."""

from __future__ import annotations

import asyncio
import json
import socket
from pathlib import Path

import pytest

from shiyi.config.settings import ToolSettings, WebSearchSettings
from shiyi.events import ToolResultEvent
from shiyi.llm.scripted import call, reply
from shiyi.llm.types import ToolCall
from shiyi.tools import ToolContext, ToolOutcome, ToolRegistry
from shiyi.tools.builtins import default_registry
from shiyi.tools.builtins.web_search import web_search_for
from shiyi.tools.web import WebResult, WebSearchUnavailable, ddgs_installed
from tests.conftest import AgentFactory, collect
from tests.support.requests import run_context

ADVICE = "answer from what you know or ask the user."


class FakeProvider:
    """Counts searches; answers with fixed results, or fails the first ``failures`` times."""

    def __init__(self, results: list[WebResult] | None = None, failures: int = 0) -> None:
        self.results = results if results is not None else [WebResult("A", "https://a", "a")]
        self.failures = failures
        self.queries: list[tuple[str, int]] = []

    @property
    def name(self) -> str:
        return "fake"

    async def search(self, query: str, max_results: int) -> list[WebResult]:
        self.queries.append((query, max_results))
        if len(self.queries) <= self.failures:
            raise WebSearchUnavailable("the fake is down")
        return self.results


class SlowProvider(FakeProvider):
    async def search(self, query: str, max_results: int) -> list[WebResult]:
        await asyncio.sleep(30)
        return []


class BuggyProvider(FakeProvider):
    async def search(self, query: str, max_results: int) -> list[WebResult]:
        raise KeyError("results")


async def search(
    tmp_path: Path,
    registry: ToolRegistry,
    settings: ToolSettings | None = None,
    **arguments: object,
) -> ToolOutcome:
    ctx = ToolContext.for_dir(tmp_path, settings)
    request = ToolCall(id="c1", name="web_search", arguments=json.dumps(arguments))
    return await registry.execute(request, ctx)


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_results_are_a_compact_numbered_list(tmp_path: Path) -> None:
    provider = FakeProvider(
        [
            WebResult("Python 3.13 released", "https://python.org/3.13", "It is out.\n Now.",
                      "2024-10-07"),
            WebResult("Docs", "https://docs.python.org", ""),
        ]
    )  # fmt: skip
    outcome = await search(tmp_path, ToolRegistry([web_search_for(provider)]), query="  py  3.13 ")
    assert outcome.ok
    assert outcome.content == (
        '2 web results for "py 3.13" (via fake):\n'
        "1. Python 3.13 released (2024-10-07)\n"
        "   https://python.org/3.13\n"
        "   It is out. Now.\n"
        "2. Docs\n"
        "   https://docs.python.org"
    )
    assert provider.queries == [("py 3.13", 5)]  # the configured default count


async def test_count_is_clamped_snippets_and_output_are_capped(tmp_path: Path) -> None:
    many = [WebResult(f"T{i}", f"https://e.x/{i}", "word " * 400) for i in range(12)]
    provider = FakeProvider(many)
    outcome = await search(
        tmp_path, ToolRegistry([web_search_for(provider)]), query="q", max_results=50
    )
    assert provider.queries == [("q", 10)]
    assert outcome.content.startswith('10 web results for "q"')  # extra results cut
    assert "…" in outcome.content  # each snippet shortened
    assert all(len(line) <= 303 for line in outcome.content.splitlines())
    small = ToolSettings(output_cap_chars=1000)
    capped = await search(tmp_path, ToolRegistry([web_search_for(provider)]), small, query="q")
    assert len(capped.content) <= 1000
    assert "characters omitted" in capped.content


async def test_no_results_suggests_other_words(tmp_path: Path) -> None:
    outcome = await search(tmp_path, ToolRegistry([web_search_for(FakeProvider([]))]), query="q")
    assert outcome.ok
    assert outcome.content == 'No web results for "q" (via fake); try other words.'


async def test_empty_query_is_refused(tmp_path: Path) -> None:
    outcome = await search(tmp_path, ToolRegistry([web_search_for(FakeProvider())]), query=" ")
    assert not outcome.ok
    assert outcome.content == "Error: query is empty; pass the words to search the web for."


@pytest.mark.skipif(not ddgs_installed(), reason="the ddgs package is not installed")
async def test_offline_result_from_the_default_tool(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The real default tool, auto-selected ddgs, with the network shut off (a closed proxy).
    monkeypatch.setenv("DDGS_PROXY", f"http://127.0.0.1:{closed_port()}")
    outcome = await search(tmp_path, default_registry(ToolSettings()), query="latest python")
    assert not outcome.ok  # a failed call: shown as such, never cached
    assert outcome.content == (
        "Error: web search is not available: no network connection (ddgs could not reach any "
        f"search engine: the connection was refused); {ADVICE}"
    )


async def test_unconfigured_result_from_the_default_tool(tmp_path: Path) -> None:
    settings = ToolSettings(web_search=WebSearchSettings(provider="tavily"))
    outcome = await search(tmp_path, default_registry(settings), settings, query="q")
    assert not outcome.ok
    assert outcome.content == (
        "Error: web search is not available: Tavily is configured but has no API key; set "
        f"TAVILY_API_KEY or tools.web_search.api_key; {ADVICE}"
    )


async def test_a_hanging_provider_is_stopped_before_the_registry_limit(tmp_path: Path) -> None:
    settings = ToolSettings(default_timeout=1.5)
    registry = ToolRegistry([web_search_for(SlowProvider())])
    outcome = await search(tmp_path, registry, settings, query="q")
    assert outcome.content == (
        f"Error: web search is not available: fake did not answer within 1 s; {ADVICE}"
    )


async def test_a_provider_bug_still_reads_as_not_available(tmp_path: Path) -> None:
    outcome = await search(tmp_path, ToolRegistry([web_search_for(BuggyProvider())]), query="q")
    assert not outcome.ok
    assert outcome.content.startswith(
        "Error: web search is not available: fake failed (KeyError: 'results')"
    )


# --- session tool memory ----------------------------------------------------------------


async def test_identical_queries_in_a_session_search_once(make_agent: AgentFactory) -> None:
    provider = FakeProvider([WebResult("Kuzu", "https://kuzu.example", "an embedded graph")])
    agent, model = make_agent(
        [
            reply("", call("web_search", query="kuzu graph database")),
            reply("", call("web_search", query=" kuzu graph database ")),
            reply("Kuzu is an embedded graph database."),
        ],
        tools=[web_search_for(provider)],
    )
    events = await collect(agent.send("what is kuzu?"))
    model.add(reply("", call("web_search", query="kuzu graph database")), reply("Same."))
    events += await collect(agent.send("and again?"))
    agent.close()
    results = [e for e in events if isinstance(e, ToolResultEvent)]
    assert [(r.ok, r.cached) for r in results] == [(True, False), (True, True), (True, True)]
    assert provider.queries == [("kuzu graph database", 5)]  # the provider ran once
    assert "web_search query=kuzu graph database (cached" in run_context(model.requests[-1])


async def test_a_failed_search_is_not_remembered(make_agent: AgentFactory) -> None:
    provider = FakeProvider(failures=1)
    agent, _ = make_agent(
        [
            reply("", call("web_search", query="q")),
            reply("", call("web_search", query="q")),
            reply("done"),
        ],
        tools=[web_search_for(provider)],
    )
    events = await collect(agent.send("search q"))
    agent.close()
    results = [e for e in events if isinstance(e, ToolResultEvent)]
    assert [(r.ok, r.cached) for r in results] == [(False, False), (True, False)]
    assert len(provider.queries) == 2  # the retry reached the provider and succeeded
