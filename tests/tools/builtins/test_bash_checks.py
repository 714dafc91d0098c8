"""The bash tool's checks on the parsed command line.  Nothing dangerous is run here: the
commands go to ``check_command`` only (the bash tool calls it first, see test_bash_sandbox)."""

from __future__ import annotations

from pathlib import Path

import pytest

from shiyi.config.settings import ToolSettings
from shiyi.errors import CommandDenied
from shiyi.tools.builtins.bash_checks import check_command
from shiyi.tools.builtins.bash_parse import parse
from shiyi.tools.protection import protection
from shiyi.tools.workspace import Workspace

NO_RULES: list[str] = []


@pytest.fixture
def ws(workspace: Path, tmp_path: Path) -> Workspace:
    (workspace / "shiyi.yaml").write_text("server:\n  token: t\n")
    (workspace / "lift.yaml").write_text("tools:\n  allow_outside_workspace: true\n")
    guard = protection(data_dir=tmp_path / "home", extra=[workspace / "shiyi.yaml"])
    return Workspace(workspace, protected=guard)


# Each of these slipped through the old regular expressions (issue 17, item 7).
MISSED = [
    "rm -rf /*",
    "rm -Rf /",
    "rm -r -f /",
    "rm -f -r /",
    "rm --recursive --force /",
    "rm -fr //",
    "rm -rf --no-preserve-root /",
    "rm --no-preserve-root -r -f /",
    "sudo rm -rf /*",
    "echo $(rm -rf /)",
    "if true; then rm -r -f /; fi",
    ": ( ) { : | : & } ; :",
    ":(){ :|:& };:",
    "bomb(){ bomb|bomb& };bomb",
    "f() {\n  f | f &\n}\nf",
]


@pytest.mark.parametrize("command", MISSED)
def test_dangerous_commands_are_refused_with_no_rules(ws: Workspace, command: str) -> None:
    with pytest.raises(CommandDenied, match="the command was refused: ") as info:
        check_command(command, ws, NO_RULES)
    assert "was not run" in str(info.value)


@pytest.mark.parametrize("command", MISSED)
def test_the_default_rules_catch_them_too(ws: Workspace, command: str) -> None:
    """The regular expressions are the layer left when parsing fails: they must hold too."""
    rules = ToolSettings().bash_deny
    with pytest.raises(CommandDenied):
        check_command(command, Workspace(ws.root, protected=ws.protected), rules)
    assert any(_matches(rule, command) for rule in rules), f"no default rule matches {command!r}"


def _matches(rule: str, command: str) -> bool:
    import re

    return re.search(rule, command) is not None


@pytest.mark.parametrize(
    "command",
    [
        "cd /tmp && rm -rf ~",
        'rm -rf "$HOME"/*',
        "mkfs.ext4 /dev/sda1",
        "dd if=/dev/zero of=/dev/sda bs=1M",
        "shutdown -h now",
        "systemctl reboot",
        "sudo poweroff",
        # bashlex cannot parse [[ ]] or $((...)): the shell words are checked instead.
        "[[ -d / ]] && rm -r -f /",
        "echo $((1+1)); rm -Rf /*",
        "case x in x) rm -rf /;; esac",
    ],
)
def test_other_dangers_are_refused(ws: Workspace, command: str) -> None:
    with pytest.raises(CommandDenied, match="refused"):
        check_command(command, ws, NO_RULES)


@pytest.mark.parametrize(
    "command",
    [
        "ls -la",
        "rm -rf build dist",
        "rm -rf ./node_modules/*",
        "rm -r /tmp/scratch",
        "git status && git diff --stat",
        "echo $((1+2))",
        "[[ -f setup.py ]] && echo yes",
        "python -c 'print(1)' | tee out.txt > /dev/null",
        "dd if=/dev/zero of=/dev/null count=1",
        "for f in *.py; do wc -l $f; done",
        "case $1 in a) echo a;; esac",
        'grep -rn "def main" src',
        "cat lift.yaml",
        "make test 2>&1 | tail -20",
    ],
)
def test_ordinary_commands_pass(ws: Workspace, command: str) -> None:
    check_command(command, ws, NO_RULES)


@pytest.mark.parametrize(
    "command",
    [
        "echo 'tools: {allow_outside_workspace: true}' > shiyi.yaml",
        "cat lift.yaml >> ./shiyi.yaml",
        "mv lift.yaml shiyi.yaml",
        "cp lift.yaml sub/shiyi.yaml",
        "ln -sf lift.yaml shiyi.yaml",
        "cat shiyi.yaml",
        "cat shi*.yaml",
        "cat 'shi''yi.yaml'",
        "sed -i s/false/true/ shi?yi.yaml shiyi.y*",
        "tee shiyi.yaml < lift.yaml",
        "python tool.py --config=shiyi.yaml",
        "cat .env",
        "cat ../home/server.json",
        "echo $(cat shiyi.yaml)",
    ],
)
def test_commands_naming_protected_paths_are_refused(ws: Workspace, command: str) -> None:
    (ws.root / "sub").mkdir(exist_ok=True)
    with pytest.raises(CommandDenied, match="which is protected") as info:
        check_command(command, ws, NO_RULES)
    assert "the agent may not read or change its own configuration" in str(info.value)


def test_a_symlink_to_a_protected_file_is_refused_by_its_target(ws: Workspace) -> None:
    (ws.root / "notes.txt").symlink_to(ws.root / "shiyi.yaml")
    with pytest.raises(CommandDenied, match=r"'notes\.txt', which is protected"):
        check_command("echo lifted >> notes.txt", ws, NO_RULES)


def test_the_user_rules_still_apply(ws: Workspace) -> None:
    with pytest.raises(CommandDenied, match=r"deny rule `\\bcurl\\b`"):
        check_command("curl example.com", ws, [r"\bcurl\b"])


def test_unparsed_commands_are_split_into_words() -> None:
    line = parse("[[ -f x ]] && cat < in.txt > out.txt; rm -rf b")
    assert not line.parsed
    assert ["rm", "-rf", "b"] in line.commands
    assert {"in.txt", "out.txt"} <= set(line.targets)
