"""`shiyi memory add --key` supersedes, `history` shows every version, bad kinds are refused."""

from __future__ import annotations

from tests.interfaces.cli.conftest import Cli


def test_history_shows_what_a_newer_value_replaced(cli: Cli) -> None:
    first = cli.run("memory", "add", "Berlin", "--key", "Lives_In")
    assert first.returncode == 0, first.stderr
    assert "(semantic): lives in: Berlin" in first.stdout
    assert cli.run("memory", "add", "Munich", "--key", "lives in").returncode == 0
    result = cli.run("memory", "history", "--key", "lives in")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 2
    assert "superseded" in lines[0] and "lives in: Berlin" in lines[0]
    assert "→ now" in lines[1] and "active" in lines[1] and "lives in: Munich" in lines[1]


def test_add_refuses_an_unknown_kind_and_history_needs_a_slot(cli: Cli) -> None:
    bad = cli.run("memory", "add", "x", "--kind", "gossip")
    assert bad.returncode != 0 and "not a memory kind" in bad.stderr
    assert "preference" in bad.stderr
    empty = cli.run("memory", "history")
    assert empty.returncode != 0 and "--key" in empty.stderr


def test_a_statement_of_no_slot_points_to_where_its_old_version_is_kept(cli: Cli) -> None:
    assert cli.run("memory", "add", "I usually go running on Mondays.").returncode == 0
    newer = cli.run("memory", "add", "I usually go running on Tuesdays now.")
    assert newer.returncode == 0, newer.stderr
    assert "replaces" in newer.stdout and "on Mondays." in newer.stdout
    hint = "(kept in history: shiyi memory list --status superseded)"
    assert hint in newer.stdout and "--key ''" not in newer.stdout  # no key to ask by
    kept = cli.run("memory", "list", "--status", "superseded")
    assert kept.returncode == 0, kept.stderr
    assert "superseded" in kept.stdout and "I usually go running on Mondays." in kept.stdout
