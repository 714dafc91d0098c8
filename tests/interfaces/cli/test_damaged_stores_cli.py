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


def test_doctor_reports_and_rebuilds_an_empty_graph(cli: Cli) -> None:
    memory = remembered_turn(cli)
    healthy = cli.run("doctor")
    assert healthy.returncode == 0, healthy.stderr + healthy.stdout
    assert "graph.kuzu           events 2" in healthy.stdout
    assert "ok: every copy agrees" in healthy.stdout
    (memory / "graph.kuzu").write_bytes(b"")
    found = cli.run("doctor")
    assert found.returncode == 1
    assert "problem   graph.kuzu: the memory graph" in found.stdout
    assert "is empty (0 bytes)" in found.stdout
    rebuilt = cli.run("doctor", "--rebuild-graph")
    assert rebuilt.returncode == 0, rebuilt.stdout + rebuilt.stderr
    assert "repaired  graph.kuzu" in rebuilt.stdout and "rebuilt 2 turns" in rebuilt.stdout
    assert len(list(memory.glob("graph.kuzu.damaged-*"))) == 1
    searched = cli.run("memory", "search", "deploy key", "--mode", "keyword")
    assert searched.returncode == 0, searched.stderr
    assert "vault path secret/deploy" in searched.stdout
    assert cli.run("doctor").returncode == 0


def test_doctor_repairs_a_damaged_summary_cache(cli: Cli) -> None:
    remembered_turn(cli)
    cache = home(cli) / "summaries.sqlite3"
    cache.write_bytes(GARBAGE)
    found = cli.run("doctor")
    assert found.returncode == 1
    assert "problem   summaries.sqlite3: the summary cache is damaged" in found.stdout
    assert "`shiyi doctor --repair`" in found.stdout
    repaired = cli.run("doctor", "--repair")
    assert repaired.returncode == 0, repaired.stdout
    assert [p.read_bytes() for p in home(cli).glob("summaries.sqlite3.corrupt-*")] == [GARBAGE]


def test_doctor_refuses_while_another_process_owns_the_store(cli: Cli) -> None:
    from shiyi.client.owner import remove_owner, write_owner

    remembered_turn(cli)
    write_owner(home(cli), "http://127.0.0.1:1")  # this live test process "serves" it
    try:
        refused = cli.run("doctor")
    finally:
        remove_owner(home(cli))
    assert refused.returncode == 2
    assert "`shiyi doctor` needs the memory store" in refused.stderr
    assert str(home(cli) / "server.json") in refused.stderr


def test_a_rebuild_killed_half_way_is_refused_then_finished(cli: Cli) -> None:
    import importlib.util  # noqa: F401  (kuzu's arrow import needs it loaded)
    import os
    import time

    from shiyi.memory.kuzu.store import EmbeddedStore
    from shiyi.memory.models import EntityRecord, EventRecord

    memory = remembered_turn(cli)
    store = EmbeddedStore(memory, dimension=384)
    try:  # enough turns that the rebuild takes a while
        turns = [EventRecord(f"bulk{i}", "s_bulk", "r", 1e9 + i, "user", f"bulk note {i} on ops",
                             "user_message", i) for i in range(4000)]  # fmt: skip
        store.add_events(turns)
        store.upsert_entities([EntityRecord("ops")])
        store.link_mentions([(t.id, "ops") for t in turns])
    finally:
        store.close()
    (memory / "graph.kuzu").write_bytes(b"")
    marker = memory / "graph.kuzu.rebuilding"
    rebuild = cli.popen("doctor", "--rebuild-graph")
    deadline = time.monotonic() + 120
    while not marker.exists():
        assert rebuild.poll() is None and time.monotonic() < deadline, rebuild.communicate()
        time.sleep(0.001)
    os.kill(rebuild.pid, signal.SIGKILL)
    rebuild.wait(timeout=30)

    found = cli.run("doctor")
    assert found.returncode == 1, found.stdout
    assert "graph.kuzu: the memory graph" in found.stdout and "is incomplete" in found.stdout
    refused = cli.run("memory", "search", "bulk", "--mode", "keyword")
    assert refused.returncode == 2 and "shiyi doctor --rebuild-graph` again" in refused.stderr
    finished = cli.run("doctor", "--rebuild-graph")
    assert finished.returncode == 0, finished.stdout
    assert "rebuilt 4,002 turns, 4,006 entity links, 1 facts" in finished.stdout
    healthy = cli.run("doctor")
    assert healthy.returncode == 0, healthy.stdout
    assert "entities 5 " in healthy.stdout  # 'ops' and the remembered turn's 4


def test_doctor_on_a_mistyped_data_dir_says_there_is_nothing_and_makes_nothing(
    cli: Cli, tmp_path: Path
) -> None:
    typo = tmp_path / "shiyi-hmoe"
    cli.env["SHIYI_HOME"] = str(typo)
    checked = cli.run("doctor")
    assert checked.returncode == 1
    assert f"no shiyi data at {typo}: nothing to check" in checked.stderr
    assert "every copy agrees" not in checked.stdout
    assert not typo.exists()
