from __future__ import annotations

import asyncio
import json
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from shiyi.config.settings import ToolSettings
from shiyi.errors import CommandDenied, ToolError
from shiyi.llm.types import ToolCall
from shiyi.tools.base import ToolContext
from shiyi.tools.builtins import shell
from shiyi.tools.builtins.shell import OutputBuffer, bash, bash_for
from shiyi.tools.registry import ToolRegistry


@pytest.fixture
def ctx(workspace: Path) -> ToolContext:
    # Plain bash: these tests follow the command's own pids ($$), which a sandbox's process
    # namespace renumbers; test_bash_sandbox.py runs the same kinds of commands under bwrap.
    return ToolContext.for_dir(workspace, ToolSettings(output_cap_chars=1000, bash_sandbox="off"))


@pytest.fixture(autouse=True)
def _short_grace(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shell, "KILL_GRACE", 0.5)


@pytest.fixture
def spawned() -> Iterator[list[int]]:
    """Pids a test started; anything still running at the end is killed so none leaks."""
    pids: list[int] = []
    yield pids
    for pid in pids:
        if running(pid):
            os.kill(pid, signal.SIGKILL)


async def run(ctx: ToolContext, **arguments: Any) -> str:
    return await bash.invoke(bash.validate(arguments), ctx)


def running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is dead, it only waits for init to collect its exit status.
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


def group_members(pgid: int) -> list[int]:
    members = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
                members.append(int(entry.name))
    return members


async def gone(pid: int, within: float = 2.0) -> bool:
    """Whether ``pid`` is dead within ``within`` seconds (SIGKILL lands asynchronously)."""
    for _ in range(int(within / 0.02)):
        if not running(pid):
            return True
        await asyncio.sleep(0.02)
    return not running(pid)


async def members_left(pgid: int, within: float = 2.0) -> list[int]:
    """The group's live members once they had ``within`` seconds to die: SIGKILL is
    asynchronous, and on a loaded machine a killed process is not a zombie at once."""
    for _ in range(int(within / 0.02)):
        if not group_members(pgid):
            return []
        await asyncio.sleep(0.02)
    return group_members(pgid)


def _text(path: Path) -> str:
    return path.read_text().strip() if path.exists() else ""


async def read_pids(workspace: Path, *names: str, within: float = 5.0) -> list[int]:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        texts = [
            (workspace / n).read_text().strip() if (workspace / n).exists() else "" for n in names
        ]
        if all(texts):
            return [int(t) for t in texts]
        await asyncio.sleep(0.02)
    raise AssertionError(f"the command never wrote {names}")


# --- ordinary runs ----------------------------------------------------------------------


async def test_output_and_exit_code(workspace: Path, ctx: ToolContext) -> None:
    out = await run(ctx, command="pwd; echo oops >&2; exit 3")
    assert out.splitlines() == ["exit code: 3", str(ctx.workspace.root), "oops"]


async def test_no_output_and_no_stdin(ctx: ToolContext) -> None:
    assert await run(ctx, command="cat") == "exit code: 0\n(no output)"


async def test_undecodable_output_does_not_break(ctx: ToolContext) -> None:
    out = await run(ctx, command=r"printf 'ok \xff\xfe\n'")
    assert out.startswith("exit code: 0\nok ")


async def test_empty_command(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match="command is empty"):
        await run(ctx, command="   ")


async def test_huge_output_keeps_head_and_tail(ctx: ToolContext) -> None:
    out = await run(ctx, command="seq 1 300000")
    assert len(out) <= 1000 + len("exit code: 0\n")
    assert out.startswith("exit code: 0\n1\n2\n3\n")
    assert out.endswith("299999\n300000\n")
    assert "characters of output omitted" in out


def test_output_buffer_memory_stays_bounded() -> None:
    buffer = OutputBuffer(1000)
    for i in range(10_000):
        buffer.feed(f"{i:08}\n".encode() * 10)
        assert buffer.held <= 2000
    text = buffer.render()
    assert len(text) <= 1000
    assert text.startswith("00000000\n")
    assert text.endswith("00009999\n")


def test_output_buffer_small_output_is_untouched() -> None:
    buffer = OutputBuffer(1000)
    buffer.feed(b"hello\n")
    assert buffer.render() == "hello\n"


async def test_timeout_is_clamped_with_a_note(workspace: Path) -> None:
    ctx = ToolContext.for_dir(workspace, ToolSettings(bash_max_timeout=5, bash_sandbox="off"))
    out = await run(ctx, command="echo ok", timeout=100)
    assert "note: timeout 100 s exceeds the maximum; using 5 s" in out
    assert out.endswith("ok\n")


async def test_bad_timeout(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match="positive number"):
        await run(ctx, command="echo", timeout=0)


def test_tool_deadline_leaves_room_for_the_bash_timeout() -> None:
    assert bash.sequential
    assert bash.timeout is not None
    assert bash.timeout > ToolSettings().bash_max_timeout
    assert bash_for(ToolSettings()).timeout == bash.timeout
    longer = bash_for(ToolSettings(bash_max_timeout=3600))
    assert longer.timeout is not None
    assert longer.timeout > 3600
    assert longer.spec.parameters == bash.spec.parameters


# --- deny rules -------------------------------------------------------------------------


async def test_default_deny_rule_blocks_before_running(workspace: Path, ctx: ToolContext) -> None:
    # Harmless if the rule failed: the dangerous words are only echoed.
    with pytest.raises(CommandDenied, match="deny rule") as info:
        await run(ctx, command="touch marker; echo rm -rf / ")
    assert r"\brm" in str(info.value)
    assert not (workspace / "marker").exists()


async def test_custom_deny_rule(workspace: Path) -> None:
    ctx = ToolContext.for_dir(workspace, ToolSettings(bash_deny=[r"\bcurl\b"], bash_sandbox="off"))
    with pytest.raises(CommandDenied, match=r"deny rule `\\bcurl\\b` and was not run"):
        await run(ctx, command="touch marker && echo curl")
    assert not (workspace / "marker").exists()
    assert "exit code: 0" in await run(ctx, command="echo reboot")


async def test_broken_deny_rule_fails_closed(workspace: Path) -> None:
    ctx = ToolContext.for_dir(workspace, ToolSettings(bash_deny=["(unclosed"], bash_sandbox="off"))
    with pytest.raises(ToolError, match="not a valid regular expression"):
        await run(ctx, command="touch marker")
    assert not (workspace / "marker").exists()


# --- runaway commands -------------------------------------------------------------------


async def test_timeout_kills_the_command(
    workspace: Path, ctx: ToolContext, spawned: list[int]
) -> None:
    started = time.monotonic()
    with pytest.raises(ToolError, match=r"timed out after 0\.5 s") as info:
        await run(ctx, command="echo $$ > pid; echo working; sleep 30", timeout=0.5)
    assert time.monotonic() - started < 10
    assert "working" in str(info.value)
    (pid,) = await read_pids(workspace, "pid")
    spawned.append(pid)
    assert await gone(pid)
    assert await members_left(pid) == []


async def test_timeout_kills_background_children(
    workspace: Path, ctx: ToolContext, spawned: list[int]
) -> None:
    command = "echo $$ > pid; sleep 1000 & echo $! > child; (sleep 1000; true) & wait"
    with pytest.raises(ToolError, match="timed out"):
        await run(ctx, command=command, timeout=0.5)
    pid, child = await read_pids(workspace, "pid", "child")
    spawned.extend([pid, child])
    assert await gone(pid)
    assert await gone(child)
    assert await members_left(pid) == []


async def test_processes_ignoring_sigterm_are_killed(
    workspace: Path, ctx: ToolContext, spawned: list[int]
) -> None:
    command = "trap '' TERM; echo $$ > pid; sleep 1000 & echo $! > child; wait"
    with pytest.raises(ToolError, match="timed out"):
        await run(ctx, command=command, timeout=0.5)
    pid, child = await read_pids(workspace, "pid", "child")
    spawned.extend([pid, child])
    assert await gone(child)
    assert await members_left(pid) == []


async def test_default_timeout_comes_from_settings(workspace: Path, spawned: list[int]) -> None:
    ctx = ToolContext.for_dir(workspace, ToolSettings(bash_timeout=0.3, bash_sandbox="off"))
    with pytest.raises(ToolError, match=r"timed out after 0\.3 s"):
        await run(ctx, command="echo $$ > pid; sleep 30")
    (pid,) = await read_pids(workspace, "pid")
    spawned.append(pid)
    assert await gone(pid)


async def test_background_job_holding_the_output_does_not_hang(
    workspace: Path, ctx: ToolContext, spawned: list[int]
) -> None:
    started = time.monotonic()
    out = await run(ctx, command="sleep 1000 & echo $! > child; echo done", timeout=30)
    assert time.monotonic() - started < 10
    assert "exit code: 0" in out
    assert "background processes still writing to the output were stopped" in out
    (child,) = await read_pids(workspace, "child")
    spawned.append(child)
    assert await gone(child)


async def test_detached_background_job_keeps_running(
    workspace: Path, ctx: ToolContext, spawned: list[int]
) -> None:
    out = await run(ctx, command="nohup sleep 1000 > /dev/null 2>&1 & echo $! > child")
    (child,) = await read_pids(workspace, "child")
    spawned.append(child)
    assert out == "exit code: 0\n(no output)"
    assert running(child)


# --- cancellation -----------------------------------------------------------------------


async def test_cancellation_kills_the_group(
    workspace: Path, ctx: ToolContext, spawned: list[int]
) -> None:
    command = "echo $$ > pid; sleep 1000 & echo $! > child; wait"
    task = asyncio.create_task(run(ctx, command=command, timeout=60))
    pid, child = await read_pids(workspace, "pid", "child")
    spawned.extend([pid, child])
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await gone(pid)
    assert await gone(child)
    assert await members_left(pid) == []


async def test_cancelling_a_registry_call_kills_the_group(
    workspace: Path, ctx: ToolContext, spawned: list[int]
) -> None:
    registry = ToolRegistry([bash])
    call = ToolCall("c1", "bash", '{"command": "echo $$ > pid; sleep 1000 & wait"}')
    task = asyncio.create_task(registry.execute(call, ctx))
    (pid,) = await read_pids(workspace, "pid")
    spawned.append(pid)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await members_left(pid) == []


async def test_cancelling_just_after_the_start_leaves_no_process(
    workspace: Path, ctx: ToolContext, spawned: list[int]
) -> None:
    """bash runs before asyncio has connected its pipes; a cancel in that window used to
    kill bash alone and leave its background job running (1 run in 12 of the test above,
    1 in 4 runs of this one with 15 attempts)."""
    registry = ToolRegistry([bash])
    for attempt in range(40):
        marker = f"pid{attempt}"
        command = f"echo $$ > {marker}; sleep 1000 & wait"
        task = asyncio.create_task(
            registry.execute(ToolCall("c1", "bash", json.dumps({"command": command})), ctx)
        )
        # Cancel as soon as bash has written its pid (a file, so no Event to wait on; its
        # content, not just the file, which the redirection creates before echo writes).
        while not _text(workspace / marker):  # noqa: ASYNC110
            await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        (pid,) = await read_pids(workspace, marker)
        spawned.append(pid)
        assert await members_left(pid) == [], f"attempt {attempt}"


async def test_timeout_through_the_registry_is_an_error_outcome(
    workspace: Path, ctx: ToolContext, spawned: list[int]
) -> None:
    registry = ToolRegistry([bash])
    arguments = '{"command": "echo $$ > pid; echo partial; sleep 30", "timeout": 0.3}'
    outcome = await registry.execute(ToolCall("c1", "bash", arguments), ctx)
    (pid,) = await read_pids(workspace, "pid")
    spawned.append(pid)
    assert not outcome.ok
    assert "timed out after 0.3 s" in outcome.content
    assert "partial" in outcome.content
    assert await gone(pid)


async def test_api_keys_are_not_visible_to_commands(
    ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-leak-me")
    monkeypatch.setenv("SHIYI_MODELS__MAIN__API_KEY", "sk-leak-me-too")
    out = await run(ctx, command="env | grep -E 'API_KEY' | sort")
    assert "sk-leak-me" not in out
