"""Run one program without capabilities and, when told to stop, end everything it started.

The bash tool without a sandbox runs ``python -I -S supervise.py PROGRAM ARGS...`` (Linux):

* the supervisor is a child subreaper, so every orphan of the command (``setsid``,
  ``env -i``, double forks) becomes its child instead of init's and stays findable;
  SIGTERM (the bash tool's timeout, or shiyi exiting: the parent-death signal) makes it
  SIGTERM its whole tree, then SIGKILL whatever is left after :data:`GRACE` seconds, until
  nothing remains;
* the program runs with no capabilities (bounding, ambient, effective, permitted and
  inheritable sets emptied), so as root it cannot ``ptrace`` or read the non-dumpable shiyi
  process's ``/proc/<pid>/environ`` or ``mem``;
* when the program exits on its own, the supervisor exits with its status and leaves its
  background jobs running (``nohup CMD &`` is how a long job outlives the command).

It imports nothing from shiyi (``-I -S``: no working directory, no site, so nothing in the
workspace can shadow what it imports).
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import signal
import sys
import time
from types import FrameType

GRACE = 0.5
"""Seconds between SIGTERM and SIGKILL for the tree; below the bash tool's own grace, so the
supervisor is done before the tool would SIGKILL it."""
_PR_SET_PDEATHSIG = 1
_PR_CAPBSET_DROP = 24
_PR_SET_CHILD_SUBREAPER = 36
_PR_CAP_AMBIENT = 47
_PR_CAP_AMBIENT_CLEAR_ALL = 4
_CAPABILITY_VERSION_3 = 0x20080522
_POLL = 0.02


class _Stop(Exception):
    """Raised by the signal handler: stop waiting, end the tree."""


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def drop_capabilities(libc: ctypes.CDLL) -> None:
    """Empty every capability set of this process (what execve keeps too).  Without
    CAP_SETPCAP (not root) the bounding set stays, and there is nothing to drop anyway."""
    for cap in range(64):
        if libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 and ctypes.get_errno() == errno.EINVAL:
            break  # past the last capability this kernel knows
    libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    header = (ctypes.c_uint32 * 2)(_CAPABILITY_VERSION_3, 0)
    empty = (ctypes.c_uint32 * 6)()  # effective, permitted, inheritable x 2 words
    libc.capset(header, empty)


def descendants() -> list[int]:
    """The live processes below this one (zombies are left to :func:`reap`)."""
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", encoding="ascii", errors="replace") as fh:
                stat = fh.read()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if fields[0] not in ("Z", "X"):
            children.setdefault(int(fields[1]), []).append(int(name))
    found: list[int] = []
    pending = [os.getpid()]
    while pending:
        for child in children.get(pending.pop(), ()):
            found.append(child)
            pending.append(child)
    return found


def reap() -> None:
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(-1, os.WNOHANG)[0] != 0:
            pass


def end_tree() -> None:
    """SIGTERM every descendant, SIGKILL what is left after GRACE, until none remain (a
    process forked during a pass is found by the next one)."""
    _signal_all(signal.SIGTERM)
    deadline = time.monotonic() + GRACE
    while time.monotonic() < deadline and descendants():
        reap()
        time.sleep(_POLL)
    while pids := descendants():
        _signal_all(signal.SIGKILL, pids)
        reap()
        time.sleep(_POLL / 4)
    reap()


def _signal_all(sig: signal.Signals, pids: list[int] | None = None) -> None:
    for pid in descendants() if pids is None else pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


def _stop(signum: int, frame: FrameType | None) -> None:
    raise _Stop


def _exit_like(status: int) -> None:
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        with contextlib.suppress(OSError, ValueError):  # SIGKILL has no handler to reset
            signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
        os._exit(128 + sig)  # the signal is blocked or ignored: say so in the code
    os._exit(os.WEXITSTATUS(status))


def _run_child(argv: list[str], libc: ctypes.CDLL) -> None:
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)
    drop_capabilities(libc)
    try:
        os.execv(argv[0], argv)
    except OSError as exc:
        os.write(2, f"cannot run {argv[0]}: {exc.strerror}\n".encode())
    os._exit(127)


def main(argv: list[str]) -> None:
    libc = _libc()
    libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, _stop)
    child = os.fork()
    if child == 0:
        _run_child(argv, libc)
    try:
        while True:
            pid, status = os.waitpid(-1, 0)
            if pid == child:
                _exit_like(status)
    except _Stop:
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, signal.SIG_IGN)
        end_tree()
        os._exit(128 + signal.SIGTERM)


if __name__ == "__main__":
    main(sys.argv[1:])
