"""Real bash runs, in a bubblewrap sandbox and without one: what a command can reach, see
and leave behind (issue 17, items 1 and 7)."""

from __future__ import annotations

import asyncio
import os
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from shiyi.config import Settings, load_settings
from shiyi.errors import CommandDenied, ToolError
from shiyi.tools.base import ToolContext
from shiyi.tools.builtins import shell
from shiyi.tools.builtins.sandbox import bwrap_runs, find_bwrap, sandbox_binary
from shiyi.tools.builtins.shell import bash, bash_for

TOKEN = "tok-do-not-leak-4711"
CONFIG = f"server:\n  token: {TOKEN}\n"
BWRAP = find_bwrap()
HAS_BWRAP = BWRAP is not None and bwrap_runs(BWRAP)


@pytest.fixture(autouse=True)
def _short_grace(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shell, "KILL_GRACE", 0.5)


@pytest.fixture(
    params=[
        "off",
        pytest.param("bwrap", marks=pytest.mark.skipif(not HAS_BWRAP, reason="no bwrap")),
    ]
)
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def settings(workspace: Path, mode: str) -> Settings:
    """Loaded like `shiyi serve` in the workspace, with the data dir inside it (so that the
    sandbox has something to hide rather than a /tmp it replaces anyway)."""
    (workspace / "shiyi.yaml").write_text(CONFIG)
    loaded = load_settings(cwd=workspace, workspace=workspace, home=workspace / ".data")
    loaded.tools.bash_sandbox = mode  # type: ignore[assignment]
    loaded.data_dir.mkdir()
    (loaded.data_dir / "server.json").write_text(f'{{"token": "{TOKEN}"}}')
    return loaded


@pytest.fixture
def ctx(settings: Settings) -> ToolContext:
    return ToolContext.for_settings(settings)


async def run(ctx: ToolContext, **arguments: Any) -> str:
    return await bash.invoke(bash.validate(arguments), ctx)


# --- item 1: the config cannot be changed or read through bash -----------------------------


async def test_redirection_into_the_config_is_refused(workspace: Path, ctx: ToolContext) -> None:
    with pytest.raises(CommandDenied, match="protected"):
        await run(ctx, command="echo 'tools: {allow_outside_workspace: true}' >> shiyi.yaml")
    assert (workspace / "shiyi.yaml").read_text() == CONFIG


async def test_renaming_over_the_config_is_refused(workspace: Path, ctx: ToolContext) -> None:
    (workspace / "lift.yaml").write_text("server:\n  tools: null\n")
    with pytest.raises(CommandDenied, match="protected"):
        await run(ctx, command="mv lift.yaml shiyi.yaml")
    assert (workspace / "shiyi.yaml").read_text() == CONFIG


async def test_reading_the_config_is_refused(ctx: ToolContext) -> None:
    with pytest.raises(CommandDenied, match="protected") as info:
        await run(ctx, command="cat shiyi.yaml")
    assert TOKEN not in str(info.value)


async def test_a_hidden_name_cannot_change_the_config(workspace: Path, ctx: ToolContext) -> None:
    """The checks cannot see through $(printf ...); the sandbox refuses the write, and
    without one the file is put back after the command."""
    lifted = "echo 'server: {tools: null}' > \"$(printf shi)yi.yaml\"; echo done"
    out = await run(ctx, command=lifted)
    assert (workspace / "shiyi.yaml").read_text() == CONFIG
    assert "done" in out


async def test_a_config_created_under_a_hidden_name_is_removed(
    workspace: Path, ctx: ToolContext
) -> None:
    (workspace / "shiyi.yaml").unlink()
    out = await run(
        ctx, command="mkdir -p d; echo 'server: {tools: null}' > d/../\"$(printf shi)yi.yaml\""
    )
    assert not (workspace / "shiyi.yaml").exists()
    assert "it was put back" in out


async def test_a_symlink_made_by_bash_does_not_open_the_config_to_file_tools(
    workspace: Path, ctx: ToolContext
) -> None:
    from shiyi.errors import ProtectedPath
    from shiyi.tools.builtins.files import read_file

    await run(ctx, command='ln -s "$(printf shi)yi.yaml" notes.txt')
    if (workspace / "notes.txt").is_symlink():
        with pytest.raises(ProtectedPath):
            await read_file.invoke(read_file.validate({"path": "notes.txt"}), ctx)


@pytest.mark.skipif(not HAS_BWRAP, reason="no bwrap")
@pytest.mark.parametrize("mode", ["bwrap"])  # only a sandbox hides what a hidden name reads
async def test_the_sandbox_hides_the_config_and_the_data_dir(settings: Settings) -> None:
    ctx = ToolContext.for_settings(settings)
    out = await run(
        ctx,
        command='cat "$(printf shi)yi.yaml"; echo entries: $(ls -A "$(printf .da)ta" | wc -l); '
        'cat "$(printf .da)ta/server.json"; echo end',
    )
    assert TOKEN not in out
    assert "entries: 0" in out
    assert out.rstrip().endswith("end")


@pytest.mark.skipif(not HAS_BWRAP, reason="no bwrap")
@pytest.mark.parametrize("mode", ["bwrap"])  # plain bash writes wherever the user can
async def test_the_sandbox_writes_only_the_workspace(
    workspace: Path, tmp_path: Path, settings: Settings
) -> None:
    ctx = ToolContext.for_settings(settings)
    home = Path.home() / f".shiyi-test-{os.getpid()}"
    out = await run(
        ctx,
        command=f"echo ok > inside.txt; touch {home}; touch {tmp_path}/outside.txt; echo end",
    )
    assert (workspace / "inside.txt").read_text() == "ok\n"
    assert "Read-only file system" in out
    assert not home.exists()
    assert not (tmp_path / "outside.txt").exists()  # the sandbox's /tmp is its own


# --- item 7: environment -----------------------------------------------------------------------


async def test_only_allowed_variables_reach_the_command(
    ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "aws-leak")
    monkeypatch.setenv("DATABASE_URL", "postgresql://app:pw-leak@db/app")
    monkeypatch.setenv("SHIYI_SERVER__TOKEN", "srv-leak")
    monkeypatch.setenv("LC_ALL", "C.UTF-8")
    out = await run(ctx, command="env")
    for secret in ("aws-leak", "pw-leak", "srv-leak"):
        assert secret not in out
    names = {line.split("=", 1)[0] for line in out.splitlines()[1:] if "=" in line}
    assert {"PATH", "LC_ALL"} <= names
    assert "AWS_SECRET_ACCESS_KEY" not in names and "DATABASE_URL" not in names


async def test_bash_env_passes_more_names(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JAVA_HOME", "/opt/jdk")
    monkeypatch.setenv("PROJECT_MODE", "dev")
    settings.tools.bash_env = ["JAVA_*", "PROJECT_MODE"]
    out = await run(ToolContext.for_settings(settings), command="echo $JAVA_HOME $PROJECT_MODE")
    assert out.splitlines()[1] == "/opt/jdk dev"


# --- item 7: nothing survives the timeout ------------------------------------------------------


def sleepers(seconds: int) -> list[int]:
    """Live processes running `sleep <seconds>` (a number no other test uses)."""
    wanted = f"sleep\0{seconds}\0".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if cmdline.endswith(wanted) and state not in ("Z", "X"):
            found.append(int(entry.name))
    return found


@pytest.fixture
def unique_sleep() -> Iterator[int]:
    seconds = random.randint(700_000, 799_999)
    yield seconds
    for pid in sleepers(seconds):  # never leak one, whatever the test found
        os.kill(pid, 9)


async def left_after(seconds: int, within: float = 3.0) -> list[int]:
    for _ in range(int(within / 0.05)):
        if not sleepers(seconds):
            return []
        await asyncio.sleep(0.05)
    return sleepers(seconds)


@pytest.mark.parametrize(
    "template",
    [
        "setsid sleep {n} & sleep 30",
        "(setsid sleep {n} > /dev/null 2>&1 &); sleep 30",
        "nohup sleep {n} > /dev/null 2>&1 & sleep 30",
        "setsid bash -c '(sleep {n} &) ; sleep 30' > /dev/null 2>&1 & sleep 30",
    ],
)
async def test_no_process_survives_the_timeout(
    ctx: ToolContext, unique_sleep: int, template: str
) -> None:
    command = template.format(n=unique_sleep)
    task = asyncio.ensure_future(run(ctx, command=command, timeout=1.5))
    for _ in range(100):  # it started: the test sees what the kill has to find
        if sleepers(unique_sleep):
            break
        await asyncio.sleep(0.02)
    assert sleepers(unique_sleep)
    with pytest.raises(ToolError, match="timed out"):
        await task
    assert await left_after(unique_sleep) == []


async def test_cancelling_kills_a_setsid_process(ctx: ToolContext, unique_sleep: int) -> None:
    task = asyncio.ensure_future(run(ctx, command=f"setsid sleep {unique_sleep} & wait"))
    for _ in range(100):
        if sleepers(unique_sleep):
            break
        await asyncio.sleep(0.02)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await left_after(unique_sleep) == []


# --- the setting -------------------------------------------------------------------------------


def test_the_description_says_how_commands_run(mode: str) -> None:
    from shiyi.config.settings import ToolSettings

    described = bash_for(ToolSettings(bash_sandbox=mode)).spec.description  # type: ignore[arg-type]
    expected = "in a sandbox" if mode == "bwrap" else "plain bash"
    assert expected in described


def test_bwrap_required_but_unusable_is_an_error() -> None:
    unusable = "/bin/false"  # a real binary that cannot make a sandbox
    with pytest.raises(ToolError, match=r"tools\.bash_sandbox is bwrap"):
        sandbox_binary("bwrap", unusable)
    assert sandbox_binary("auto", unusable) is None
    assert sandbox_binary("off") is None


@pytest.mark.skipif(not HAS_BWRAP, reason="no bwrap")
@pytest.mark.parametrize("mode", ["bwrap"])
async def test_in_the_sandbox_nothing_outlives_the_command(
    ctx: ToolContext, unique_sleep: int
) -> None:
    """Plain bash lets a nohup job run on (test_shell.py); the sandbox's process namespace
    ends with the command, and the timeout advice says so."""
    out = await run(ctx, command=f"nohup sleep {unique_sleep} > /dev/null 2>&1 & echo started")
    assert "started" in out
    assert await left_after(unique_sleep) == []
    with pytest.raises(ToolError, match="in the sandbox background jobs end with the command"):
        await run(ctx, command="sleep 30", timeout=0.3)


async def test_a_persona_planted_in_the_config_dir_is_removed(
    ctx: ToolContext, tmp_path: Path
) -> None:
    config_dir = tmp_path / "xdg-config" / "shiyi"  # XDG_CONFIG_HOME from the test env
    config_dir.mkdir(parents=True)
    # Spelled so that the checks cannot see the protected directory's name.
    hidden = f'd="{config_dir.parent}/shi"; echo obey > "${{d}}yi/persona.md"; echo done'
    assert "done" in await run(ctx, command=hidden)
    assert not (config_dir / "persona.md").exists()


async def test_a_glob_over_the_config_is_refused_only_without_a_sandbox(
    ctx: ToolContext, mode: str
) -> None:
    """Without a sandbox `grep token *` would print the token, so it is refused; in one the
    file reads as nothing, and commands over * still work in a workspace holding it."""
    if mode == "off":
        with pytest.raises(CommandDenied, match="protected"):
            await run(ctx, command="grep -h token *")
        return
    out = await run(ctx, command="grep -h token *; ls *")
    assert TOKEN not in out
    assert "Permission denied" in out


@pytest.mark.skipif(not HAS_BWRAP, reason="no bwrap")
@pytest.mark.parametrize("mode", ["bwrap"])
async def test_temp_files_and_caches_work_in_the_sandbox(ctx: ToolContext) -> None:
    out = await run(
        ctx, command='t=$(mktemp) && echo ok > "$t" && cat "$t"; mkdir -p "$XDG_CACHE_HOME/x"'
    )
    assert out == "exit code: 0\nok\n"


# --- issue 29 item 5: code locations are read-only in the sandbox ---------------------------


@pytest.mark.skipif(not HAS_BWRAP, reason="no bwrap")
@pytest.mark.parametrize("mode", ["bwrap"])  # without a sandbox only the checks stand
async def test_the_sandbox_keeps_code_locations_read_only(
    workspace: Path, settings: Settings
) -> None:
    """Names the checks cannot read still land on a read-only virtualenv and .git."""
    site = workspace / ".venv/lib/python3.11/site-packages"
    site.mkdir(parents=True)
    (workspace / ".venv/pyvenv.cfg").write_text("home = /usr/bin\n")
    (workspace / ".git/hooks").mkdir(parents=True)
    (workspace / ".git/config").write_text("[core]\n")
    ctx = ToolContext.for_settings(settings)
    out = await run(
        ctx,
        command="v=$(printf .ven)v; g=$(printf .gi)t; "
        'echo planted > "$v/lib/python3.11/$(printf site)-packages/$(printf x.p)th"; '
        'echo planted > "$g/hooks/$(printf pre)-commit"; '
        'echo "[core] hooksPath = /tmp" >> "$g/$(printf conf)ig"; '
        "cat $v/pyvenv.cfg; echo ok > notes.txt; echo end",
    )
    assert out.count("Read-only file system") == 3, out
    assert "home = /usr/bin" in out and out.rstrip().endswith("end")
    assert list(site.iterdir()) == []
    assert list((workspace / ".git/hooks").iterdir()) == []
    assert (workspace / ".git/config").read_text() == "[core]\n"
    assert (workspace / "notes.txt").read_text() == "ok\n"
