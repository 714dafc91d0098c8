"""Damaged files in the data dir, through the real CLI: caches rebuild themselves, the graph
is never silently replaced, and `shiyi doctor` reports and repairs."""

from __future__ import annotations

import signal
from pathlib import Path

from tests.interfaces.cli.conftest import Cli
from tests.interfaces.cli.test_service_cli import home, start_owner

GARBAGE = b"\x00\x13 this is not an SQLite database \xff" * 800


def remembered_turn(cli: Cli) -> Path:
    """One real turn in the store; returns the memory directory."""
    cli.script([{"text": "The deploy key is in vault path secret/deploy."}, {"text": "ok"}])
    ran = cli.run("run", "where is the deploy key kept?")
    assert ran.returncode == 0, ran.stderr
    return home(cli) / "memory"


def test_run_and_serve_survive_a_garbage_summary_cache(cli: Cli) -> None:
    cli.script([{"text": "hello there"}])
    cache = home(cli) / "summaries.sqlite3"
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_bytes(GARBAGE)
    ran = cli.run("run", "say hello")
    assert ran.returncode == 0, ran.stderr
    assert "hello there" in ran.stdout
    assert "Traceback" not in ran.stderr
    assert f"{cache} was unreadable" in ran.stderr and "moved aside" in ran.stderr
    moved = list(cache.parent.glob("summaries.sqlite3.corrupt-*"))
    assert [p.read_bytes() for p in moved] == [GARBAGE]
    cache.write_bytes(GARBAGE)
    server = start_owner(cli, "serve", "--port", "0")
    server.send_signal(signal.SIGTERM)
    server.wait(timeout=30)


def test_an_empty_graph_is_refused_not_replaced(cli: Cli) -> None:
    memory = remembered_turn(cli)
    graph = memory / "graph.kuzu"
    graph.write_bytes(b"")
    found = cli.run("memory", "search", "deploy", "--mode", "keyword")
    assert found.returncode == 2
    assert "Traceback" not in found.stderr
    assert f"the memory graph {graph} is empty (0 bytes)" in found.stderr
    assert "shiyi doctor --rebuild-graph" in found.stderr
    assert found.stdout == ""
    ran = cli.run("run", "hello")
    assert ran.returncode == 2 and "is empty (0 bytes)" in ran.stderr
    assert graph.stat().st_size == 0  # nothing was created over it
