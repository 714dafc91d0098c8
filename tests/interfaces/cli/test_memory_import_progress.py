"""`shiyi memory import` says how far it is: turns done of the total, turns/s and ETA, as a
line rewritten on a terminal and as plain lines in a log; then a summary with turns/s."""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
from pathlib import Path

from tests.interfaces.cli.conftest import Cli, shiyi_executable

TURNS = 600  # more than one worker batch of embedding (8 jobs x 64 turns): one line between


def _transcript(folder: Path, turns: int = TURNS) -> Path:
    path = folder / "talk.jsonl"
    lines = (
        json.dumps({"speaker": "Ana" if i % 2 else "Bo", "text": f"note {i}: the kiln at {i} C",
                    "timestamp": 1.7e9 + 60 * i, "dia_id": f"D1:{i}"})
        for i in range(turns)
    )  # fmt: skip
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def test_import_in_a_log_prints_plain_progress_and_a_rate(cli: Cli) -> None:
    done = cli.run("memory", "import", str(_transcript(cli.workspace)), timeout=600)
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert "\r" not in done.stderr  # a log gets whole lines, never a rewritten one
    assert lines[0] == f"processed 0 of {TURNS} turns · 0 turns/s"
    assert re.fullmatch(rf"processed {TURNS} of {TURNS} turns · [\d,]+ turns/s", lines[-1])
    summary = done.stdout.strip().splitlines()[-1]
    assert re.fullmatch(
        rf"imported {TURNS} turns from 1 conversations in [\d.]+ s \([\d,]+ turns/s\)", summary
    )
    stats = dict(line.split() for line in cli.run("memory", "stats").stdout.splitlines() if line)
    assert stats["embedded_events"] == str(TURNS)


def test_import_on_a_terminal_rewrites_one_line_with_eta(cli: Cli) -> None:
    leader, follower = pty.openpty()
    try:
        process = subprocess.run(
            [*shiyi_executable(), "memory", "import", str(_transcript(cli.workspace))],
            cwd=cli.workspace,
            env=cli.env,
            stdout=subprocess.PIPE,
            stderr=follower,
            text=True,
            timeout=600,
        )
        os.close(follower)
        follower = -1
        shown = _read_all(leader)
    finally:
        if follower >= 0:
            os.close(follower)
        os.close(leader)
    assert process.returncode == 0, shown
    states = [s for s in shown.replace("\x1b[K", "").split("\r") if s.strip()]
    assert states[0] == f"processed 0 of {TURNS} turns · 0 turns/s"
    middle = [s for s in states if "ETA" in s]
    assert middle, states  # a batch done, more to do: how long the rest takes
    assert re.fullmatch(rf"processed \d+ of {TURNS} turns · [\d,]+ turns/s · ETA \d+ s", middle[0])
    assert states[-1].rstrip("\r\n").startswith(f"processed {TURNS} of {TURNS} turns")
    assert shown.endswith("\n")  # the line is closed before the summary
    assert f"imported {TURNS} turns" in process.stdout and "turns/s)" in process.stdout


def _read_all(fd: int) -> str:
    chunks = []
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # EIO: the other end is closed and everything was read
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks).decode()
