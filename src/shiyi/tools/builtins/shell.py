"""The bash tool: run a shell command in the workspace, bounded in time and output."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from shiyi.config.settings import ToolSettings
from shiyi.errors import ToolError
from shiyi.tools.base import FunctionTool, Tool, ToolContext, tool
from shiyi.tools.builtins import git_guard
from shiyi.tools.builtins.bash_checks import check_command
from shiyi.tools.builtins.config_guard import restore, take_snapshot
from shiyi.tools.builtins.sandbox import (
    RUN_MARKER,
    WorkspaceScan,
    bwrap_argv,
    command_environment,
    describe_sandbox,
    sandbox_binary,
    scan_workspace,
)
from shiyi.tools.builtins.sandbox_limits import RunLimits, run_limits
from shiyi.tools.builtins.unsandboxed import close_to_inspection, supervised
from shiyi.tools.output import cap_output

# Above the default bash_max_timeout, so the registry's per-tool timeout never pre-empts the
# command's own (which kills the process group and keeps the partial output).
TOOL_TIMEOUT = 660.0
_CLEANUP_MARGIN = 60.0
KILL_GRACE = 2.0
"""Seconds between SIGTERM and SIGKILL for the command's process group."""
EOF_GRACE = 1.0
"""Seconds to wait for the output pipe to close after bash itself has exited."""
_POLL = 0.05
_PROC = Path("/proc")
_CHUNK = 65536


class Ending(Enum):
    EXITED = "exited"
    TIMED_OUT = "timed out"
    DETACHED = "detached"  # bash exited, but background jobs still held its output open


@dataclass(slots=True, frozen=True)
class _Run:
    ending: Ending
    returncode: int | None
    output: str
    sandboxed: bool
    notes: list[str]


_LONG_JOB_ADVICE = {
    False: "Pass a larger timeout, or run long jobs in the background with their output in "
    "a file (nohup CMD > log 2>&1 &).",
    # In the sandbox's process namespace nothing outlives the command, nohup neither.
    True: "Pass a larger timeout (up to the configured maximum); in the sandbox background "
    "jobs end with the command.",
}


class OutputBuffer:
    """Keeps the head and a rolling tail of a stream: at most ``2 * limit`` bytes in memory."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._head = bytearray()
        self._tail = bytearray()
        self.dropped = 0

    def feed(self, data: bytes) -> None:
        room = self.limit - len(self._head)
        if room > 0:
            self._head += data[:room]
            data = data[room:]
        self._tail += data
        excess = len(self._tail) - self.limit
        if excess > 0:
            del self._tail[:excess]
            self.dropped += excess

    @property
    def held(self) -> int:
        """Bytes currently kept in memory."""
        return len(self._head) + len(self._tail)

    def render(self) -> str:
        """The output within ``limit`` characters, marking what was cut from the middle."""
        head = self._head.decode("utf-8", errors="replace")
        tail = self._tail.decode("utf-8", errors="replace")
        if not self.dropped:
            return cap_output(head + tail, self.limit)
        # The middle is already gone, so cap_output cannot count it: cut and mark here instead.
        # Sized for the largest count, so the real (smaller) number keeps us within the limit.
        total = self.dropped + len(head) + len(tail)
        budget = max(self.limit - len(_omitted_marker(total)), 0)
        head_keep = min(budget * 2 // 3, len(head))
        tail_keep = min(budget - head_keep, len(tail))
        marker = _omitted_marker(total - head_keep - tail_keep)
        return head[:head_keep] + marker + (tail[-tail_keep:] if tail_keep else "")


def _omitted_marker(count: int) -> str:
    return (
        f"\n[... about {count} characters of output omitted; send the output to a file and "
        "use grep or read_file on it to see them ...]\n"
    )


@tool(sequential=True, timeout=TOOL_TIMEOUT)
async def bash(
    command: str,
    ctx: ToolContext,
    timeout: float | None = None,  # noqa: ASYNC109 - the model's name for it; see _await_end
) -> str:
    """Run a command with /bin/bash in the workspace root; returns exit code and output.

    stdout and stderr are combined; long output keeps its beginning and end. The command and
    every process it started are killed when the timeout expires.

    Args:
        command: The bash command line to run.
        timeout: Seconds before the command is killed (default and maximum are configured).
    """
    if not command.strip():
        raise ToolError("command is empty; pass the shell command to run.")
    sandboxed = sandbox_binary(ctx.settings.bash_sandbox) is not None
    check_command(command, ctx.workspace, ctx.settings.bash_deny, expand_globs=not sandboxed)
    return describe_outcome(await run_confined(["/bin/bash", "-c", command], ctx, timeout))


@dataclass(slots=True, frozen=True)
class Outcome:
    """How a confined program ended: its exit code, output and notes for the model."""

    returncode: int | None
    output: str
    notes: list[str]


async def run_confined(
    program: list[str],
    ctx: ToolContext,
    timeout: float | None,  # noqa: ASYNC109 - the command's own limit; see _await_end
) -> Outcome:
    """Run ``program`` (an interpreter and its arguments) the way ``bash`` runs a command:
    in the workspace, under the sandbox when there is one, with the allowed environment,
    within the timeout, and with the agent's own configuration and git's config and hooks
    (:mod:`.git_guard`) put back if it changed them.  The caller has already checked what it
    runs.  A timeout raises :class:`ToolError`."""
    seconds, notes = _effective_timeout(timeout, ctx)
    snapshot = take_snapshot(ctx.workspace)
    root = ctx.workspace.root
    guard_git = ctx.workspace.protected.code_dirs is not None  # not tools.allow_code_paths
    scan = scan_workspace(root) if guard_git else None
    git = git_guard.take(root, scan.git) if scan is not None else None
    try:
        run = await _execute(program, ctx, seconds, scan, git)
    finally:
        restored = restore(snapshot)
        git_restored = git_guard.restore(root, git, scan_workspace(root).git) if git else None
    if git_restored is not None and (git_note := git_restored.note(root)):
        notes.append(git_note)
    if restored:
        names = ", ".join(ctx.workspace.display(p) for p in restored)
        notes.append(
            f"the command changed {names}, the agent's own configuration, which it may not "
            "change; it was put back. Ask the user to make this change themselves"
        )
    notes += run.notes
    if run.ending is Ending.TIMED_OUT:
        limits = "".join(f"\nnote: {n}" for n in notes)
        raise ToolError(
            f"the command timed out after {seconds:g} s; it and all its child processes were "
            f"killed. {_LONG_JOB_ADVICE[run.sandboxed]}{limits}\nOutput before the timeout:\n"
            f"{run.output or '(no output)'}"
        )
    if run.ending is Ending.DETACHED:
        notes.append(
            "background processes still writing to the output were stopped; redirect their "
            "output to a file (nohup CMD > log 2>&1 &) to keep them running"
        )
    return Outcome(run.returncode, run.output, notes)


def describe_outcome(outcome: Outcome) -> str:
    """The tool result: exit code, notes, then the output."""
    header = [f"exit code: {_describe_code(outcome.returncode)}"]
    header += [f"note: {n}" for n in outcome.notes]
    return "\n".join([*header, outcome.output or "(no output)"])


def bash_for(settings: ToolSettings) -> Tool:
    """The bash tool, with a registry deadline that leaves room for the configured maximum
    and a description saying whether commands run in a sandbox."""
    needed = max(settings.bash_max_timeout + _CLEANUP_MARGIN, TOOL_TIMEOUT)
    confined = describe_sandbox(settings.bash_sandbox, network=settings.bash_network)
    description = f"{bash.spec.description}\n\n{confined}"
    return FunctionTool(bash.func, description=description, sequential=True, timeout=needed)


def _effective_timeout(requested: float | None, ctx: ToolContext) -> tuple[float, list[str]]:
    settings = ctx.settings
    if requested is None:
        return min(settings.bash_timeout, settings.bash_max_timeout), []
    if requested <= 0:
        raise ToolError(f"timeout must be a positive number of seconds (got {requested:g}).")
    if requested > settings.bash_max_timeout:
        limit = settings.bash_max_timeout
        return limit, [f"timeout {requested:g} s exceeds the maximum; using {limit:g} s"]
    return requested, []


def _describe_code(code: int | None) -> str:
    if code is None:
        return "unknown"
    if code < 0:
        try:
            return f"{code} (killed by {signal.Signals(-code).name})"
        except ValueError:
            return str(code)
    return str(code)


async def _execute(
    program: list[str],
    ctx: ToolContext,
    seconds: float,
    scan: WorkspaceScan | None = None,
    git: git_guard.GitSnapshot | None = None,
) -> _Run:
    marker = uuid.uuid4().hex
    argv, env, limits = _command_argv(program, ctx, marker, scan, git)
    try:
        return await _execute_limited(argv, env, limits, ctx, seconds, marker)
    finally:
        if limits is not None:
            await asyncio.shield(limits.close())


async def _execute_limited(
    argv: list[str],
    env: dict[str, str],
    limits: RunLimits | None,
    ctx: ToolContext,
    seconds: float,
    marker: str,
) -> _Run:
    preexec = limits.preexec if limits is not None else None
    proc = await _spawn(argv, env, ctx.workspace.root, marker, preexec)
    buffer = OutputBuffer(ctx.settings.output_cap_chars)
    assert proc.stdout is not None
    reader = asyncio.create_task(_pump(proc.stdout, buffer))
    try:
        ending = await _await_end(proc, reader, seconds)
    except BaseException:
        # Cancelled mid-run: nobody will read the output, but the processes must not survive.
        reader.cancel()
        _signal_run(proc.pid, marker, signal.SIGTERM)
        await asyncio.shield(stop_run(proc.pid, marker))
        raise
    if ending is Ending.TIMED_OUT:
        await stop_run(proc.pid, marker)
    elif ending is Ending.DETACHED:
        # Only what holds the output: a job the command detached on purpose (nohup, setsid,
        # its output in a file) may go on.
        await stop_run(proc.pid, None)
    await _finish(reader)
    # The exit status of a killed bash may not have been collected yet.
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(proc.wait(), EOF_GRACE)
    sandboxed = limits is not None  # only the bwrap sandbox has limits
    output = buffer.render()
    notes = limits.notes(output) if limits is not None else []
    return _Run(ending, proc.returncode, output, sandboxed, notes)


def _command_argv(
    program: list[str],
    ctx: ToolContext,
    marker: str,
    scan: WorkspaceScan | None = None,
    git: git_guard.GitSnapshot | None = None,
) -> tuple[list[str], dict[str, str], RunLimits | None]:
    """What to exec (``program``, under bwrap when there is one, else under the supervisor
    of :mod:`.unsandboxed`), its environment and, in the sandbox, its resource limits (None:
    not sandboxed).  ``scan``: the workspace's walk, if made; ``git``: the guarded git
    files, bound read-only in the sandbox."""
    settings = ctx.settings
    env = command_environment(settings.bash_env, marker=marker)
    binary = sandbox_binary(settings.bash_sandbox)
    if binary is None:
        return supervised(program), env, None
    # The sandbox's private /tmp is the only writable place besides the workspace: temp
    # files and caches (pip's, and whatever else follows XDG) go there, not to a read-only ~.
    env["TMPDIR"] = "/tmp"
    env["XDG_CACHE_HOME"] = "/tmp/.cache"
    close_to_inspection()  # bwrap is Linux-only; a sandbox that leaks /proc stays closed too
    root = ctx.workspace.root
    prefix = bwrap_argv(
        binary,
        root,
        ctx.workspace.protected,
        network=settings.bash_network,
        scan=scan,
        read_only=git.read_only(root) if git is not None else (),
    )
    return [*prefix, *program], env, run_limits(settings, marker)


async def _spawn(
    argv: list[str],
    env: dict[str, str],
    cwd: Path,
    marker: str,
    preexec: Callable[[], None] | None = None,
) -> asyncio.subprocess.Process:
    """Start bash in its own process group (and session), so the command and everything it
    spawns can be killed at once; ``marker`` finds what left the group.

    The process runs before ``create_subprocess_exec`` returns (it still connects the pipes).
    Cancelled in that window, asyncio kills bash alone and its background jobs lived on
    (seen: 1 run in 12 of a test cancelling right after the command started), so the spawn
    is shielded and a cancelled caller stops the whole group once it exists.
    """
    spawn = asyncio.ensure_future(
        asyncio.create_subprocess_exec(
            *argv,
            cwd=cwd,
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=preexec,  # the sandbox's limits, set in the child before exec
        )
    )
    try:
        return await asyncio.shield(spawn)
    except asyncio.CancelledError:
        with contextlib.suppress(Exception):
            proc = await spawn
            await asyncio.shield(stop_run(proc.pid, marker))
        raise


async def _pump(stream: asyncio.StreamReader, buffer: OutputBuffer) -> None:
    while chunk := await stream.read(_CHUNK):
        buffer.feed(chunk)


async def _await_end(
    proc: asyncio.subprocess.Process, reader: asyncio.Task[None], seconds: float
) -> Ending:
    # proc.wait() may also wait for the pipe to close, which a background job can hold open
    # indefinitely; polling returncode tells when bash itself has exited.
    try:
        async with asyncio.timeout(seconds):
            while proc.returncode is None:
                await asyncio.wait({reader}, timeout=_POLL)
                if reader.done():
                    await proc.wait()
    except TimeoutError:
        return Ending.TIMED_OUT
    done, _ = await asyncio.wait({reader}, timeout=EOF_GRACE)
    return Ending.EXITED if done else Ending.DETACHED


async def _finish(reader: asyncio.Task[None]) -> None:
    """Collect the output still in the pipe; give up if something outside the group holds it."""
    done, _ = await asyncio.wait({reader}, timeout=EOF_GRACE)
    if not done:
        reader.cancel()


async def stop_run(pgid: int, marker: str | None) -> None:
    """SIGTERM the process group and every process carrying ``marker`` (those that left the
    group: ``setsid``, double forks), then SIGKILL whatever is left after a grace period."""
    _signal_run(pgid, marker, signal.SIGTERM)
    if await _run_gone(pgid, marker, KILL_GRACE):
        return
    # Again at every poll: a process forked just before a scan is found by the next one.
    loop = asyncio.get_running_loop()
    deadline = loop.time() + KILL_GRACE
    while loop.time() < deadline:
        _signal_run(pgid, marker, signal.SIGKILL)
        if await _run_gone(pgid, marker, _POLL):
            return


def _signal_run(pgid: int, marker: str | None, sig: signal.Signals) -> None:
    # ProcessLookupError: the group is already gone, which is the goal.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)
    for pid in marked_processes(marker) if marker else ():
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


async def _run_gone(pgid: int, marker: str | None, within: float) -> bool:
    """Wait until no process of the group, and none carrying ``marker``, still runs."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while group_running(pgid) or (marker and marked_processes(marker)):
        if loop.time() >= deadline:
            return False
        await asyncio.sleep(_POLL)
    return True


def marked_processes(marker: str) -> list[int]:
    """Live processes whose environment holds ``RUN_MARKER=marker`` (it is inherited, and
    kept by setsid and nohup; a process that empties its environment is not found)."""
    entry_bytes = f"\0{RUN_MARKER}={marker}\0".encode()
    found = []
    for entry in os.scandir(_PROC) if _PROC.is_dir() else ():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = Path(entry.path, "environ").read_bytes()
        except OSError:
            continue  # exited, or not ours to read
        if entry_bytes in b"\0" + environ and _alive(entry.path):
            found.append(int(entry.name))
    return found


def _alive(proc_dir: str) -> bool:
    try:
        stat = Path(proc_dir, "stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2 :].split()[0] not in ("Z", "X")


def group_running(pgid: int) -> bool:
    """True while a process of the group runs; zombies waiting to be reaped do not count."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return _has_running_member(pgid) if _PROC.is_dir() else True


def _has_running_member(pgid: int) -> bool:
    # Orphans stay zombies until init reaps them, which some container inits do only once a
    # second or so; waiting for that would just slow every timeout down.
    for entry in os.scandir(_PROC):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text()
        except OSError:
            continue  # exited while we looked
        state, _ppid, group = stat[stat.rindex(")") + 2 :].split()[:3]
        if int(group) == pgid and state not in ("Z", "X"):
            return True
    return False
