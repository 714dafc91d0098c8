"""``shiyi mcp`` over stdio, started by the official ``mcp`` client as Claude Code would:
as the configured user, on the store directly or through a running ``shiyi serve``."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from shiyi.memory.lock import StoreLock
from tests.interfaces.cli.conftest import Cli, shiyi_executable
from tests.interfaces.cli.test_service_cli import start_owner
from tests.interfaces.mcp.test_mcp_http import TOOLS, call, error

MEMORY = "memory:\n  embedder: none\n"


async def stdio_scenario(cli: Cli) -> dict[str, Any]:
    command, *args = shiyi_executable()
    params = StdioServerParameters(
        command=command, args=[*args, "mcp"], env=dict(cli.env), cwd=cli.workspace
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
        await client.initialize()
        assert {t.name for t in (await client.list_tools()).tools} == TOOLS
        added = await call(client, "add_memory", text="I prefer green tea", kind="preference")
        fact_id = added["fact"]["id"]
        found = await call(client, "search_memory", query="green tea", mode="keyword")
        assert [h["id"] for h in found["hits"]] == [fact_id]
        slipped = await call(client, "search_memory", query="the grean tea", mode="keyword")
        assert [h["id"] for h in slipped["hits"]] == [fact_id]
        assert slipped["read_as"] == {"grean": "green"}
        assert slipped["_text"].startswith('Searched "grean" as "green".\n')
        assert "no memory" in await error(client, "get_memory", id="fact_nothing")
        # a fact as long as the HTTP API takes at most, and no longer: a 560 KB one had made
        # every later list of memories outgrow the client's 1 MiB event limit
        too_long = await error(client, "add_memory", text="paddle " * 15_000)
        assert "100000" in too_long.replace(",", "") and "text" in too_long
        assert "at least 1" in await error(client, "add_memory", text="")
        nothing = await error(client, "update_memory", id=fact_id)
        assert "give what to change" in nothing
        return added


@pytest.mark.parametrize("served", [False, True], ids=["local", "served"])
def test_stdio_tools_act_as_the_configured_user(cli: Cli, served: bool) -> None:
    cli.script([{"text": "ok"}])
    cli.config((cli.workspace / "shiyi.yaml").read_text() + MEMORY)
    server = start_owner(cli, "serve", "--port", "0") if served else None
    try:
        added = anyio.run(stdio_scenario, cli)
    finally:
        if server is not None:
            server.send_signal(signal.SIGTERM)
            server.communicate(timeout=60)
    # Stored for the configured user either way: the CLI (same identity) finds it.
    shown = cli.run("memory", "show", added["fact"]["id"])
    assert shown.returncode == 0 and "green tea" in shown.stdout


def test_a_busy_store_is_said_by_each_tool_until_it_is_free(cli: Cli) -> None:
    """Another process without an API (``shiyi run``, an import) holds the store: the MCP
    server had exited before the handshake, which a client shows only as "disconnected"."""
    cli.script([{"text": "ok"}])
    cli.config((cli.workspace / "shiyi.yaml").read_text() + MEMORY + "  lock_timeout: 0\n")
    held = StoreLock(Path(cli.env["SHIYI_HOME"]) / "memory")
    held.acquire()

    async def scenario() -> None:
        command, *args = shiyi_executable()
        params = StdioServerParameters(
            command=command, args=[*args, "mcp"], env=dict(cli.env), cwd=cli.workspace
        )
        async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            busy = await error(client, "search_memory", query="tea")
            assert f"in use by pid {os.getpid()}" in busy and "once the store is free" in busy
            held.release()
            await call(client, "add_memory", text="I prefer green tea")
            found = await call(client, "search_memory", query="green tea", mode="keyword")
            assert [h["text"] for h in found["hits"]] == ["I prefer green tea"]

    try:
        anyio.run(scenario)
    finally:
        held.release()
