"""What ``/proc`` says about a pid: alive, when it started, what it runs.

Used to tell a live owner of the data dir from a pid that was reused after its owner died.
Without procfs (not Linux) the start time and command are unknown (None) and only
``kill(pid, 0)`` is trusted.
"""

from __future__ import annotations

import os
from pathlib import Path

_PROC = Path("/proc")
_START_FIELD = 19  # starttime (field 22 of stat) counted after the ")" closing the name


def pid_alive(pid: int) -> bool:
    """Whether ``pid`` is a running process (a zombie, killed but not reaped, is not)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: it exists
    try:
        status = (_PROC / str(pid) / "status").read_text(encoding="utf-8")
    except OSError:
        return True  # no procfs: trust kill(0)
    state = next((line for line in status.splitlines() if line.startswith("State:")), "")
    return "Z" not in state.split()[1:2]


def process_start_time(pid: int) -> float | None:
    """When ``pid`` started, in seconds since the epoch (to about a second), or None."""
    try:
        stat = (_PROC / str(pid) / "stat").read_text(encoding="utf-8")
        boot = _boot_time()
    except OSError:
        return None
    # The command name in parentheses may itself hold spaces or ")": split after the last.
    fields = stat[stat.rfind(")") + 2 :].split()
    try:
        ticks = int(fields[_START_FIELD])
    except (IndexError, ValueError):
        return None
    if boot is None:
        return None
    return boot + ticks / os.sysconf("SC_CLK_TCK")


def process_command(pid: int) -> str | None:
    """The command line of ``pid`` (arguments joined by spaces), or None when unknown."""
    try:
        raw = (_PROC / str(pid) / "cmdline").read_bytes()
    except OSError:
        return None
    return raw.replace(b"\0", b" ").decode("utf-8", "replace").strip() or None


def _boot_time() -> float | None:
    for line in (_PROC / "stat").read_text(encoding="utf-8").splitlines():
        if line.startswith("btime "):
            return float(line.split()[1])
    return None
