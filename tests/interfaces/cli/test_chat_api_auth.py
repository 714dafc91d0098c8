"""The chat's loopback API is no open door (issue 29, item 1): a sandboxed command cannot
reach it, and a program that finds its port gets 401 without the per-start token that only
the owner's ``server.json`` holds; the owner's own CLI commands still go through it."""

from __future__ import annotations

import socket
import stat
import time
from pathlib import Path

import httpx

from shiyi.client.owner import owner_path, read_owner
from tests.interfaces.cli.conftest import Cli
from tests.interfaces.cli.test_service_cli import home, start_owner, stop


def free_port() -> int:
    with socket.create_server(("127.0.0.1", 0)) as probe:
        return int(probe.getsockname()[1])


def probe_step(port: int) -> dict[str, object]:
    command = (
        f"python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), 3); "
        "print('CONNECTED')\" > probe.txt 2>&1; echo done >> probe.txt"
    )
    return {"text": "Probing.", "tool_calls": [{"name": "bash", "arguments": {"command": command}}]}


def wait_for_probe(path: Path) -> str:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().rstrip().endswith("done"):
            return path.read_text()
        time.sleep(0.1)
    raise AssertionError("the chat never ran the probe")


def test_the_chat_api_needs_its_token_and_is_out_of_the_sandbox_s_reach(cli: Cli) -> None:
    port = free_port()
    cli.script([probe_step(port), {"text": "Probed."}])
    config = (cli.workspace / "shiyi.yaml").read_text()
    cli.config(config + f"server:\n  chat_port: {port}\nmemory:\n  embedder: none\n")
    chat = start_owner(cli, "chat")
    try:
        owner = read_owner(home(cli))
        assert owner is not None and owner.address == f"http://127.0.0.1:{port}"
        assert owner.token, "the chat recorded no token"
        assert stat.S_IMODE(owner_path(home(cli)).stat().st_mode) == 0o600
        sessions = f"{owner.address}/v1/sessions"
        assert httpx.get(sessions, timeout=10).status_code == 401
        bearer = {"authorization": f"Bearer {owner.token}"}
        assert httpx.get(sessions, headers=bearer, timeout=10).status_code == 200
        # The owner's other commands read the token from server.json.
        added = cli.run("memory", "add", "Lunch is at noon")
        assert added.returncode == 0, added.stderr
        assert "using the running service" in added.stderr
        found = cli.run("memory", "search", "lunch", "--mode", "keyword")
        assert "Lunch is at noon" in found.stdout, found.stderr
        # The model's bash, in the chat's sandbox, does not reach the port at all.
        assert chat.stdin is not None
        chat.stdin.write("probe the api\n")
        chat.stdin.flush()
        probed = wait_for_probe(cli.workspace / "probe.txt")
        assert "CONNECTED" not in probed
        assert "Connection refused" in probed or "unreachable" in probed
        chat.stdin.write("/exit\n")
        chat.stdin.flush()
        assert chat.wait(timeout=30) == 0
    finally:
        stop(chat)
    assert read_owner(home(cli)) is None
