"""`shiyi run` does its own memory work after the reply (a bounded wait), or says plainly
what waits, why and what will process it; `shiyi memory jobs` shows the backlog.

A real CLI subprocess with a real store; the main model and the ``fast`` (extraction) model
are scripted providers, each with its own script.
"""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from shiyi.events import MemoryWork
from tests.interfaces.cli.conftest import Cli, json_events
from tests.interfaces.cli.test_service_cli import start_owner, stop

SAID = "I live in Berlin and I prefer green tea"


def extraction(*facts: dict[str, Any], delay: float = 0.0) -> dict[str, Any]:
    """One fast-model reply: the extraction tool call with these facts."""
    call = {"name": "record_memories", "arguments": {"facts": list(facts)}}
    return {"tool_calls": [call], "delay": delay}


LIVES = {"key": "lives in", "value": "Berlin", "confidence": 0.95, "about": ["user"]}
TEA = {"key": "prefers drink", "value": "green tea", "kind": "preference", "confidence": 0.9}
STANDUP = {"key": "standup time", "value": "ten", "kind": "decision", "confidence": 0.9}
NOTHING = extraction()  # the session's consolidation finds nothing more


@pytest.fixture(params=("embedded", "postgres"))
def store(request: pytest.FixtureRequest) -> str:
    """``memory.store``: the embedded Kuzu + SQLite files, or a PostgreSQL database."""
    if request.param == "postgres":
        return str(request.getfixturevalue("postgres_url"))
    return "embedded"


def configure(cli: Cli, fast: list[dict[str, Any]] | None, store: str = "embedded") -> None:
    """Scripted main model; ``fast``: the extraction model's script (None: no usable fast
    model, the embedded tiny one, which shiyi does not extract with)."""
    main = cli.workspace / "main.json"
    main.write_text(json.dumps([{"text": "Noted: Berlin, green tea."}] * 3), encoding="utf-8")
    if fast is None:
        role = "    provider: local\n"
    else:
        script = cli.workspace / "fast.json"
        script.write_text(json.dumps(fast), encoding="utf-8")
        role = f"    provider: scripted\n    model_path: {script}\n"
    cli.config(
        f"models:\n  main:\n    provider: scripted\n    model_path: {main}\n  fast:\n{role}"
        f"memory:\n  embedder: none\n  store: '{store}'\n"
    )


def facts(cli: Cli) -> dict[str, str]:
    """The active facts extraction and consolidation wrote (not the runs' archives)."""
    exported = cli.run("memory", "export")
    assert exported.returncode == 0, exported.stderr
    records = [json.loads(line) for line in exported.stdout.splitlines()]
    learned = [r for r in records if r["node"] == "fact" and r["source"] != "archive"]
    return {r["key"]: r["value"] for r in learned if r["status"] == "active"}


def memory_line(stderr: str) -> str:
    lines = [ln for ln in stderr.splitlines() if ln.startswith("memory: ") and "…" not in ln]
    assert len(lines) == 1, stderr
    return lines[0]


def job_rows(cli: Cli) -> dict[str, list[str]]:
    shown = cli.run("memory", "jobs")
    assert shown.returncode == 0, shown.stderr
    return {line.split()[0]: line.split() for line in shown.stdout.splitlines()[1:]}


def test_run_learns_its_facts_before_it_exits(cli: Cli, store: str) -> None:
    # Extraction of the message, then the session's consolidation (queued as the run ends).
    configure(cli, [extraction(LIVES, TEA), extraction(STANDUP)], store)
    result = cli.run("run", SAID)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("Noted: Berlin, green tea.")  # the reply came first
    learned = {"lives in": "Berlin", "prefers drink": "green tea", "standup time": "ten"}
    assert facts(cli) == learned
    line = memory_line(result.stderr)
    assert line == "memory: 3 facts learned; this run's memory work is done"
    jobs = cli.run("memory", "jobs").stdout
    assert jobs.splitlines()[-1] == "nothing waits"
    assert job_rows(cli)["extract"][1:5] == ["0", "0", "0", "1"]  # pending running failed done


def test_a_new_value_is_reported_as_replacing_the_old(cli: Cli, store: str) -> None:
    moved = {**LIVES, "value": "Paris"}
    configure(cli, [extraction(LIVES), NOTHING], store)
    assert cli.run("run", SAID).returncode == 0
    configure(cli, [extraction(moved), NOTHING], store)
    result = cli.run("run", "I moved to Paris")
    assert result.returncode == 0, result.stderr
    assert memory_line(result.stderr) == (
        "memory: 1 fact learned (1 replaced an older value); this run's memory work is done"
    )
    assert facts(cli)["lives in"] == "Paris"


def test_without_a_fast_model_run_says_the_facts_wait_and_how(cli: Cli, store: str) -> None:
    configure(cli, None, store)
    result = cli.run("run", SAID)
    assert result.returncode == 0, result.stderr
    line = memory_line(result.stderr)
    assert line.startswith("memory: nothing new learned; 2 jobs (1 consolidate, 1 extract) wait")
    assert "no usable `fast` model to extract with (configure models.fast)" in line
    assert "once models.fast is configured, they run on the next `shiyi chat`" in line
    assert "`shiyi worker`" in line and "`shiyi memory jobs --run`" in line
    assert facts(cli) == {}

    rows = job_rows(cli)
    for kind in ("extract", "consolidate"):
        assert rows[kind][1:5] == ["1", "0", "0", "0"]  # pending running failed done
        assert "no usable `fast` model" in " ".join(rows[kind])
    assert rows["ingest"][1:5] == ["0", "0", "0", "2"]
    last = cli.run("memory", "jobs").stdout.splitlines()[-1]
    assert last.startswith("2 jobs wait; once models.fast is configured, they run on the next")

    # With a fast model configured, the command the message names does the work.
    configure(cli, [extraction(LIVES, TEA), NOTHING], store)
    assert cli.run("memory", "jobs", "--run").returncode == 0
    assert facts(cli) == {"lives in": "Berlin", "prefers drink": "green tea"}


def test_a_request_to_remember_is_kept_and_counted_without_a_fast_model(
    cli: Cli, store: str
) -> None:
    configure(cli, None, store)  # the main model answers without calling remember
    result = cli.run("run", "Remember that I live in Berlin.")
    assert result.returncode == 0, result.stderr
    line = memory_line(result.stderr)
    assert line.startswith("memory: 1 fact learned; 2 jobs (1 consolidate, 1 extract) wait")
    assert facts(cli) == {"lives in": "I live in Berlin."}


def test_json_mode_ends_with_a_memory_work_event(cli: Cli) -> None:
    configure(cli, None)
    result = cli.run("run", "--json", "--memory-wait", "0", SAID)
    assert result.returncode == 0, result.stderr
    events = json_events(result.stdout)
    assert [e.type for e in events][-2:] == ["run_end", "memory_work"]
    work = events[-1]
    assert isinstance(work, MemoryWork)
    assert work.outcome == "waiting" and work.learned == 0
    # The turns are in the graph (flushed before exit); model work and the archive wait.
    assert work.waiting == {"extract": 1, "consolidate": 1, "archive": 1}
    assert "no usable `fast` model" in work.reason and "--memory-wait 0" in work.reason
    assert "`shiyi memory jobs --run`" in work.how
    assert work.message == memory_line(result.stderr)


def test_ctrl_c_during_the_wait_leaves_the_jobs_queued(cli: Cli) -> None:
    slow = extraction(LIVES, TEA, delay=0.05)  # ~6 s of streamed arguments
    configure(cli, [slow, NOTHING, NOTHING])
    proc = cli.popen("run", SAID)
    assert proc.stderr is not None
    seen = ""
    deadline = time.monotonic() + 60
    while "finishing this run's memory work" not in seen:
        assert time.monotonic() < deadline and proc.poll() is None, seen
        seen += proc.stderr.readline()
    proc.send_signal(signal.SIGINT)
    try:
        out, err = proc.communicate(timeout=60)
    finally:
        stop(proc)
    assert proc.returncode == 0, err  # the run itself completed
    assert out.startswith("Noted: Berlin, green tea.")
    line = memory_line(seen + err)
    assert "; interrupted: " in line and " stay queued; they run on the next" in line, line
    assert "1 consolidate" in line  # queued after the reply: the wait never reached it
    assert "Traceback" not in err
    rows = job_rows(cli)
    assert rows["consolidate"][1] == "1"  # still pending, not lost
    assert cli.run("memory", "jobs", "--run").returncode == 0
    assert job_rows(cli)["consolidate"][1:5] == ["0", "0", "0", "1"]
    assert facts(cli) == {"lives in": "Berlin", "prefers drink": "green tea"}


def test_a_wait_that_runs_out_says_what_is_left_and_why(cli: Cli) -> None:
    # ~7 s of streamed arguments: longer than the wait even when a loaded machine is slow to
    # reach it (the worker starts extracting as soon as the reply is stored)
    slow = extraction(LIVES, TEA, delay=0.06)
    configure(cli, [slow, NOTHING])
    result = cli.run("run", "--memory-wait", "0.5", SAID)
    assert result.returncode == 0, result.stderr
    line = memory_line(result.stderr)
    assert "timed out after 0.5 s (memory.run_wait / --memory-wait)" in line, line
    assert "1 consolidate" in line and "they run on the next `shiyi chat`" in line
    assert job_rows(cli)["consolidate"][1] == "1"
    assert cli.run("memory", "jobs", "--run").returncode == 0
    assert job_rows(cli)["consolidate"][1:5] == ["0", "0", "0", "1"]


def test_a_served_store_takes_the_run_s_memory_work(cli: Cli) -> None:
    configure(cli, [extraction(LIVES, TEA), NOTHING])
    server = start_owner(cli, "serve", "--port", "0")
    try:
        result = cli.run("run", "--json", SAID)
        assert result.returncode == 0, result.stderr
        work = json_events(result.stdout)[-1]
        assert isinstance(work, MemoryWork) and work.outcome == "handed_off"
        assert f"(pid {server.pid}) owns the memory store and processes this run's" in (
            memory_line(result.stderr)
        )
        assert cli.run("memory", "jobs", "--run").returncode == 0  # waits for the service
        assert facts(cli) == {"lives in": "Berlin", "prefers drink": "green tea"}
    finally:
        server.send_signal(signal.SIGTERM)
        server.communicate(timeout=30)


def test_a_served_store_without_a_fast_model_shows_what_waits(cli: Cli) -> None:
    configure(cli, None)
    server = start_owner(cli, "serve", "--port", "0")
    try:
        result = cli.run("run", SAID)
        assert result.returncode == 0, result.stderr
        assert "owns the memory store and processes" in memory_line(result.stderr)
        assert cli.run("memory", "jobs", "--run").returncode == 0  # what is due is done
        rows = job_rows(cli)  # through the service's API
        assert rows["extract"][1] == "1"
        assert "no usable `fast` model" in " ".join(rows["extract"])
        last = cli.run("memory", "jobs").stdout.splitlines()[-1]
        assert last == (
            "1 job wait; the service's worker runs them as they come due; extraction also"
            " needs models.fast configured (then restart it)"
        )
    finally:
        server.send_signal(signal.SIGTERM)
        server.communicate(timeout=30)


def test_memory_wait_setting_is_documented_in_the_help(cli: Cli, tmp_path: Path) -> None:
    shown = cli.run("run", "--help")
    assert "--memory-wait" in shown.stdout and "memory.run_wait" in shown.stdout
