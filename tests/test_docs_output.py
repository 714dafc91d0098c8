""" "Real output" blocks in README and docs/ are what the real CLI prints today, or say when
they were recorded.

Every "real output" a page promises is the next fenced block, marked on the line before its
fence either ``<!-- output: NAME -->`` (checked here) or ``<!-- recorded: COMMIT DATE -->``
(a measurement, a local model's answer or a served session with pids and ports, which no test
can replay: the commit and date say how old it is).

A checked block is compared with a fresh run of the commands below, through the real console
script with the scripted provider (a replayed model, so the text is stable). Durations, ids
and dates are normalised; token counts too (the prompt holds the workspace's path). A ``...``
line in a block stands for lines left out. When this fails, paste the printed block into the page.
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
    (re.compile(r"\b(run|ses|fact)_[0-9a-f]{12}\b"), r"\1_ID"),
    (re.compile(r"\bev_[0-9a-f]{10}_"), "ev_ID_"),
    (re.compile(r"\b\d{4}-\d{2}-\d{2}\b"), "YYYY-MM-DD"),
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


def session(cli: Cli, *commands: tuple[str, ...]) -> str:
    """A terminal session: each command after its ``$`` line, then what it printed (standard
    output, then standard error, as a terminal shows a command that fails at the end)."""
    shown_lines = []
    for command in commands:
        result = cli.run(*command)
        words = [f'"{word}"' if " " in word or "?" in word else word for word in command]
        shown_lines.append("$ shiyi " + " ".join(words))
        shown_lines.append((result.stdout + result.stderr).rstrip("\n"))
    return "\n".join(shown_lines)


def facts_history(cli: Cli) -> str:
    cli.config("memory:\n  embedder: none\n")
    return session(
        cli,
        ("memory", "add", "Berlin", "--key", "lives in"),
        ("memory", "add", "I moved to Munich"),
        ("memory", "add", "I moved to Munich"),
        ("memory", "add", "Standups are at 9:30", "--kind", "convention", "--scope", "workspace"),
        ("memory", "history", "--key", "lives in"),
        ("memory", "health"),
    )


DEPLOY = """set -euo pipefail
env="$1"; tag="${2:-$(git describe --tags --always 2>/dev/null || echo dev)}"
echo "building $tag for $env"
mkdir -p "dist/$env" && echo "$tag" > "dist/$env/VERSION"
echo "deployed $tag to $env\""""


def scripts_demo(cli: Cli) -> str:
    deploy = {
        "action": "save",
        "name": "deploy",
        "language": "bash",
        "description": "Deploy the site: build it and copy it to an environment",
        "body": DEPLOY,
        "parameters": [
            {"name": "env", "description": "staging or production"},
            {
                "name": "tag",
                "description": "release tag (default: git describe)",
                "required": False,
            },
        ],
    }
    show_file = {
        "action": "save",
        "name": "show-file",
        "language": "sh",
        "description": "Print a file of the workspace",
        "body": 'cat -- "$1"',
        "parameters": [{"name": "path", "description": "the file to print"}],
    }
    _scripted(cli, [{"text": "I'll keep these as scripts.",
                     "tool_calls": [{"name": "scripts", "arguments": deploy}]},
                    {"tool_calls": [{"name": "scripts", "arguments": show_file}]},
                    {"text": "Saved: try `shiyi scripts run deploy staging`."}])  # fmt: skip
    saving = cli.run("run", "save the deploy steps we just used as a script")
    assert saving.returncode == 0, saving.stderr
    refused = cli.run("scripts", "run", "deploy")
    assert refused.returncode == 2, refused
    return (
        f'$ shiyi run "save the deploy steps we just used as a script"\n{saving.stdout}'
        + session(
            cli,
            ("scripts", "list"),
            ("scripts", "show", "deploy"),
            ("scripts", "run", "deploy", "staging", "v1.4.2"),
            ("scripts", "run", "deploy"),
            ("scripts", "run", "show-file", "shiyi.yaml"),
            ("memory", "search", "how do we deploy?", "--mode", "keyword", "--limit", "2"),
            ("scripts", "rm", "deploy"),
        )
    )


RUNS: dict[str, Callable[[Cli], str]] = {
    "notes-run": notes_run,
    "json-run": json_run,
    "facts-history": facts_history,
    "scripts-demo": scripts_demo,
}


def marked_blocks() -> list[tuple[str, str, str]]:
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for match in MARKER.finditer(text):
            found.append((page.relative_to(ROOT).as_posix(), match.group(1), match.group(3)))
    return found


FENCE = re.compile(r"^\s*`{3,}")
CHECKED = re.compile(r"^\s*<!-- output: [\w-]+ -->$")
RECORDED = re.compile(r"^\s*<!-- recorded: [0-9a-f]{7,40} \d{4}-\d{2}-\d{2} -->$")


def promised_blocks() -> list[tuple[str, int, str]]:
    """Each "real output" phrase's next fence: (page, line of the fence, the line before it)."""
    found = []
    for page in PAGES:
        lines = page.read_text(encoding="utf-8").splitlines()
        for number, line in enumerate(lines):
            if "real output" not in line.lower():
                continue
            fence = next((i for i in range(number, len(lines)) if FENCE.match(lines[i])), None)
            assert fence is not None, f"{page.name}:{number + 1} promises real output, no block"
            found.append((page.relative_to(ROOT).as_posix(), fence + 1, lines[fence - 1]))
    return found


def test_every_promised_real_output_is_checked_or_dated() -> None:
    unmarked = [
        f"{page}:{line}"
        for page, line, before in promised_blocks()
        if not (CHECKED.match(before) or RECORDED.match(before))
    ]
    assert not unmarked, (
        "mark each block <!-- output: NAME --> (and add a run here) or "
        f"<!-- recorded: COMMIT YYYY-MM-DD -->: {unmarked}"
    )


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
