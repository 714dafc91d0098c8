"""`shiyi memory ...` end to end as subprocesses on a real store."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

from bench.synthetic import generate

from tests.interfaces.cli.conftest import Cli


def test_add_search_show_forget(cli: Cli) -> None:
    added = cli.run("memory", "add", "The VPN config lives in ops/vpn.conf", "--kind", "convention")
    assert added.returncode == 0, added.stderr
    fact_id = added.stdout.split()[1]
    found = cli.run("memory", "search", "vpn.conf", "--mode", "keyword")
    assert fact_id in found.stdout
    assert "convention" in found.stdout
    as_json = cli.run("memory", "search", "where is the VPN configuration?", "--json")
    first = json.loads(as_json.stdout.splitlines()[0])
    assert first["id"] == fact_id
    assert "vector" in first["paths"]
    shown = cli.run("memory", "show", fact_id)
    assert json.loads(shown.stdout)["kind"] == "convention"
    gone = cli.run("memory", "forget", fact_id, "--yes")
    assert "deleted 1 of 1" in gone.stdout
    assert fact_id not in cli.run("memory", "search", "vpn.conf", "--mode", "keyword").stdout


def test_import_locomo_then_stats_search_expand_export(cli: Cli) -> None:
    dataset = cli.workspace / "conv.json"
    dataset.write_text(json.dumps(generate(conversations=1, sessions=3, turns=8, seed=3)))
    imported = cli.run("memory", "import", str(dataset), timeout=300)
    assert imported.returncode == 0, imported.stderr
    assert "imported 24 turns from 1 conversations" in imported.stdout
    stats = dict(
        line.split() for line in cli.run("memory", "stats").stdout.splitlines() if line.strip()
    )
    assert stats["events"] == "24"
    assert stats["embedded_events"] == "24"
    assert stats["pending_jobs"] == "0"
    hits = cli.run("memory", "search", "room number", "--json").stdout.splitlines()
    key = json.loads(hits[0])["anchor"]  # run:iteration:segment, as the API gives it
    around = cli.run("memory", "expand", key, "--window", "1").stdout.splitlines()
    assert 2 <= len(around) <= 3
    assert any(key in line for line in around)
    assert cli.run("memory", "add", "I prefer window seats", "--kind", "preference").returncode == 0
    exported = [json.loads(line) for line in cli.run("memory", "export").stdout.splitlines()]
    assert [r["node"] for r in exported].count("event") == 24
    assert exported[-1]["value"] == "I prefer window seats"
    assert exported[0]["ts"] <= exported[23]["ts"]
    jobs = cli.run("memory", "jobs").stdout
    assert "ingest" in jobs
    assert "failed #" not in jobs
    relinked = cli.run("memory", "relink")
    assert relinked.returncode == 0, relinked.stderr
    assert re.search(r"24 of 24 turns linked \([\d,]+/s, ETA 0 s\)", relinked.stderr)
    entities = int(stats["entities"])
    assert f"linked 24 turns; the graph has {entities:,} entities" in relinked.stdout


def test_second_process_is_told_who_holds_the_store(cli: Cli) -> None:
    cli.script([{"text": "slow " * 100, "delay": 0.05}])
    # A chat that does not serve its API: the store is simply busy.
    cli.config((cli.workspace / "shiyi.yaml").read_text() + "server:\n  chat_port: null\n")
    holder = cli.popen("chat")
    try:
        assert holder.stdout is not None
        deadline = time.monotonic() + 60
        while (cli.workspace.parent / "cli-home" / "memory" / "owner.lock").exists() is False:
            assert time.monotonic() < deadline
            time.sleep(0.1)
        time.sleep(1.0)
        cli.env["SHIYI_MEMORY__LOCK_TIMEOUT"] = "0.5"
        result = cli.run("memory", "stats")
        assert result.returncode == 2
        assert f"in use by pid {holder.pid}" in result.stderr
        assert "Traceback" not in result.stderr
    finally:
        holder.kill()
        holder.wait(timeout=30)
    # The killed holder leaves no stuck lock behind.
    del cli.env["SHIYI_MEMORY__LOCK_TIMEOUT"]
    assert cli.run("memory", "stats").returncode == 0


def test_bad_mode_is_a_clear_error(cli: Cli) -> None:
    result = cli.run("memory", "search", "x", "--mode", "fuzzy")
    assert result.returncode == 2
    assert "unknown --mode 'fuzzy'" in result.stderr


def test_mistakes_a_newcomer_makes_get_a_clear_answer(cli: Cli, tmp_path: Path) -> None:
    added = cli.run("memory", "add", "I like oolong tea")
    assert added.returncode == 0, added.stderr
    fact_id = added.stdout.split()[1]
    typo = cli.run("memory", "forget", "-y", "fact_typo123", fact_id)
    assert typo.returncode == 2
    assert "no memory with id 'fact_typo123'; nothing was deleted" in typo.stderr
    assert cli.run("memory", "show", fact_id).returncode == 0  # the good id was kept too
    no_hits = cli.run("memory", "search", "tea", "--limit", "0")
    assert no_hits.returncode == 2 and "--limit" in no_hits.stderr
    empty = cli.run("memory", "add", "  ")
    assert empty.returncode == 2 and "the text to remember is empty" in empty.stderr
    missing = cli.run("memory", "list", "-c", str(tmp_path / "nope.yaml"))
    assert missing.returncode == 2 and "--config" in missing.stderr
    assert "SHIYI_CONFIG" not in missing.stderr
    long = cli.run("memory", "add", "tea " * 5000)
    assert long.returncode == 0 and "(19,999 characters" in long.stdout  # stored stripped
    assert len(long.stdout) < 1000


def test_a_data_dir_that_is_a_file_is_named_not_a_traceback(cli: Cli, tmp_path: Path) -> None:
    a_file = tmp_path / "not-a-folder"
    a_file.write_text("x")
    cli.env["SHIYI_HOME"] = str(a_file)
    result = cli.run("memory", "list")
    assert result.returncode == 2
    assert f"the data dir {a_file} is a file, not a folder" in result.stderr
    assert "Traceback" not in result.stderr
    cli.env["SHIYI_HOME"] = str(a_file / "inside")
    inside = cli.run("memory", "add", "x")
    assert inside.returncode == 2 and "is a file, not a folder" in inside.stderr
