"""A ``server.json`` left by an earlier boot blocks nothing: the real CLI with real pids."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

from shiyi.client.owner import read_owner
from tests.interfaces.cli.conftest import Cli, shiyi_executable
from tests.interfaces.cli.test_service_cli import home, start_owner

EXEC_AS_OWNER = """
import json, os, sys, time
# What a restarted container does: the new server gets the pid the old record names.
path = os.path.join(os.environ["SHIYI_HOME"], "server.json")
os.makedirs(os.environ["SHIYI_HOME"], exist_ok=True)
with open(path, "w") as f:
    json.dump({"pid": os.getpid(), "address": "http://127.0.0.1:1",
               "started_at": time.time(), "command": "shiyi serve"}, f)
os.execv(sys.argv[1], sys.argv[1:])
"""


def stale_record(cli: Cli, pid: int, started_at: float) -> Path:
    path = home(cli) / "server.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    body = {"pid": pid, "address": "http://127.0.0.1:1", "started_at": started_at}
    path.write_text(json.dumps({**body, "command": "shiyi serve"}), encoding="utf-8")
    return path


def test_a_record_naming_an_unrelated_live_pid_blocks_nothing(cli: Cli) -> None:
    cli.script([{"text": "hello"}, {"text": "again"}])
    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        path = stale_record(cli, sleeper.pid, time.time())
        found = cli.run("memory", "search", "anything", "--mode", "keyword")
        assert found.returncode == 0, found.stderr
        assert f"cleared a stale owner record of pid {sleeper.pid}" in found.stderr
        assert str(path) in found.stderr and "not shiyi" in found.stderr
        stale_record(cli, sleeper.pid, time.time())
        ran = cli.run("run", "say hello")
        assert ran.returncode == 0, ran.stderr
        assert "hello" in ran.stdout
        stale_record(cli, sleeper.pid, time.time())
        server = start_owner(cli, "serve", "--port", "0")
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
    finally:
        sleeper.kill()
        sleeper.wait(timeout=10)


def test_a_record_naming_a_process_started_after_it_blocks_nothing(cli: Cli) -> None:
    later = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        stale_record(cli, later.pid, time.time() - 3600)  # written before a restart
        found = cli.run("memory", "search", "anything", "--mode", "keyword")
        assert found.returncode == 0, found.stderr
        assert "after the record was written" in found.stderr
    finally:
        later.kill()
        later.wait(timeout=10)


def test_serve_starts_over_a_record_naming_its_own_pid(cli: Cli) -> None:
    cli.script([{"text": "hello"}])
    command = [sys.executable, "-c", EXEC_AS_OWNER, *shiyi_executable(), "serve", "--port", "0"]
    server = subprocess.Popen(
        command, cwd=cli.workspace, env=cli.env, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while True:
            assert server.poll() is None, server.communicate()
            assert time.monotonic() < deadline, "serve did not start"
            owner = read_owner(home(cli))
            if owner is not None and not owner.address.endswith(":1"):
                break  # its own record replaced the stale one
            time.sleep(0.1)
        assert owner.pid == server.pid
        # The real owner now: a second server is refused with the file and the way out.
        second = cli.run("serve", "--port", "0")
        assert second.returncode == 2
        assert f"already served by pid {server.pid}" in second.stderr
        assert str(home(cli) / "server.json") in second.stderr
        assert "delete that file" in second.stderr
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
