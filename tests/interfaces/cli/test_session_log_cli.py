"""A lost, reset or emptied session log through the real CLI and files (issue 29, item 4):
new messages are still remembered, an empty log is refused and left as it is, and `shiyi
doctor` finds messages whose ids a log from before epochs let an older log's turns take."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from shiyi.sessions.log import SessionLog
from tests.interfaces.cli.conftest import Cli
from tests.interfaces.cli.test_damaged_stores_cli import remembered_turn
from tests.interfaces.cli.test_service_cli import home

NEW = "the parking spot is P7-quokka"


def said_and_searchable(cli: Cli, text: str, word: str) -> bool:
    cli.script([{"text": "noted"}])
    ran = cli.run("run", text)
    assert ran.returncode == 0, ran.stderr
    found = cli.run("memory", "search", word, "--mode", "keyword")
    assert found.returncode == 0, found.stderr
    return word in found.stdout


def test_new_messages_are_remembered_after_the_log_is_moved_aside(cli: Cli) -> None:
    remembered_turn(cli)
    log = home(cli) / "sessions.sqlite3"
    log.rename(log.with_name("sessions.sqlite3.aside"))  # what the corrupt-log error says
    assert said_and_searchable(cli, NEW, "P7-quokka")
    old = cli.run("memory", "search", "deploy key", "--mode", "keyword")
    assert "vault path secret/deploy" in old.stdout  # the older log's turns stay
    doctor = cli.run("doctor")
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    assert "turns of messages this log no longer has" in doctor.stdout


def test_an_empty_log_is_refused_not_replaced(cli: Cli) -> None:
    remembered_turn(cli)
    log = home(cli) / "sessions.sqlite3"
    log.write_bytes(b"")
    for args in (("run", "hello"), ("sessions", "list")):
        ran = cli.run(*args)
        assert ran.returncode != 0, ran.stdout
        assert "Traceback" not in ran.stderr
        assert f"the session log {log} is empty (0 bytes)" in ran.stderr
        assert f"mv {log} {log}.empty" in ran.stderr
    assert log.stat().st_size == 0  # nothing was created over it
    doctor = cli.run("doctor")
    assert doctor.returncode == 1
    assert f"problem   sessions.sqlite3: the session log {log} is empty" in doctor.stdout
    found = cli.run("memory", "search", "deploy key", "--mode", "keyword")
    assert "vault path secret/deploy" in found.stdout  # memory is untouched


def _log_from_before_epochs(path: Path) -> None:
    """A log as shiyi wrote it before epochs: its rows keep the epoch-less ids."""
    SessionLog(path).close()
    with sqlite3.connect(path) as db:
        db.execute("INSERT OR REPLACE INTO meta VALUES ('legacy_through', '1000000')")


def test_doctor_finds_and_repairs_messages_an_older_logs_turns_displaced(cli: Cli) -> None:
    log = home(cli) / "sessions.sqlite3"
    _log_from_before_epochs(log)
    remembered_turn(cli)  # turns ev_1_0, ev_2_0 ...
    log.rename(log.with_name("sessions.sqlite3.aside"))
    _log_from_before_epochs(log)  # the new log restarted at row 1: the ids are taken
    assert not said_and_searchable(cli, NEW, "P7-quokka")  # what older versions did

    found = cli.run("doctor")
    assert found.returncode == 1, found.stdout
    assert "logged messages never reached memory: their ids are held by turns of an older" in (
        found.stdout
    )
    repaired = cli.run("doctor", "--repair")
    assert "queued" in repaired.stdout, repaired.stdout + repaired.stderr
    assert cli.run("memory", "jobs", "--run").returncode == 0
    found = cli.run("memory", "search", "P7-quokka", "--mode", "keyword")
    assert "P7-quokka" in found.stdout
    again = cli.run("doctor")
    assert again.returncode == 0, again.stdout + again.stderr
