"""Bad input to the line commands: one clear message, the exit status, no traceback, and
nothing written or changed."""

from __future__ import annotations

import stat

from tests.interfaces.cli.conftest import Cli

MEMORY = "memory:\n  embedder: none\n"


def test_an_export_names_where_it_cannot_write_and_is_private(cli: Cli) -> None:
    cli.config(MEMORY)
    assert cli.run("memory", "add", "I keep bees").returncode == 0
    folder = cli.run("memory", "export", "-o", str(cli.workspace))
    assert folder.returncode != 0 and "is a folder: give a file name" in folder.stderr
    missing = cli.run("memory", "export", "-o", str(cli.workspace / "nope" / "x.jsonl"))
    assert missing.returncode != 0 and "does not exist: make it first" in missing.stderr
    for failed in (folder, missing):
        assert "Traceback" not in failed.stderr
    out = cli.workspace / "memories.jsonl"
    written = cli.run("memory", "export", "-o", str(out))
    assert written.returncode == 0 and "I keep bees" in out.read_text()
    assert stat.S_IMODE(out.stat().st_mode) == 0o600  # every memory: the owner's only


def test_the_same_limits_hold_with_or_without_a_server(cli: Cli) -> None:
    cli.config(MEMORY)
    huge = cli.run("memory", "add", "bee " * 31_250)  # 125,000 characters
    assert huge.returncode != 0
    assert "125,000 characters; a memory holds at most 100,000" in huge.stderr
    assert "shiyi kb add" in huge.stderr
    assert "No facts" in cli.run("memory", "list").stdout + cli.run("memory", "list").stderr


def test_empty_queries_and_out_of_range_numbers_are_refused(cli: Cli) -> None:
    cli.config(MEMORY)
    empty = cli.run("memory", "search", "  ")
    assert empty.returncode != 0 and "the query is empty" in empty.stderr
    assert "the query is empty" in cli.run("kb", "search", "").stderr
    limit = cli.run("kb", "search", "bees", "--limit", "0")
    assert limit.returncode == 2 and "--limit" in limit.stderr
    port = cli.run("serve", "--port", "99999")
    assert port.returncode == 2 and "--port" in port.stderr and "Traceback" not in port.stderr


def test_an_empty_forget_target_is_named(cli: Cli) -> None:
    cli.config(MEMORY)
    empty = cli.run("memory", "forget", "--query", "", "--yes")
    assert empty.returncode != 0 and "--query is empty: say what to forget" in empty.stderr


def test_memory_edit_changes_a_fact_and_keeps_what_it_said(cli: Cli) -> None:
    import re

    cli.config(MEMORY)
    added = cli.run("memory", "add", "Zed", "--key", "favourite editor")
    fact_id = re.search(r"fact_[0-9a-f]+", added.stdout).group()  # type: ignore[union-attr]
    edited = cli.run("memory", "edit", fact_id, "--value", "Helix", "--confidence", "0.8")
    assert edited.returncode == 0, edited.stderr
    assert f"edited {fact_id} (semantic, confidence 0.80): favourite editor: Helix" in edited.stdout
    history = cli.run("memory", "history", "--key", "favourite editor").stdout
    assert history.index("Zed") < history.index("Helix")  # the old words kept, first
    nothing = cli.run("memory", "edit", fact_id)
    assert nothing.returncode != 0 and "give what to change" in nothing.stderr
    blank = cli.run("memory", "edit", fact_id, "--value", " ")
    assert blank.returncode != 0 and "--value is empty" in blank.stderr
    missing = cli.run("memory", "edit", "fact_nope", "--value", "x")
    assert missing.returncode != 0 and "fact_nope" in missing.stderr
    assert "Traceback" not in missing.stderr
