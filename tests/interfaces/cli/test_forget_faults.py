"""A forget cut off half way, through the real CLI: `shiyi doctor --repair` finishes it and
never copies the half-forgotten turn back; and the SIGKILL suite (``bench/fault_forget_bench.py``)
in small."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

from bench.fault_forget_bench import run_faults

from shiyi.memory.kuzu.store import EmbeddedStore
from tests.interfaces.cli.conftest import Cli
from tests.interfaces.cli.test_service_cli import home

SECRET = "osprey-4471"
SAID = f"the vault code is {SECRET}"


def half_forgotten(memory_dir: Path, event_id: str) -> None:
    """What a forget killed after its first deletes leaves: its journal entry, the turn out
    of the SQLite mirror and keyword index, still in the graph and the session log."""
    journal = memory_dir / "forgetting"
    journal.mkdir()
    entry = {"target": f"ids {event_id}", "event_ids": [event_id], "events": 1,
             "text_hashes": [hashlib.sha256(SAID.encode()).hexdigest()]}  # fmt: skip
    (journal / "0001.json").write_text(json.dumps(entry), encoding="utf-8")
    store = EmbeddedStore(memory_dir, dimension=384)
    try:
        store.event_rows.delete([event_id])
        store.keywords.delete([event_id])
    finally:
        store.close()


def test_doctor_repair_finishes_an_interrupted_forget_instead_of_restoring_it(cli: Cli) -> None:
    cli.script([{"text": "Noted."}])
    assert cli.run("run", SAID).returncode == 0
    found = cli.run("memory", "search", SECRET, "--mode", "keyword", "--json")
    event_id = json.loads(found.stdout.splitlines()[0])["id"]
    half_forgotten(home(cli) / "memory", event_id)

    checked = cli.run("doctor")
    assert checked.returncode == 1, checked.stdout
    assert "problem   forget journal: 1 forget(s) of 1 memories did not finish" in checked.stdout
    assert "missing from the mirror" not in checked.stdout  # not offered to copy back
    repaired = cli.run("doctor", "--repair")
    assert repaired.returncode == 0, repaired.stdout
    assert "repaired  forget journal" in repaired.stdout and "finished them" in repaired.stdout
    assert "copied" not in repaired.stdout
    again = cli.run("doctor")
    assert again.returncode == 0, again.stdout
    assert "graph.kuzu           events 1 " in again.stdout  # the reply's turn only
    gone = cli.run("memory", "search", SECRET, "--mode", "keyword")
    assert "No memories matched." in gone.stdout
    with sqlite3.connect(home(cli) / "sessions.sqlite3") as log:
        quoting = "SELECT count(*) FROM messages WHERE content LIKE ?"
        assert log.execute(quoting, (f"%{SECRET}%",)).fetchone() == (0,)


def test_kills_during_forget_leave_stores_that_agree(tmp_path: Path) -> None:
    result = run_faults(tmp_path, kills=4, turns=30, seed_=5)
    assert result.kills == 4
    assert result.problems == []
    assert (result.came_back, result.disagree, result.doctor_exit) == (0, 0, 0)
    assert result.kept >= 30 - 3 * 4 - 3  # what was never asked to go is all still there
