"""`shiyi memory forget` while `shiyi serve` owns the store: the run's archive quoting the
message goes too, the output says the bytes stay in the graph file until compacted and how,
and `shiyi memory compact` then leaves none in any file of the data dir."""

from __future__ import annotations

import signal
import time

from tests.interfaces.cli.conftest import Cli
from tests.interfaces.cli.test_service_cli import home, start_owner, stop

WORD = "okapi-9043"


def _hits(cli: Cli, mode: str) -> list[str]:
    """The ids `shiyi memory search WORD` prints (second column of each hit line)."""
    found = cli.run("memory", "search", WORD, "--mode", mode, "--limit", "10")
    assert found.returncode == 0, found.stderr
    return [line.split()[1] for line in found.stdout.splitlines() if WORD in line]


def _wait_for_archive(cli: Cli) -> list[str]:
    deadline = time.monotonic() + 60
    while True:
        ids = _hits(cli, "keyword")
        if any(i.startswith("fact_") for i in ids) or time.monotonic() > deadline:
            return ids
        time.sleep(0.5)


def test_forget_through_the_server_reaches_the_archive_and_says_bytes_remain(cli: Cli) -> None:
    cli.script([{"text": "Filed it under the blue folder."}])  # the reply does not quote it
    cli.config((cli.workspace / "shiyi.yaml").read_text() + "memory:\n  embedder: none\n")
    server = start_owner(cli, "serve", "--port", "0")
    try:
        ran = cli.run("run", "--json", f"my {WORD} locker code is 4417")
        assert ran.returncode == 0, ran.stderr
        ids = _wait_for_archive(cli)
        [event] = [i for i in ids if i.startswith("ev_")]
        assert any(i.startswith("fact_") for i in ids), ids  # the run's archive quotes it

        forgot = cli.run("memory", "forget", event, "--yes")
        assert forgot.returncode == 0, forgot.stderr
        assert "deleted 1 of 1" in forgot.stdout
        assert "bytes remain on disk in" in forgot.stdout and "graph.kuzu" in forgot.stdout
        assert "stop `shiyi serve`" in forgot.stdout
        assert "run `shiyi memory compact`" in forgot.stdout
        for mode in ("keyword", "graph", "hybrid"):
            assert _hits(cli, mode) == [], mode
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)

    graph = next(home(cli).rglob("graph.kuzu"))
    assert WORD.encode() in graph.read_bytes()  # what the note said: still on disk
    compacted = cli.run("memory", "compact")
    assert compacted.returncode == 0, compacted.stderr
    assert "compacted the memory files" in compacted.stdout
    leaks = [p for p in home(cli).rglob("*") if p.is_file() and WORD.encode() in p.read_bytes()]
    assert leaks == []


def test_compact_is_refused_while_the_server_runs(cli: Cli) -> None:
    cli.script([{"text": "hello"}])
    server = start_owner(cli, "serve", "--port", "0")
    try:
        refused = cli.run("memory", "compact")
        assert refused.returncode == 2 and f"pid {server.pid}" in refused.stderr
    finally:
        stop(server)


def test_memory_health_shows_the_servers_cache_hit_rates(cli: Cli) -> None:
    """While `shiyi serve` owns the data dir, `shiyi memory health` asks it: the hit rates
    are the server's (a search repeated through the CLI is a hit there)."""
    cli.script([{"text": "hello"}])
    cli.config((cli.workspace / "shiyi.yaml").read_text() + "memory:\n  embedder: none\n")
    server = start_owner(cli, "serve", "--port", "0")
    try:
        for _ in range(3):
            assert cli.run("memory", "search", WORD, "--mode", "keyword").returncode == 0
        health = cli.run("memory", "health")
        assert health.returncode == 0, health.stderr
        [line] = [x for x in health.stdout.splitlines() if x.startswith("cache retrieval")]
        assert line.split(None, 3)[3] == "2 hits, 1 misses (66.7 %)"
        assert "cache system prompt" in health.stdout and "cache embeddings" in health.stdout
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
