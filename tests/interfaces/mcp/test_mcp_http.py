"""The MCP tools over streamable HTTP on a real ``shiyi serve`` app, called with the official
``mcp`` client: the tools listed, each one called, errors as tool errors, users apart."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx2
import pytest
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from tests.interfaces.server.conftest import LiveFactory
from tests.interfaces.server.two_users import A_TOKEN, B_TOKEN, users

TOOLS = {
    "add_memory", "search_memory", "list_memories", "get_memory", "update_memory",
    "delete_memory", "memory_history", "forget_memories", "expand_anchor", "list_entities",
    "search_knowledge", "memory_jobs",
}  # fmt: skip


@asynccontextmanager
async def session(url: str, token: str | None = None) -> AsyncIterator[ClientSession]:
    headers = {"authorization": f"Bearer {token}"} if token else {}
    async with (
        create_mcp_http_client(headers=headers) as http,
        streamable_http_client(f"{url}/mcp", http_client=http) as (read, write),
        ClientSession(read, write) as client,
    ):
        await client.initialize()
        yield client


async def call(client: ClientSession, tool: str, **arguments: Any) -> dict[str, Any]:
    done = await client.call_tool(tool, arguments)
    text = " ".join(getattr(block, "text", "") for block in done.content)
    assert not done.is_error, (tool, text)
    assert done.structured_content is not None and text, tool
    return dict(done.structured_content) | {"_text": text}


async def error(client: ClientSession, tool: str, **arguments: Any) -> str:
    done = await client.call_tool(tool, arguments)
    assert done.is_error, tool
    return " ".join(getattr(block, "text", "") for block in done.content)


def test_every_tool_answers_with_structured_content_and_text(live: LiveFactory) -> None:
    server = live()

    async def scenario() -> None:
        async with session(server.url) as client:
            listed = await client.list_tools()
            assert {t.name for t in listed.tools} == TOOLS
            assert all(t.description and len(t.description) < 90 for t in listed.tools)
            assert all(t.output_schema for t in listed.tools)

            added = await call(client, "add_memory", text="Paris", key="lives in")
            fact_id = added["fact"]["id"]
            assert "lives in: Paris" in added["_text"]
            assert added["fact"]["outcome"] == "new"
            moved = await call(client, "add_memory", text="I moved to Lisbon")  # no key given
            assert moved["fact"]["outcome"] == "replaced" and moved["fact"]["key"] == "lives in"
            assert [r["id"] for r in moved["fact"]["replaces"]] == [fact_id]
            assert f"It replaces 'Paris' ({fact_id}), kept in history." in moved["_text"]
            said = [
                {"role": "Caroline", "content": "I adopted a ferret named Pip",
                 "time": "2023-05-07T14:02:00Z"},
                {"role": "Melanie", "content": "Pip is a lovely name", "time": "2023-05-07T14:03"},
            ]  # fmt: skip
            queued = await call(client, "add_memory", messages=said)
            assert queued["imported"]["queued"] == 2
            await call(client, "memory_jobs")
            for _ in range(100):  # the server's worker stores the turns
                found = await call(client, "search_memory", query="ferret Pip", mode="keyword")
                if found["hits"]:
                    break
                await anyio.sleep(0.1)
            assert "2023-05-07 14:02 UTC" in found["_text"] and "Caroline" in found["_text"]
            window = await call(
                client, "search_memory", query="Pip", mode="keyword", since="2023-05-07T14:02:30Z"
            )
            assert [h["text"] for h in window["hits"]] == ["Melanie: Pip is a lovely name"]
            assert window["read_as"] == {}
            slipped = await call(client, "search_memory", query="the fferret", mode="keyword")
            assert slipped["read_as"] == {"fferret": "ferret"}
            assert slipped["_text"].startswith('Searched "fferret" as "ferret".\n')
            assert "Pip" in slipped["_text"]
            anchors = {h["anchor"] for h in found["hits"]}
            assert len(anchors) == 2, anchors  # each message its own place to expand
            anchor = next(h["anchor"] for h in found["hits"] if h["anchor"])
            around = await call(client, "expand_anchor", anchor=anchor, window=2)
            assert len(around["events"]) == 2

            got = await call(client, "get_memory", id=fact_id)
            assert got["memory"]["value"] == "Paris"
            history = await call(client, "memory_history", key="lives in")
            assert [f["status"] for f in history["facts"]] == ["superseded", "active"]
            listed_facts = await call(client, "list_memories", statuses=["superseded"])
            assert [f["id"] for f in listed_facts["facts"]] == [fact_id]
            past = await error(client, "update_memory", id=fact_id, value="Nice")
            assert "history keeps what was said" in past  # a past version is not rewritten
            edited = await call(client, "update_memory", id=moved["fact"]["id"], value="Nice")
            assert edited["value"] == "Nice"
            entities = await call(client, "list_entities")
            assert entities["entities"] == [] and entities["_text"] == "No entities."
            plan = await call(client, "forget_memories", by="query", target="ferret")
            assert plan["forgotten"] is None and plan["events"] >= 1
            gone = await call(client, "delete_memory", id=fact_id)
            assert gone["deleted"] == 1

            assert "no memory" in await error(client, "get_memory", id=fact_id)
            assert "either text" in await error(client, "add_memory")
            blank = [{"role": "user", "content": "  "}]  # had been queued as a turn
            assert "messages.0.content" in await error(client, "add_memory", messages=blank)
            assert "ISO 8601" in await error(
                client, "search_memory", query="x", since="last tuesday"
            )
            assert "knowledge base is empty" in await error(client, "search_knowledge", query="x")
            assert await error(client, "search_memory", query="x", limit=0)

    anyio.run(scenario)


def test_two_users_never_see_each_others_memories_and_a_bad_token_is_refused(
    live: LiveFactory,
) -> None:
    server = live(users=users())

    async def scenario() -> None:
        async with session(server.url, A_TOKEN) as alice, session(server.url, B_TOKEN) as bob:
            fact = await call(alice, "add_memory", text="my locker code is 4711")
            fact_id = fact["fact"]["id"]
            assert "no memory" in await error(bob, "get_memory", id=fact_id)
            assert "no memory" in await error(bob, "delete_memory", id=fact_id)
            assert "no memory" in await error(bob, "update_memory", id=fact_id, value="0")
            found = await call(bob, "search_memory", query="locker code 4711", mode="keyword")
            assert found["hits"] == []
            assert (await call(bob, "list_memories"))["facts"] == []
            assert "nothing of yours" in await error(
                bob, "forget_memories", by="query", target="locker", dry_run=False
            )
            mine = await call(alice, "search_memory", query="locker code", mode="keyword")
            assert [h["id"] for h in mine["hits"]] == [fact_id]

        response = httpx2.post(
            f"{server.url}/mcp",
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            headers={"authorization": "Bearer wrong", "accept": "application/json"},
        )
        assert response.status_code == 401
        with pytest.raises(Exception):  # noqa: B017, PT011 - the SDK's own error for a 401
            async with session(server.url, "wrong"):
                pass

    anyio.run(scenario)


def test_the_host_and_origin_checks_apply_to_mcp(live: LiveFactory) -> None:
    server = live()
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    evil = httpx2.post(f"{server.url}/mcp", json=body, headers={"origin": "https://evil.example"})
    assert evil.status_code == 403
    rebound = httpx2.post(f"{server.url}/mcp", json=body, headers={"host": "evil.example"})
    assert rebound.status_code in (400, 403, 421)


def test_listings_of_large_memories_fit_the_clients_message_limit(live: LiveFactory) -> None:
    """Twelve facts of 100,000 characters, each carried as structured content and as text,
    had made one listing a message over 1 MiB that the official client refuses; it is now
    cut to fit, says where the next page starts, and a following page holds the rest."""
    server = live()
    long_note = "the tideline survey notes " * 3_800  # 98,800 characters

    async def scenario() -> None:
        async with session(server.url) as client:
            ids = []
            for i in range(12):
                added = await call(client, "add_memory", text=f"{long_note}{i}", key=f"note {i}")
                ids.append(added["fact"]["id"])
            first = await call(client, "list_memories", limit=50)
            shown = len(first["facts"])
            assert 1 <= shown < 12 and first["total"] == 12
            assert f"next start at offset={shown}" in first["_text"]
            assert len(first["_text"]) < 12 * 2_200  # each line clipped, with the way to all
            assert f"more characters: get_memory {first['facts'][0]['id']}" in first["_text"]
            assert all(len(f["value"]) > 98_000 for f in first["facts"])  # structured: whole
            listed = [f["id"] for f in first["facts"]]
            while len(listed) < 12:
                following = await call(client, "list_memories", limit=50, offset=len(listed))
                assert following["facts"], listed
                listed += [f["id"] for f in following["facts"]]
            assert sorted(listed) == sorted(ids)

            found = await call(client, "search_memory", query="tideline survey", mode="keyword")
            assert 1 <= len(found["hits"]) < 10
            assert "more hits left out" in found["_text"]
            whole = await call(client, "get_memory", id=found["hits"][0]["id"])
            assert len(whole["_text"]) > 98_000  # one memory is shown whole

    anyio.run(scenario)
