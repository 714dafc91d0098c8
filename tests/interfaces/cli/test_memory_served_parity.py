"""Every ``shiyi memory`` command the API offers works the same with or without a running
``shiyi serve`` owning the data dir: the same commands, run as real subprocesses, once on
the store directly and once through a real server, give the same outcome."""

from __future__ import annotations

import json
import signal
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from tests.interfaces.cli.conftest import Cli
from tests.interfaces.cli.test_service_cli import start_owner


@contextmanager
def owner(cli: Cli, served: bool) -> Iterator[subprocess.Popen[str] | None]:
    if not served:
        yield None
        return
    server = start_owner(cli, "serve", "--port", "0")
    try:
        yield server
    finally:
        server.send_signal(signal.SIGTERM)
        server.communicate(timeout=60)


class Memory:
    """``shiyi memory ...`` that checks where each command ran."""

    def __init__(self, cli: Cli, server: subprocess.Popen[str] | None) -> None:
        self.cli, self.server = cli, server

    def __call__(self, *args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
        done = self.cli.run("memory", *args)
        assert (done.returncode == 0) == ok, (args, done.stdout, done.stderr)
        assert "Traceback" not in done.stderr
        through = self.server is not None and f"service of pid {self.server.pid}" in done.stderr
        assert through == (self.server is not None), (args, done.stderr)
        return done


def anchor_key(hit: dict[str, object]) -> str:
    anchor = hit["anchor"]
    if isinstance(anchor, dict):  # the local --json prints the anchor's fields
        return f"{anchor['run_id']}:{anchor['iteration']}:{anchor['segment']}"
    assert isinstance(anchor, str)
    return anchor


# No vectors (keyword search is enough here) and no agent may write shared memory.
MEMORY = "memory:\n  embedder: none\n  lifecycle:\n    workspace_writers: []\n"


@pytest.mark.parametrize("served", [False, True], ids=["local", "served"])
def test_every_memory_command_works_the_same_with_a_running_server(cli: Cli, served: bool) -> None:
    cli.script([{"text": "Noted: Miso the cat."}])
    cli.config((cli.workspace / "shiyi.yaml").read_text() + MEMORY)
    with owner(cli, served) as server:
        memory = Memory(cli, server)
        ran = cli.run("run", "my cat is called Miso")
        assert ran.returncode == 0, ran.stderr

        berlin = memory("add", "Berlin", "--key", "lives in")
        assert "(semantic): lives in: Berlin" in berlin.stdout
        berlin_id = berlin.stdout.split()[1]
        paris = memory("add", "Paris", "--key", "lives in")
        paris_id = paris.stdout.split()[1]
        assert paris_id != berlin_id and "lives in: Paris" in paris.stdout
        assert f"replaces {berlin_id}: Berlin" in paris.stdout  # told what it now believes
        again = memory("add", "Paris", "--key", "lives in").stdout
        assert again.startswith(f"already remembered {paris_id}") and "no copy made" in again
        trunk = memory("add", "We merge to trunk", "--kind", "convention", "--scope", "agent")
        assert "(convention): We merge to trunk" in trunk.stdout
        refused = memory("add", "Shared secret", "--scope", "workspace", ok=False)
        assert "memory.lifecycle.workspace_writers" in refused.stderr

        listed = memory("list").stdout.splitlines()
        assert {line.split()[0] for line in listed} >= {paris_id, trunk.stdout.split()[1]}
        assert berlin_id not in "".join(listed)  # superseded: not current
        past = memory("list", "--status", "superseded").stdout.splitlines()
        assert [line.split()[:4] for line in past] == [
            [berlin_id, "semantic", "superseded", "user"]
        ]
        conventions = memory("list", "--kind", "convention", "--scope", "agent", "--json").stdout
        assert [json.loads(line)["value"] for line in conventions.splitlines()] == [
            "We merge to trunk"
        ]
        wrong = cli.run("memory", "list", "--kind", "nope")  # refused before reaching anyone
        assert wrong.returncode == 2 and "--kind 'nope' is not known" in wrong.stderr

        found = memory("search", "Paris", "--mode", "keyword").stdout
        assert paris_id in found and berlin_id not in found  # Paris superseded Berlin
        shown = json.loads(memory("show", paris_id).stdout)
        assert (shown["id"], shown["value"], shown["status"]) == (paris_id, "Paris", "active")

        history = memory("history", "--key", "lives in").stdout.splitlines()
        assert [line.split()[3] for line in history] == ["superseded", "active"]
        assert berlin_id in history[0] and paris_id in history[1]
        # An unknown name: no answer says whether any user's memories hold it.
        assert "no facts for that slot" in memory("history", "--entity", "Nobody").stdout

        health = json.loads(memory("health", "--json").stdout)
        # The run's archive is a fact too: count only what this test added.
        assert health["by_status"]["superseded"] == 1 and health["by_scope"]["agent"] == 1
        assert any(line.startswith("  by scope") for line in memory("health").stdout.splitlines())
        assert "facts" in memory("stats").stdout

        hits = [json.loads(line) for line in memory("search", "Miso", "--json").stdout.splitlines()]
        hit = next(h for h in hits if h["node"] == "event" and "called Miso" in h["text"])
        around = memory("expand", anchor_key(hit)).stdout
        assert "my cat is called Miso" in around and "Noted: Miso the cat." in around

        assert "deleted 1 of 1" in memory("forget", berlin_id, "--yes").stdout
        assert "no memory" in memory("show", berlin_id, ok=False).stderr
        history = memory("history", "--key", "lives in").stdout
        assert berlin_id not in history and paris_id in history

        queue = memory("jobs", "--run").stdout
        assert "ingest" in queue and "failed #" not in queue
        exported = [json.loads(line) for line in memory("export").stdout.splitlines()]
        said = [r["content"] for r in exported if r["node"] == "event"]
        assert said[:2] == ["my cat is called Miso", "Noted: Miso the cat."]
        facts = {r["id"]: r for r in exported if r["node"] == "fact"}
        assert facts[paris_id]["value"] == "Paris" and berlin_id not in facts
        assert memory("export", "--out", "all.jsonl").stdout.startswith(f"wrote {len(exported)}")

        # Import: read here, sent in parts when served; the same lines either way.
        talk = cli.workspace / "talk.jsonl"
        said_then = [f"I adopted a ferret named Pip in year {i}" for i in range(3)]
        talk.write_text("\n".join(
            json.dumps({"speaker": "Caroline", "text": text, "timestamp": 1.7e9 + i,
                        "dia_id": f"D1:{i}"}) for i, text in enumerate(said_then)))  # fmt: skip
        done = memory("import", str(talk))
        assert "imported 3 turns from 1 conversations" in done.stdout
        assert "processed 3 of 3 turns" in done.stderr and "stored as" not in done.stdout
        found = memory("search", "ferret Pip", "--mode", "keyword", "--json").stdout
        hits = [json.loads(line) for line in found.splitlines()]
        assert sorted(h["id"] for h in hits) == [f"talk:D1:{i}" for i in range(3)]
        lines = memory("search", "ferret Pip", "--mode", "keyword").stdout.splitlines()
        assert [line.split()[2] for line in lines] == ["imported"] * 3  # the turns' kind

        # Forget by query and by entity: listed, then gone (through POST /v1/memory/forget).
        gone = memory("forget", "--query", "We merge to trunk", "--limit", "1", "--yes").stdout
        assert trunk.stdout.split()[1] in gone and "forgot query 'We merge to trunk'" in gone
        assert "merge to trunk" not in memory("search", "trunk", "--mode", "keyword").stdout
        miso = memory("forget", "--entity", "Miso", "--yes").stdout
        assert "forgot entity 'Miso'" in miso
        assert "called Miso" not in memory("search", "Miso cat", "--mode", "keyword").stdout
        assert "Miso" in memory("forget", "--entity", "Miso", "--yes", ok=False).stderr
