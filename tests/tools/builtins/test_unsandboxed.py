"""Plain bash (``tools.bash_sandbox: off``) cannot read shiyi's environment, and nothing it
starts outlives its timeout (issue 29 item 8).

The test process plays shiyi: it runs the real bash tool, so the command's grandparent is
this process (its parent is the supervisor).  Run as root (like CI), the command also loses
root's capabilities; as another user there were none to lose.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from shiyi.config.settings import ToolSettings
from shiyi.errors import ToolError
from shiyi.tools.base import ToolContext
from shiyi.tools.builtins import shell
from shiyi.tools.builtins.shell import bash

pytestmark = pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs /proc")


@pytest.fixture
def ctx(workspace: Path) -> ToolContext:
    return ToolContext.for_dir(workspace, ToolSettings(bash_sandbox="off"))


@pytest.fixture(autouse=True)
def _short_grace(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shell, "KILL_GRACE", 1.0)


@pytest.fixture
def spawned() -> Iterator[list[int]]:
    pids: list[int] = []
    yield pids
    for pid in pids:
        if alive(pid):
            os.kill(pid, signal.SIGKILL)


async def run(ctx: ToolContext, **arguments: Any) -> str:
    return await bash.invoke(bash.validate(arguments), ctx)


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


async def gone(pid: int, within: float = 5.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        await asyncio.sleep(0.02)
    return not alive(pid)


def pids_in(text: str, name: str) -> list[int]:
    return [int(line.split("=", 1)[1]) for line in text.splitlines() if line.startswith(name)]


# --- shiyi's environment ------------------------------------------------------------------


async def test_bash_cannot_read_shiyi_environment_or_memory(ctx: ToolContext) -> None:
    me = os.getpid()
    command = (
        f"tr '\\0' '\\n' < /proc/{me}/environ && echo environ-read; "
        f"head -c 16 /proc/{me}/mem > /dev/null && echo mem-read; "
        f"readlink /proc/{me}/fd/0 && echo fd-read; "
        f"readlink /proc/{me}/cwd && echo cwd-read; "
        "gp=$(awk '{print $4}' /proc/$PPID/stat); "
        "tr '\\0' '\\n' < /proc/$gp/environ && echo grandparent-read; "
        "echo still-works > made.txt && cat made.txt"
    )
    out = await run(ctx, command=command)
    for leak in ("environ-read", "mem-read", "fd-read", "cwd-read", "grandparent-read"):
        assert leak not in out
    assert "PATH=" not in out.replace("still-works", "")
    assert "Permission denied" in out
    assert out.rstrip().endswith("still-works")


@pytest.mark.skipif(os.geteuid() != 0, reason="capabilities are root's")
async def test_bash_as_root_runs_without_capabilities(ctx: ToolContext) -> None:
    out = await run(ctx, command="grep -E '^Cap(Inh|Prm|Eff|Bnd|Amb)' /proc/self/status; id -u")
    sets = dict(line.split(":\t") for line in out.splitlines() if line.startswith("Cap"))
    assert set(sets) == {"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"}
    assert all(int(value, 16) == 0 for value in sets.values()), sets
    assert out.rstrip().endswith("0")  # still root by uid: files it owns stay usable


async def test_the_parent_of_bash_holds_no_secrets(
    ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    """$PPID is the supervisor: it was started with the allowed environment only."""
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "aws-leak-4711")
    out = await run(ctx, command="tr '\\0' '\\n' < /proc/$PPID/environ")
    assert "aws-leak-4711" not in out
    assert "AWS_SECRET_ACCESS_KEY" not in out


# --- nothing outlives the timeout -----------------------------------------------------------


async def test_an_emptied_environment_in_a_new_session_dies_at_the_timeout(
    ctx: ToolContext, spawned: list[int]
) -> None:
    """``env -i`` drops the run marker and ``setsid`` leaves the group: the old kill missed it."""
    command = (
        "env -i setsid sleep 771 & echo first=$!; "
        "(env -i setsid sh -c 'sleep 772 & echo second=$!' &); "
        "sleep 0.3; sleep 60"
    )
    with pytest.raises(ToolError, match="timed out") as info:
        await run(ctx, command=command, timeout=1.5)
    found = pids_in(str(info.value), "first=") + pids_in(str(info.value), "second=")
    assert len(found) == 2, str(info.value)
    spawned.extend(found)
    for pid in found:
        assert await gone(pid), f"pid {pid} survived the timeout"


async def test_a_normal_end_leaves_nohup_jobs_running(
    workspace: Path, ctx: ToolContext, spawned: list[int]
) -> None:
    """What the README promises without a sandbox: a job detached on purpose goes on."""
    out = await run(ctx, command="nohup env -i sleep 773 > /dev/null 2>&1 & echo job=$!")
    (pid,) = pids_in(out, "job=")
    spawned.append(pid)
    assert alive(pid)


async def test_the_exit_code_and_a_signal_come_through(ctx: ToolContext) -> None:
    assert (await run(ctx, command="exit 7")).startswith("exit code: 7")
    assert "killed by SIGKILL" in await run(ctx, command="kill -9 $$")
