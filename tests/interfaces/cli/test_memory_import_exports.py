"""`shiyi memory import` on ChatGPT's and Claude's conversations.json: each message's time
survives the round trip through the store to a memory search."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.interfaces.cli.conftest import Cli
from tests.interfaces.cli.test_memory_served_parity import owner
from tests.memory.transfer.import_formats.exports import T0, chatgpt_export, claude_export


def _hits(cli: Cli, query: str) -> list[dict[str, object]]:
    shown = cli.run("memory", "search", query, "--mode", "keyword", "--json")
    assert shown.returncode == 0, shown.stderr
    return [json.loads(line) for line in shown.stdout.splitlines() if line.strip()]


@pytest.mark.parametrize("served", [False, True], ids=["local", "served"])
def test_import_chatgpt_and_claude_exports_keeping_times(cli: Cli, served: bool) -> None:
    chatgpt = cli.workspace / "chatgpt" / "conversations.json"
    chatgpt.parent.mkdir()
    chatgpt.write_text(json.dumps(chatgpt_export()), encoding="utf-8")
    claude = cli.workspace / "claude" / "conversations.json"
    claude.parent.mkdir()
    claude.write_text(json.dumps(claude_export()), encoding="utf-8")
    cli.config("memory:\n  embedder: none\n")
    with owner(cli, served) as server:
        _import_and_search(cli, chatgpt, claude, server is not None)


def _import_and_search(cli: Cli, chatgpt: Path, claude: Path, served: bool) -> None:
    done = cli.run("memory", "import", str(chatgpt), timeout=300)
    assert ("using the running service" in done.stderr) == served, done.stderr
    assert done.returncode == 0, done.stderr
    assert "imported 6 turns from 2 conversations" in done.stdout
    done = cli.run("memory", "import", str(claude), timeout=300)
    assert done.returncode == 0, done.stderr
    assert "imported 4 turns from 2 conversations" in done.stdout

    greyhound = [h for h in _hits(cli, "greyhound Biscuit") if h["node"] == "event"]
    assert greyhound and "retired greyhound" in str(greyhound[0]["text"])
    assert greyhound[0]["ts"] == T0
    clint = [h for h in _hits(cli, "sourdough Clint acetone") if h["node"] == "event"]
    assert clint and clint[0]["ts"] == 1717316100.0  # 2024-06-02T08:15:00Z
    assert not [h for h in _hits(cli, "Pixel") if h["node"] == "event"]  # edited away


def test_an_unknown_export_names_the_formats(cli: Cli) -> None:
    odd = cli.workspace / "odd.json"
    odd.write_text(json.dumps([{"messages": [{"role": "user", "content": "hi"}]}]))
    failed = cli.run("memory", "import", str(odd))
    assert failed.returncode != 0
    assert "ChatGPT" in failed.stderr and "Claude" in failed.stderr
    assert "speaker_a/b" not in failed.stderr
