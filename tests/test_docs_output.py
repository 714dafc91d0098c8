""" "Real output" blocks in README and docs/ are what the real CLI prints today.

A block marked ``<!-- output: NAME -->`` (the line before its opening fence) is compared with
a fresh run of the commands below, through the real console script with the scripted
provider (a replayed model, so the text is stable). Durations and ids are normalised; token
counts too (the prompt holds the workspace's path). A ``...`` line in a block stands for
lines left out. When this fails, paste the printed block into the page.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.interfaces.cli.conftest import Cli

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
MARKER = re.compile(r"<!-- output: ([\w-]+) -->\n(`{3,})[^\n]*\n(.*?)\n\2", re.S)
VOLATILE = [
    (re.compile(r"\b\d+ ms\b"), "N ms"),
    (re.compile(r"\b(run|ses)_[0-9a-f]{12}\b"), r"\1_ID"),
    # the prompt holds the workspace's path, so its size is the machine's
    (re.compile(r"^\d+ in / \d+ out tokens$", re.M), "N in / N out tokens"),
]


def normalise(text: str) -> list[str]:
    for pattern, replacement in VOLATILE:
        text = pattern.sub(replacement, text)
    return [line.rstrip() for line in text.strip("\n").splitlines()]


def shown(documented: list[str], actual: list[str]) -> bool:
    """The documented lines appear in order; ``...`` skips any number of actual lines."""
    position = 0
    for index, line in enumerate(documented):
        if line == "...":
            continue
        skipping = index > 0 and documented[index - 1] == "..."
        while skipping and position < len(actual) and actual[position] != line:
            position += 1
        if position >= len(actual) or actual[position] != line:
            return False
        position += 1
    return documented[-1:] == ["..."] or position == len(actual)


def _scripted(cli: Cli, steps: list[dict[str, object]]) -> None:
    script = cli.workspace / "script.json"
    script.write_text(json.dumps(steps), encoding="utf-8")
    cli.config(
        f"models:\n  main:\n    provider: scripted\n    model_path: {script}\n"
        "memory:\n  embedder: none\n"
    )


def notes_run(cli: Cli) -> str:
    (cli.workspace / "notes.txt").write_text("alpha\nbeta\n", encoding="utf-8")
    # one call per step: calls of one step print as they finish, in any order
    listing = {"name": "list_dir", "arguments": {}}
    reading = {"name": "read_file", "arguments": {"path": "notes.txt"}}
    _scripted(cli, [{"text": "Let me look.", "tool_calls": [listing]},
                    {"tool_calls": [reading]},
                    {"text": "notes.txt holds two lines: alpha and beta."}])  # fmt: skip
    question = "what is in notes.txt?"
    result = cli.run("run", "--memory-wait", "0", question)
    assert result.returncode == 0, result.stderr
    return f'$ shiyi run "{question}"\n{result.stdout}'


def json_run(cli: Cli) -> str:
    _scripted(cli, [{"text": "Hello!"}])
    result = cli.run("run", "--json", "--memory-wait", "0", "Say hi.")
    assert result.returncode == 0, result.stderr
    return f'$ shiyi run --json "Say hi."\n{result.stdout}'


RUNS: dict[str, Callable[[Cli], str]] = {"notes-run": notes_run, "json-run": json_run}


def marked_blocks() -> list[tuple[str, str, str]]:
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for match in MARKER.finditer(text):
            found.append((page.relative_to(ROOT).as_posix(), match.group(1), match.group(3)))
    return found


def test_every_marked_block_has_a_run_and_every_run_a_block() -> None:
    names = [name for _, name, _ in marked_blocks()]
    assert set(names) == set(RUNS), set(names) ^ set(RUNS)


@pytest.mark.parametrize(("page", "name", "block"), marked_blocks())
def test_the_block_is_what_the_cli_prints(
    workspace: Path, tmp_path: Path, page: str, name: str, block: str
) -> None:
    actual = RUNS[name](Cli(workspace, tmp_path / "cli-home"))
    assert shown(normalise(block), normalise(actual)), (
        f"{page}: the `{name}` block is stale; the CLI prints now:\n{actual}"
    )


@pytest.mark.parametrize(
    ("documented", "actual", "expected"),
    [
        (["a", "b"], ["a", "b"], True),
        (["a", "...", "d"], ["a", "b", "c", "d"], True),
        (["a", "..."], ["a", "b"], True),
        (["a", "b"], ["a", "b", "c"], False),
        (["a", "...", "x"], ["a", "b"], False),
        (["b"], ["a", "b"], False),
    ],
)
def test_ellipsis_matching(documented: list[str], actual: list[str], expected: bool) -> None:
    assert shown(documented, actual) is expected
