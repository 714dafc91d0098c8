"""What a long-running server keeps stays bounded however many sessions and messages it
meets (issue 29: RSS 282 MB -> 2,149 MB after 4,225 messages, unchanged at idle).  Counted
structurally, not by RSS: the loaded agents, and the statements Kuzu prepares (it keeps
each one's native memory for good).  bench/server_rss_bench.py measures the RSS itself."""

from __future__ import annotations

from collections import Counter
from typing import Any

import kuzu
import pytest

from shiyi.llm.scripted import reply
from tests.interfaces.server.conftest import Live, LiveFactory, stream_events


def talk(server: Live, session: str, text: str) -> None:
    events = stream_events(server.client, session, text)
    [end] = [data for kind, data in events if kind == "run_end"]
    assert end["status"] == "completed", end


def test_idle_agents_beyond_the_cap_are_closed_and_reload_their_session(
    live: LiveFactory,
) -> None:
    server = live([reply("noted")], repeat_last=True, memory=False, max_idle_agents=3)
    sessions = [server.session() for _ in range(8)]
    for number, session in enumerate(sessions):
        talk(server, session, f"the kettle is number {number}")
        assert server.service.loaded_agents <= 3

    talk(server, sessions[0], "which kettle was it?")  # its agent was closed: reloaded
    history = [m.content for m in server.model.requests[-1].messages]
    assert any("the kettle is number 0" in text for text in history)
    assert server.service.loaded_agents <= 3


def test_the_graph_prepares_each_statement_once_per_connection(
    live: LiveFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every parameterised statement was prepared anew (``conn.execute(query, params)``),
    and Kuzu 0.11.3 never gives a prepared statement's memory back: ~400 KB a message."""
    prepared: Counter[str] = Counter()
    real = kuzu.Connection._prepare

    def counted(self: kuzu.Connection, query: str, parameters: Any = None) -> Any:
        prepared[query] += 1
        return real(self, query, parameters)

    monkeypatch.setattr(kuzu.Connection, "_prepare", counted)
    server = live([reply("noted")], repeat_last=True)
    memory = server.service.memory
    assert memory is not None
    for number in range(16):
        talk(server, server.session(), f"Ada Lovelace fixed kettle number {number} today")
        memory.worker.drain()  # small transactions, message by message, as a server runs
    graph = memory.store.graph
    assert sum(prepared.values()) > 0
    most, count = prepared.most_common(1)[0]
    # Once per connection, in each of the two statement caches (schema's and queries').
    assert count <= 2 * len(graph._connections), (count, most)
