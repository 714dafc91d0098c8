"""The damaged-file matrix through the real CLI: every store file of the data dir made
0 bytes, truncated or garbled; each command that reads it names the file and the safe fix
and exits non-zero: never a crash, a traceback or a silently empty store (a cache may be
moved aside and rebuilt, with a warning)."""

from __future__ import annotations

import os
import random
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.interfaces.cli.conftest import Cli
from tests.knowledge.conftest import write_corpus

Damage = Callable[[Path], None]


def empty(path: Path) -> None:
    path.write_bytes(b"")


def truncated(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2 + 123])


def garbled(path: Path) -> None:
    """256 KB of noise (half the file when smaller) from a quarter into it."""
    size = path.stat().st_size
    noise = random.Random(29).randbytes(min(256 * 1024, size // 2))
    with path.open("r+b") as out:
        out.seek(size // 4)
        out.write(noise)


DAMAGES: dict[str, Damage] = {"0-byte": empty, "truncated": truncated, "garbled": garbled}

# file -> (where it is under the home, commands that read it, what the message must say)
STORES: dict[str, tuple[str, list[tuple[str, ...]], str]] = {
    "graph.kuzu": (
        "memory/graph.kuzu",
        [("doctor",), ("memory", "search", "osprey", "--mode", "keyword")],
        "shiyi doctor --rebuild-graph",
    ),
    "memory.sqlite3": (
        "memory/memory.sqlite3",
        [("doctor",), ("memory", "search", "osprey", "--mode", "keyword")],
        "shiyi doctor --rebuild-sqlite",
    ),
    "knowledge.sqlite3": (
        "knowledge/knowledge.sqlite3",
        [("doctor",), ("kb", "search", "osprey")],
        "shiyi kb add",
    ),
    "sessions.sqlite3": (
        "sessions.sqlite3",
        [("doctor",), ("sessions", "list"), ("run", "hello again")],
        "restore it from a backup",
    ),
}


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data dir with a remembered turn, a knowledge base and a summary cache."""
    root = tmp_path_factory.mktemp("matrix")
    cli = Cli(root / "ws", root / "home")
    cli.workspace.mkdir()
    write_corpus(cli.workspace / "docs")
    cli.script([{"text": "Project Osprey runs in the north region."}, {"text": "ok"}])
    assert cli.run("run", "where does project osprey run?").returncode == 0
    assert cli.run("kb", "add", "docs").returncode == 0
    assert cli.run("doctor").returncode == 0
    return root


def copied(template: Path, tmp_path: Path) -> Cli:
    shutil.copytree(template, tmp_path / "case", symlinks=True)
    root = tmp_path / "case"
    # The config names the template's script: still there for the module's life.
    return Cli(root / "ws", root / "home")


@pytest.mark.parametrize("damage", DAMAGES)
@pytest.mark.parametrize("store", STORES)
def test_a_damaged_store_is_named_with_its_fix(
    template: Path, tmp_path: Path, store: str, damage: str
) -> None:
    cli = copied(template, tmp_path)
    where, commands, fix = STORES[store]
    path = Path(cli.env["SHIYI_HOME"]) / where
    DAMAGES[damage](path)
    for command in commands:
        ran = cli.run(*command)
        said = ran.stdout + ran.stderr
        assert ran.returncode > 0, f"{command}: {said}"  # < 0 is a signal (a crash)
        assert "Traceback" not in said, said
        assert str(path) in said, said
        assert fix in said, said


@pytest.mark.parametrize("damage", DAMAGES)
def test_a_damaged_summary_cache_is_moved_aside_with_a_warning(
    template: Path, tmp_path: Path, damage: str
) -> None:
    cli = copied(template, tmp_path)
    path = Path(cli.env["SHIYI_HOME"]) / "summaries.sqlite3"
    DAMAGES[damage](path)
    before = path.read_bytes()
    checked = cli.run("doctor")
    assert checked.returncode == 1, checked.stdout
    assert "problem   summaries.sqlite3: the summary cache is damaged" in checked.stdout
    ran = cli.run("run", "hello again")
    assert ran.returncode == 0 and "Traceback" not in ran.stderr, ran.stderr
    assert f"{path} was unreadable" in ran.stderr and "moved aside" in ran.stderr
    moved = path.parent.glob("summaries.sqlite3.corrupt-*")
    assert [p.read_bytes() for p in moved if not p.name.endswith(("-wal", "-shm"))] == [before]
    assert os.path.getsize(path) > 0
