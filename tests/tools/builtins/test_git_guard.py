"""A bash command cannot leave behind a file through which git runs a program at the user's
next git command (``commondir``, ``config.worktree``, a worktree's or submodule's config,
hooks, a nested repository's config), however it spells the name; git itself still works.

Each door is tried end to end: the real bash tool (in the bubblewrap sandbox and without
one), then a real ``git status`` run here, as the user would, whose ``core.fsmonitor``
would create a marker file.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from shiyi.config.settings import ToolSettings
from shiyi.tools.base import ToolContext
from shiyi.tools.builtins import git_guard, shell
from shiyi.tools.builtins.sandbox import bwrap_runs, find_bwrap, scan_workspace
from shiyi.tools.builtins.shell import bash

BWRAP = find_bwrap()
HAS_BWRAP = BWRAP is not None and bwrap_runs(BWRAP)
pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
IDENTITY = ("-c", "user.name=agent", "-c", "user.email=agent@example.invalid")
GUARD_NOTE = "through which git finds programs to run"


@pytest.fixture(
    params=[
        "off",
        pytest.param("bwrap", marks=pytest.mark.skipif(not HAS_BWRAP, reason="no bwrap")),
    ]
)
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(autouse=True)
def _short_grace(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shell, "KILL_GRACE", 0.5)


def git(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", *IDENTITY, *args], cwd=cwd, capture_output=True, text=True, check=False
    )


@pytest.fixture
def repo(workspace: Path) -> Path:
    """The workspace as a git repository with one commit."""
    git(workspace, "init", "-q")
    (workspace / "README").write_text("hello\n")
    git(workspace, "add", "README")
    git(workspace, "commit", "-qm", "first")
    return workspace


@pytest.fixture
def ctx(repo: Path, mode: str) -> ToolContext:
    return ToolContext.for_dir(repo, ToolSettings(bash_sandbox=mode))


async def run(ctx: ToolContext, command: str) -> str:
    return await bash.invoke(bash.validate({"command": command}), ctx)


def evil_config(directory: str, marker: Path) -> str:
    """Shell that writes ``directory/config`` naming a program git runs at every status."""
    return (
        f"mkdir -p {directory}/objects {directory}/refs; printf '[core]\\n"
        f'\\trepositoryformatversion = 0\\n\\tfsmonitor = "touch {marker}; false"\\n\' '
        f"> {directory}/config; "
    )


async def test_a_hidden_commondir_never_reaches_the_users_git(repo: Path, ctx: ToolContext) -> None:
    """The open door: ``$(printf .gi)t`` is a name the parsed checks cannot read, and
    ``commondir`` did not exist, so the sandbox had nothing to bind read-only."""
    marker = repo.parent / "PWNED"
    command = evil_config("evil", marker) + 'echo ../evil > "$(printf .gi)t/commondir"; echo done'
    out = await run(ctx, command)
    assert "done" in out
    assert ".git/commondir" in out and GUARD_NOTE in out
    assert not (repo / ".git/commondir").exists()
    status = git(repo, "status", "--short")
    assert status.returncode == 0 and "?? evil/" in status.stdout
    assert not marker.exists()


async def test_git_add_commit_and_worktrees_still_work(repo: Path, ctx: ToolContext) -> None:
    """git writes objects, refs, index, HEAD, logs, COMMIT_EDITMSG; ``git worktree add``
    writes a commondir naming its own repository and a ``.git`` file naming it: all kept."""
    command = (
        "echo more >> README && git add README && "
        "git -c user.name=a -c user.email=a@b.invalid commit -qm second && "
        "git branch topic && git worktree add -q wt topic && git -C wt log --oneline"
    )
    out = await run(ctx, command)
    assert out.startswith("exit code: 0\n"), out
    assert "note:" not in out
    assert "second" in git(repo, "log", "--oneline").stdout
    assert (repo / ".git/worktrees/wt/commondir").read_text().strip() == "../.."
    assert git(repo / "wt", "status", "--short").returncode == 0


GUARDED = [
    (".git/config.worktree", "[core]\\n\\tfsmonitor = x\\n"),
    (".git/modules/sub/config", "[core]\\n\\tfsmonitor = x\\n"),
    (".git/modules/sub/hooks/post-checkout", "#!/bin/sh\\ntouch x\\n"),
    (".git/modules/a/b/commondir", "../../../../evil\\n"),
    (".git/worktrees/evil/commondir", "../../../evil\\n"),
    (".git/hooks/pre-commit", "#!/bin/sh\\ntouch x\\n"),
]


@pytest.mark.parametrize(("path", "content"), GUARDED, ids=[p for p, _ in GUARDED])
async def test_every_file_git_reads_programs_from_is_put_back(
    repo: Path, ctx: ToolContext, path: str, content: str
) -> None:
    hidden = path.replace(".git/", '"$(printf .gi)t"/', 1)
    out = await run(ctx, f"mkdir -p \"$(dirname {hidden})\"; printf '{content}' > {hidden}")
    if "Read-only file system" not in out:  # the sandbox binds .git/hooks read-only
        assert path in out and GUARD_NOTE in out
    assert not (repo / path).exists()


async def test_existing_files_get_their_bytes_and_mode_back(repo: Path, ctx: ToolContext) -> None:
    """A worktree's commondir and a submodule's config and hooks that exist: changed,
    deleted or made executable, each is as it was after the command."""
    commondir = repo / ".git/worktrees/wt/commondir"
    git(repo, "worktree", "add", "-q", "wt")
    module = repo / ".git/modules/sub"
    (module / "hooks").mkdir(parents=True)
    (module / "config").write_text("[core]\n\tbare = false\n")
    hook = module / "hooks/post-checkout"
    hook.write_text("#!/bin/sh\necho user hook\n")
    hook.chmod(0o644)  # not executable: git does not run it
    g = '"$(printf .gi)t"'
    out = await run(
        ctx,
        f"echo ../../../evil > {g}/worktrees/wt/commondir; rm -f {g}/modules/sub/config; "
        f"chmod +x {g}/modules/sub/hooks/post-checkout; echo end",
    )
    assert "end" in out
    assert commondir.read_text() == "../..\n"
    assert (module / "config").read_text() == "[core]\n\tbare = false\n"
    assert hook.stat().st_mode & 0o777 == 0o644
    assert hook.read_text() == "#!/bin/sh\necho user hook\n"


async def test_a_nested_repository_the_outer_one_tracks_keeps_no_config(
    repo: Path, ctx: ToolContext
) -> None:
    """``git init sub``, a config naming a program, ``git add sub``: the user's ``git
    status`` in the outer repository would run it in the nested one."""
    marker = repo.parent / "PWNED"
    command = (
        "git init -q sub && git -C sub -c user.name=a -c user.email=a@b.invalid commit -q "
        f"--allow-empty -m s && git -C sub config core.fsmonitor 'touch {marker}; false' && "
        "git add sub 2>/dev/null; ls -A sub/.git/hooks | head -1; echo end"
    )
    out = await run(ctx, command)
    assert "sub/.git/config" in out and GUARD_NOTE in out
    assert not (repo / "sub/.git/config").exists()
    assert git(repo / "sub", "log", "--oneline").returncode == 0  # still a repository
    git(repo, "status")
    assert not marker.exists()


async def test_a_gitfile_pointing_out_of_the_guarded_dirs_is_removed(
    repo: Path, ctx: ToolContext
) -> None:
    marker = repo.parent / "PWNED"
    out = await run(
        ctx, evil_config("evil", marker) + "mkdir sub; echo 'gitdir: ../evil' > sub/$(printf .gi)t"
    )
    assert "sub/.git" in out and GUARD_NOTE in out
    assert not (repo / "sub/.git").exists()


async def test_allow_code_paths_leaves_git_to_the_agent(repo: Path, mode: str) -> None:
    ctx = ToolContext.for_dir(repo, ToolSettings(bash_sandbox=mode, allow_code_paths=True))
    out = await run(ctx, 'echo ../.. > "$(printf .gi)t/commondir"; echo end')
    assert "note:" not in out
    assert (repo / ".git/commondir").read_text() == "../..\n"


@pytest.mark.skipif(not HAS_BWRAP, reason="no bwrap")
@pytest.mark.parametrize("mode", ["bwrap"])
async def test_the_sandbox_binds_existing_guarded_files_read_only(
    repo: Path, ctx: ToolContext
) -> None:
    """In the sandbox a write to an existing one fails at once, as .git/config does."""
    git(repo, "worktree", "add", "-q", "wt")
    out = await run(ctx, 'echo ../evil > "$(printf .gi)t/worktrees/wt/commondir"; echo end')
    assert "Read-only file system" in out and "note:" not in out
    assert (repo / ".git/worktrees/wt/commondir").read_text() == "../..\n"


# --- putting back never follows a link --------------------------------------------------------


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    directory = tmp_path / "outside"
    directory.mkdir()
    return directory


def test_a_linked_hooks_dir_is_replaced_not_written_through(repo: Path, outside: Path) -> None:
    hooks = repo / ".git/hooks"
    (hooks / "pre-commit").write_text("#!/bin/sh\necho mine\n")
    before = git_guard.take(repo, scan_workspace(repo).git)
    assert before is not None
    shutil.rmtree(hooks)
    hooks.symlink_to(outside)
    restored = git_guard.restore(repo, before, scan_workspace(repo).git)
    assert (".git", "hooks") in restored.paths
    assert list(outside.iterdir()) == []
    assert not hooks.is_symlink() and (hooks / "pre-commit").read_text() == "#!/bin/sh\necho mine\n"


def test_a_linked_dot_git_is_removed_and_nothing_lands_outside(repo: Path, outside: Path) -> None:
    before = git_guard.take(repo, scan_workspace(repo).git)
    assert before is not None
    config = (repo / ".git/config").read_bytes()
    shutil.rmtree(repo / ".git")
    (repo / ".git").symlink_to(outside)
    git_guard.restore(repo, before, scan_workspace(repo).git)
    assert list(outside.iterdir()) == []
    assert not (repo / ".git").is_symlink()
    assert (repo / ".git/config").read_bytes() == config


def test_a_link_planted_as_commondir_is_removed_not_followed(repo: Path, outside: Path) -> None:
    target = outside / "victim"
    target.write_text("keep\n")
    before = git_guard.take(repo, scan_workspace(repo).git)
    assert before is not None
    (repo / ".git/commondir").symlink_to(target)
    (repo / ".git/config").unlink()
    (repo / ".git/config").symlink_to(target)  # a write "back" to config must not follow it
    restored = git_guard.restore(repo, before, scan_workspace(repo).git)
    assert {(".git", "commondir"), (".git", "config")} <= set(restored.paths)
    assert target.read_text() == "keep\n"
    assert not (repo / ".git/commondir").exists() and not (repo / ".git/commondir").is_symlink()
    assert not (repo / ".git/config").is_symlink()


def test_a_crowd_of_directories_in_modules_cannot_hide_the_top_config(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past the limit the rest is unguarded (and said so), but the top repository's own
    files are looked at first."""
    monkeypatch.setattr(git_guard, "MAX_ENTRIES", 40)
    for index in range(60):
        (repo / f".git/modules/m{index:02d}").mkdir(parents=True)
    config = (repo / ".git/config").read_bytes()
    before = git_guard.take(repo, scan_workspace(repo).git)
    assert before is not None and not before.complete
    (repo / ".git/config").write_text("[core]\n\tfsmonitor = x\n")
    (repo / ".git/commondir").write_text("../evil\n")
    restored = git_guard.restore(repo, before, scan_workspace(repo).git)
    assert (repo / ".git/config").read_bytes() == config
    assert not (repo / ".git/commondir").exists()
    assert "only the first were checked" in (restored.note(repo) or "")


def test_the_snapshot_does_not_walk_objects(repo: Path) -> None:
    """Only config, commondir, config.worktree, hooks, worktrees/ and modules/ are read."""
    for index in range(200):
        (repo / f".git/objects/xx{index}").mkdir()
    before = git_guard.take(repo, scan_workspace(repo).git)
    assert before is not None
    assert not any("objects" in key for key in before.states)
    assert before.states[(".git", "config")].kind == "file"
    assert os.path.isdir(repo / ".git/objects/xx0")
