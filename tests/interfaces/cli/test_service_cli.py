"""One owner of the store: ``shiyi serve``/``shiyi chat`` own the data dir, other ``shiyi``
commands go through their API, and a killed owner's record is detected and cleared."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import httpx

from shiyi.client.owner import read_owner
from tests.interfaces.cli.conftest import Cli, json_events

REMEMBER = {
    "text": "Noting it.",
    "tool_calls": [{"name": "remember", "arguments": {"text": "The staging port is 6543"}}],
}


def home(cli: Cli) -> Path:
    return Path(cli.env["SHIYI_HOME"])


def start_owner(cli: Cli, *args: str) -> subprocess.Popen[str]:
    """Start an owning process and wait until its API answers."""
    proc = cli.popen(*args)
    deadline = time.monotonic() + 60
    while True:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the owner did not start serving"
        owner = read_owner(home(cli))
        if owner is not None and owner.pid == proc.pid:
            try:
                if httpx.get(f"{owner.address}/healthz", timeout=2).status_code == 200:
                    return proc
            except httpx.TransportError:
                pass
        time.sleep(0.1)


def stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.kill()
    proc.wait(timeout=30)


def test_serve_subprocess_serves_two_cli_processes(cli: Cli) -> None:
    cli.script([REMEMBER, {"text": "Noted."}])
    cli.config((cli.workspace / "shiyi.yaml").read_text() + "memory:\n  embedder: none\n")
    server = start_owner(cli, "serve", "--port", "0")
    try:
        owner = read_owner(home(cli))
        assert owner is not None and owner.address.startswith("http://127.0.0.1:")
        assert httpx.get(f"{owner.address}/openapi.json", timeout=5).json()["info"]["title"]
        # Two other CLI processes at once, neither opening the database itself.
        run = cli.popen("run", "--json", "remember the staging port")
        stats = cli.run("memory", "stats")
        out, err = run.communicate(timeout=120)
        assert run.returncode == 0, err
        events = json_events(out)
        assert [e.type for e in events[:2]] == ["routed", "run_start"]
        assert any(e.type == "tool_result" and e.ok for e in events)  # type: ignore[union-attr]
        assert stats.returncode == 0, stats.stderr
        assert f"using the running service of pid {server.pid}" in stats.stderr
        assert "facts" in stats.stdout
        found = cli.run("memory", "search", "staging port", "--mode", "keyword")
        assert found.returncode == 0, found.stderr
        assert "The staging port is 6543" in found.stdout
        refused = cli.run("memory", "compact")  # rewrites files the server has open
        assert refused.returncode == 2 and f"pid {server.pid}" in refused.stderr
        assert "Traceback" not in refused.stderr
        second = cli.run("serve", "--port", "0")
        assert second.returncode == 2 and "already served by pid" in second.stderr
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
    assert read_owner(home(cli)) is None  # a clean shutdown removes its record


def test_with_only_users_configured_the_owners_own_commands_still_work(cli: Cli) -> None:
    """server.users and no server.token: the configured identity had no token, and the
    CLI's commands met 401 while the server ran."""
    cli.script([{"text": "hello"}])
    users = '  users:\n    - {token: "alice-token-0123456789", user_id: alice}\n'
    cli.config((cli.workspace / "shiyi.yaml").read_text() + f"server:\n{users}"
               "memory:\n  embedder: none\n")  # fmt: skip
    server = start_owner(cli, "serve", "--port", "0")
    try:
        added = cli.run("memory", "add", "I keep bees on the allotment")
        assert added.returncode == 0, added.stderr
        assert f"using the running service of pid {server.pid}" in added.stderr
        found = cli.run("memory", "search", "bees", "--mode", "keyword")
        assert found.returncode == 0 and "allotment" in found.stdout, found.stderr
        owner = read_owner(home(cli))
        assert owner is not None and owner.token  # the owner's own, in the 0600 record
        alice = httpx.get(
            f"{owner.address}/v1/memory/search",
            params={"q": "bees"},
            headers={"Authorization": "Bearer alice-token-0123456789"},
            timeout=10,
        )
        assert alice.status_code == 200 and "allotment" not in alice.text  # not hers
        nobody = httpx.get(f"{owner.address}/v1/memory/search", params={"q": "bees"}, timeout=10)
        assert nobody.status_code == 401
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)


def test_stale_owner_after_kill_9_is_cleared(cli: Cli) -> None:
    cli.script([{"text": "hello"}])
    server = start_owner(cli, "serve", "--port", "0")
    os.kill(server.pid, signal.SIGKILL)
    server.wait(timeout=30)
    record = home(cli) / "server.json"
    assert json.loads(record.read_text())["pid"] == server.pid  # left behind
    result = cli.run("memory", "stats")
    assert result.returncode == 0, result.stderr
    assert f"cleared a stale owner record of pid {server.pid}" in result.stderr
    assert "events" in result.stdout and not record.exists()
    again = start_owner(cli, "serve", "--port", "0")  # the store opens again too
    stop(again)


def test_chat_owns_the_store_and_serves_other_commands(cli: Cli) -> None:
    cli.script([{"text": "hello"}])
    chat = start_owner(cli, "chat")
    try:
        added = cli.run("memory", "add", "Lunch is at noon")
        assert added.returncode == 0, added.stderr
        assert "using the running service" in added.stderr
        found = cli.run("memory", "search", "lunch", "--mode", "keyword")
        assert "Lunch is at noon" in found.stdout
        refused = cli.run("chat", input="/exit\n")
        assert refused.returncode == 2 and f"pid {chat.pid}" in refused.stderr
        assert chat.stdin is not None
        chat.stdin.write("/exit\n")
        chat.stdin.flush()
        assert chat.wait(timeout=30) == 0
    finally:
        stop(chat)
    assert read_owner(home(cli)) is None
