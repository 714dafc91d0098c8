"""Code that runs at the next start may be read by the tools, never changed (issue 29 item 5).

A served model without bash wrote ``.venv/lib/python3.11/site-packages/x.pth`` with
``write_file``: the next Python start there ran it.  ``python -m shiyi`` run from the
workspace imported a ``yaml.py`` the model wrote.  Each location is tried through the real
tools (write_file, edit_file, the bash tool's parsed checks); the server test is in
tests/interfaces/server/test_code_paths.py.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from shiyi.config.settings import ToolSettings
from shiyi.errors import CommandDenied, ProtectedPath
from shiyi.tools.base import FunctionTool, ToolContext
from shiyi.tools.builtins.bash_checks import check_command
from shiyi.tools.builtins.files import edit_file, read_file, write_file
from shiyi.tools.code_paths import shadowable_modules

SITE = ".venv/lib/python3.11/site-packages"
PLANTED = "import os; os.system('touch /tmp/pwned')\n"


@pytest.fixture
def tree(workspace: Path) -> Path:
    """A workspace holding a virtualenv, a git repo and ordinary files."""
    (workspace / SITE / "pkg").mkdir(parents=True)
    (workspace / ".venv/pyvenv.cfg").write_text("home = /usr/bin\n")
    (workspace / SITE / "pkg/__init__.py").write_text("VALUE = 1\n")
    (workspace / ".git/hooks").mkdir(parents=True)
    (workspace / ".git/config").write_text("[core]\n\tbare = false\n")
    (workspace / "src/__pycache__").mkdir(parents=True)
    (workspace / "src/app.py").write_text("print('app')\n")
    return workspace


@pytest.fixture
def ctx(tree: Path, monkeypatch: pytest.MonkeyPatch) -> ToolContext:
    monkeypatch.chdir(tree)  # shiyi runs from the workspace: its top level is importable
    return ToolContext.for_dir(tree, ToolSettings(bash_sandbox="off"))


async def run(item: FunctionTool, ctx: ToolContext, **arguments: Any) -> str:
    return await item.invoke(item.validate(arguments), ctx)


WRITES = [
    (f"{SITE}/x.pth", "a .pth file runs code"),
    (f"{SITE}/evil.py", "site-packages"),
    (".venv/bin/activate", "virtualenv"),
    ("lib/python3/dist-packages/x.py", "dist-packages"),
    ("anything/x.pth", "a .pth file runs code"),
    ("src/__pycache__/app.cpython-311.pyc", "compiled Python"),
    ("src/app.pyc", "compiled Python"),
    (".git/hooks/pre-commit", "git runs the programs in .git/hooks"),
    (".git/config", "core.hooksPath"),
    ("sub/.git", "a .git file"),
    ("src/sitecustomize.py", "sitecustomize.py runs at every Python start"),
    ("usercustomize.py", "usercustomize.py runs at every Python start"),
    ("yaml.py", "shadow the Python module 'yaml'"),
    ("json.py", "shadow the Python module 'json'"),
    ("pydantic/__init__.py", "shadow the Python module 'pydantic'"),
    ("shiyi.py", "shadow the Python module 'shiyi'"),
    # Case folded: on macOS and Windows these are the files above.
    (".GIT/Hooks/pre-commit", "git runs the programs in .git/hooks"),
    (".Git/CONFIG", "core.hooksPath"),
    (".git/COMMONDIR", "commondir"),
    ("anything/X.PTH", "a .pth file runs code"),
    ("src/SiteCustomize.py", "sitecustomize.py runs at every Python start"),
]


@pytest.mark.parametrize(("path", "why"), WRITES)
async def test_write_file_refuses_code_locations(
    tree: Path, ctx: ToolContext, path: str, why: str
) -> None:
    with pytest.raises(ProtectedPath, match="may not be changed") as info:
        await run(write_file, ctx, path=path, content=PLANTED)
    assert why in str(info.value)
    assert "tools.allow_code_paths: true" in str(info.value)
    assert not (tree / path).exists() or PLANTED not in (tree / path).read_text()


async def test_edit_file_refuses_and_read_file_still_reads(tree: Path, ctx: ToolContext) -> None:
    target = f"{SITE}/pkg/__init__.py"
    with pytest.raises(ProtectedPath, match="site-packages"):
        await run(edit_file, ctx, path=target, old_text="VALUE = 1", new_text=PLANTED)
    assert (tree / target).read_text() == "VALUE = 1\n"
    assert "VALUE = 1" in await run(read_file, ctx, path=target)
    assert "bare = false" in await run(read_file, ctx, path=".git/config")


async def test_a_symlink_into_a_virtualenv_is_refused(tree: Path, ctx: ToolContext) -> None:
    (tree / "notes.txt").symlink_to(tree / SITE / "pkg/__init__.py")
    with pytest.raises(ProtectedPath, match=r"leads to .*site-packages"):
        await run(write_file, ctx, path="notes.txt", content=PLANTED)
    (tree / "hook").symlink_to(tree / ".git/hooks")
    with pytest.raises(ProtectedPath):
        await run(write_file, ctx, path="hook/post-checkout", content=PLANTED)
    assert not (tree / ".git/hooks/post-checkout").exists()


async def test_a_hard_link_to_code_does_not_carry_the_write(tree: Path, ctx: ToolContext) -> None:
    """A link bash made elsewhere: writing the workspace name gives it its own file."""
    installed = tree / SITE / "pkg/__init__.py"
    os.link(installed, tree / "alias.py")
    await run(write_file, ctx, path="alias.py", content=PLANTED)
    assert installed.read_text() == "VALUE = 1\n"
    assert (tree / "alias.py").read_text() == PLANTED


async def test_ordinary_python_files_are_still_written(tree: Path, ctx: ToolContext) -> None:
    for path in ("src/app.py", "src/yaml.py", "tests/test_json.py", "my_yaml.py", "notes.pth.md"):
        await run(write_file, ctx, path=path, content="x = 1\n")
        assert (tree / path).read_text() == "x = 1\n"


async def test_allow_code_paths_lets_the_user_opt_out(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tree)
    ctx = ToolContext.for_dir(tree, ToolSettings(allow_code_paths=True))
    await run(write_file, ctx, path=f"{SITE}/x.pth", content="import sys\n")
    await run(write_file, ctx, path="yaml.py", content="x = 1\n")
    assert (tree / SITE / "x.pth").exists() and (tree / "yaml.py").exists()


async def test_shadowing_counts_only_where_python_imports_from(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With shiyi started elsewhere, the workspace's top level is not on its path."""
    monkeypatch.chdir(tmp_path)
    ctx = ToolContext.for_dir(tree, ToolSettings())
    await run(write_file, ctx, path="yaml.py", content="x = 1\n")
    assert (tree / "yaml.py").read_text() == "x = 1\n"


def test_the_module_names_are_the_stdlib_and_what_is_installed() -> None:
    names = shadowable_modules()
    assert {"os", "json", "yaml", "pydantic", "shiyi"} <= names
    assert sys.stdlib_module_names <= names


BASH_CHANGES = [
    f"echo 'import os' > {SITE}/x.pth",
    f"printf x >> {SITE}/pkg/__init__.py",
    f"cp /tmp/evil.py {SITE}/pkg/",
    "cp -t .venv/lib /tmp/evil.py",
    f"mv {SITE}/pkg /tmp/gone",
    "rm -rf .venv",
    "rm -rf .venv/*",
    "touch src/__pycache__/app.cpython-311.pyc",
    "tee .git/hooks/pre-commit < /dev/null",
    "ln -s /tmp/evil .git/hooks/post-checkout",
    "sed -i 's/false/true/' .git/config",
    "echo 'import os' > yaml.py",
    "cat > sitecustomize.py < /dev/null",
    "mv notes.py json.py",
    "ln .venv/pyvenv.cfg alias.cfg",
    "sudo tee -a x.pth < /dev/null",
    "dd if=/dev/zero of=.venv/bin/python count=1",
]


@pytest.mark.parametrize("command", BASH_CHANGES)
def test_bash_checks_refuse_changing_code(ctx: ToolContext, command: str) -> None:
    with pytest.raises(CommandDenied, match="may not be changed") as info:
        check_command(command, ctx.workspace, [])
    assert "tools.allow_code_paths" in str(info.value)


BASH_READS = [
    f"cat {SITE}/pkg/__init__.py",
    "git log --oneline -3",
    "ls -la .venv .git/hooks",
    f"grep -r VALUE {SITE}",
    f"cp {SITE}/pkg/__init__.py src/mine.py",
    "python -m venv build/venv2",
    "rm -rf build dist",
    "echo ok > src/app.py",
]


@pytest.mark.parametrize("command", BASH_READS)
def test_bash_checks_let_reading_and_ordinary_writes_through(
    ctx: ToolContext, command: str
) -> None:
    check_command(command, ctx.workspace, [])


GIT_REDIRECTS = [
    ".git/commondir",
    ".git/modules/sub/config",
    ".git/modules/sub/hooks/post-checkout",
    ".git/worktrees/wt/commondir",
    ".git/config.worktree",
    ".git/objects/info/alternates",
]
"""Files inside ``.git`` that make git read config or hooks from elsewhere: ``commondir``
moves ``config`` and ``hooks`` to a directory the model writes freely; a submodule's
``config`` and ``hooks`` run at the superproject's ``git status``."""


@pytest.mark.parametrize("path", GIT_REDIRECTS)
async def test_write_file_refuses_every_file_git_reads_from_its_dir(
    tree: Path, ctx: ToolContext, path: str
) -> None:
    with pytest.raises(ProtectedPath, match="may not be changed"):
        await run(write_file, ctx, path=path, content="../evil\n")
    assert not (tree / path).exists()


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=False)


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
async def test_a_git_config_planted_outside_dot_git_never_runs(
    tree: Path, ctx: ToolContext
) -> None:
    """The door end to end: ``evil/config`` is an ordinary file, and a ``commondir`` naming
    its directory would make the user's next ``git status`` run its ``core.fsmonitor``."""
    marker = tree / "PWNED"
    shutil.rmtree(tree / ".git")
    _git(tree, "init", "-q")
    evil = f'[core]\n\trepositoryformatversion = 0\n\tfsmonitor = "touch {marker}; false"\n'
    await run(write_file, ctx, path="evil/config", content=evil)
    await run(write_file, ctx, path="evil/objects/README", content="x\n")
    await run(write_file, ctx, path="evil/refs/README", content="x\n")
    with pytest.raises(ProtectedPath):
        await run(write_file, ctx, path=".git/commondir", content="../evil\n")
    _git(tree, "status")
    assert not marker.exists()


@pytest.mark.parametrize(
    "command",
    ["echo ../evil > .git/commondir", "cp /tmp/evil .git/modules/sub/config"],
)
def test_bash_checks_refuse_redirecting_git(ctx: ToolContext, command: str) -> None:
    with pytest.raises(CommandDenied, match="may not be changed"):
        check_command(command, ctx.workspace, [])
