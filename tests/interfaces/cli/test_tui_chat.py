"""`shiyi chat` end to end: the terminal UI in a real (tmux) terminal, and the plain fallback.

The scripted model makes a 3-step plan, reads a file in step 1 and queries memory in step 2.
Content is awaited with a bounded poll; nothing here depends on timing.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.interfaces.cli.conftest import Cli, shiyi_executable

STEPS = [
    {"title": "Read the notes"},
    {"title": "Recall what I know"},
    {"title": "Write the answer"},
]
SCRIPT: list[dict[str, Any]] = [
    {"text": "Let me plan this.", "tool_calls": [
        {"name": "create_plan", "arguments": {"goal": "review notes", "steps": STEPS}}]},
    {"tool_calls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}]},
    {"tool_calls": [{"name": "update_plan", "arguments": {"step": 1, "status": "completed"}},
                    {"name": "update_plan", "arguments": {"step": 2, "status": "in_progress"}}]},
    {"tool_calls": [{"name": "query_memory", "arguments": {"query": "Bluefinch codename"}}]},
    {"tool_calls": [{"name": "update_plan", "arguments": {"step": 2, "status": "completed"}},
                    {"name": "update_plan", "arguments": {"step": 3, "status": "in_progress"}}]},
    {"tool_calls": [{"name": "update_plan", "arguments": {"step": 3, "status": "completed"}}]},
    {"text": "notes.txt holds alpha and beta; releases are called Bluefinch."},
    {"text": "slow " * 400, "delay": 0.05},  # a second turn, for Ctrl-C
]  # fmt: skip


def prepare(cli: Cli) -> str:
    """A workspace with notes.txt, a remembered preference (its id returned), the script."""
    (cli.workspace / "notes.txt").write_text("alpha\nbeta\n")
    cli.script(SCRIPT)
    # No extraction jobs (the scripted model cannot serve them) and no API server: the chat
    # is only the terminal.
    cli.config(
        (cli.workspace / "shiyi.yaml").read_text()
        + "memory:\n  lifecycle:\n    extraction: false\nserver:\n  chat_port: null\n"
    )
    added = cli.run("memory", "add", "I call every release Bluefinch", "--kind", "preference")
    assert added.returncode == 0, added.stderr
    return added.stdout.split()[1]


class Tmux:
    """One tmux server on its own socket, running a single 80x40 pane."""

    def __init__(self, socket: Path, env: dict[str, str]) -> None:
        self.base = ["tmux", "-S", str(socket)]
        self.env = env

    def __call__(self, *args: str) -> str:
        done = subprocess.run(
            [*self.base, *args], env=self.env, capture_output=True, text=True, timeout=30
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    def screen(self) -> str:
        return self("capture-pane", "-p", "-S", "-")

    def wait_for(self, predicate: str | re.Pattern[str], timeout: float = 120) -> str:
        """Poll the pane until it shows ``predicate`` (bounded; fails with the screen)."""
        deadline = time.monotonic() + timeout
        while True:
            shown = self.screen()
            found = predicate in shown if isinstance(predicate, str) else predicate.search(shown)
            if found:
                return shown
            assert time.monotonic() < deadline, f"never showed {predicate!r}:\n{shown}"
            time.sleep(0.2)


@pytest.fixture
def tmux(tmp_path: Path, cli: Cli) -> Iterator[Tmux]:
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed (apt-get install -y tmux)")
    session = Tmux(tmp_path / "tmux.sock", {**cli.env, "TERM": "xterm-256color"})
    yield session
    subprocess.run([*session.base, "kill-server"], capture_output=True, timeout=30)


def test_tui_shows_plan_progress_tools_memories_and_tokens(
    cli: Cli, tmux: Tmux, tmp_path: Path
) -> None:
    fact_id = prepare(cli)
    command = " ".join(shlex.quote(part) for part in [*shiyi_executable(), "chat"])
    tmux(
        "new-session", "-d", "-x", "80", "-y", "40", "-c", str(cli.workspace),
        f"{command}; echo '[chat exited]'; sleep 600",
    )  # fmt: skip
    tmux.wait_for("you ›")
    tmux("send-keys", "-t", "0", "review my notes", "Enter")
    shown = tmux.wait_for(re.compile(r"completed [\d.]+ s ─+\nyou ›"))
    (tmp_path / "tui-screen.txt").write_text(shown, encoding="utf-8")
    lines = shown.splitlines()
    turn = lines[lines.index("you › review my notes") + 1 :]
    assert turn[:9] == [
        "Let me plan this.",
        "Plan:",
        "  [1/3 Read the notes]       ███░░░░░░░ done ✓",
        turn[3],
        "  [2/3 Recall what I know]   ██████░░░░ done ✓",
        turn[5],
        "  [3/3 Write the answer]     ██████████ done ✓",
        "notes.txt holds alpha and beta; releases are called Bluefinch.",
        turn[8],
    ]
    assert re.fullmatch(r"      ✓ read_file path=notes\.txt · \d+ ms · 1\| alpha", turn[3])
    assert re.fullmatch(
        r"      ✓ query_memory query=Bluefinch codename · .* · → memory panel", turn[5]
    )
    assert re.fullmatch(r"── memory · \d+ from 1 query ─+", turn[8])
    panel = turn[9 : turn.index("you ›") - 1]
    assert any(
        line.split()[:3] == ["preference", "100%", fact_id] and "Bluefinch" in line
        for line in panel
    ), panel
    footer = turn[turn.index("you ›") - 1]
    assert re.fullmatch(
        r"── [1-9]\d* in / [1-9]\d* out tokens · chat \d+ tokens · completed .*", footer
    )
    assert all(len(line) <= 80 for line in lines)
    # Commands still work, Ctrl-C cancels the run in progress, and Ctrl-D leaves.
    tmux("send-keys", "-t", "0", "/help", "Enter")
    tmux.wait_for("/resume ID  continue a session")
    tmux("send-keys", "-t", "0", "keep talking", "Enter")
    tmux.wait_for("slow slow slow")
    tmux("send-keys", "-t", "0", "C-c")
    tmux.wait_for(re.compile(r"· cancelled by the user [\d.]+ s ─*\nyou ›"))
    tmux("send-keys", "-t", "0", "C-d")
    tmux.wait_for("[chat exited]")


def test_chat_without_a_terminal_prints_plain_lines(cli: Cli) -> None:
    fact_id = prepare(cli)
    result = cli.run("chat", input="review my notes\n")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    start = lines.index("Plan:")
    assert lines[start : start + 6] == [
        "Plan:",
        "  1. Read the notes",
        "  2. Recall what I know",
        "  3. Write the answer",
        "[1/3 Read the notes…]      ░░░░░░░░░░",
        lines[start + 5],
    ]
    assert lines[start + 5].startswith("  ✓ read_file path=notes.txt · ")
    assert "[3/3 Write the answer]     ██████████ done ✓" in lines
    assert "\x1b" not in result.stdout  # no colour, no cursor movement
    assert "── memory" not in result.stdout and fact_id not in result.stdout
    assert re.search(r"^\d+ in / \d+ out tokens$", result.stdout, re.MULTILINE)
