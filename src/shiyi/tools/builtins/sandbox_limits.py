"""How much a sandboxed command may take: processes (a fork bomb) and memory.

A pids cgroup bounds every process and thread of one run together, as root too; shiyi needs
a writable pids cgroup to make one (root in most containers and CI).  Without one the
fallback is RLIMIT_NPROC, which the kernel counts per user over the whole machine and does
not apply to root at all, so it is set above the user's current count and only bounds
non-root users.  RLIMIT_DATA bounds what each process allocates (heap and anonymous
mappings, not file mappings or reserved address space, so Go, Java and Node start as
usual).  Limits are set in the child between fork and exec: bwrap and everything it starts
inherit them, and shiyi itself is never limited.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import resource
from dataclasses import dataclass
from pathlib import Path

from shiyi.config.settings import ToolSettings

log = logging.getLogger(__name__)

_CGROUP_ROOT = Path("/sys/fs/cgroup")
_PROC = Path("/proc")
_RMDIR_TRIES = 20
_MEMORY_SIGNS = ("MemoryError", "Cannot allocate memory", "std::bad_alloc", "out of memory")
_FORK_SIGNS = ("fork: retry", "fork: Resource temporarily unavailable", "BlockingIOError")
_warned_unbounded = False


@dataclass(slots=True)
class RunLimits:
    """The limits of one run; :meth:`preexec` applies them in the child."""

    max_processes: int
    memory_bytes: int
    cgroup: Path | None = None
    nproc: int | None = None

    def preexec(self) -> None:
        """Between fork and exec: only system calls, nothing that allocates or locks."""
        resource.setrlimit(resource.RLIMIT_DATA, (self.memory_bytes, self.memory_bytes))
        if self.nproc is not None:
            resource.setrlimit(resource.RLIMIT_NPROC, (self.nproc, self.nproc))
        if self.cgroup is not None:
            fd = os.open(self.cgroup / "cgroup.procs", os.O_WRONLY)
            try:
                os.write(fd, b"0")  # 0: the writing process itself
            finally:
                os.close(fd)

    def process_limit_hit(self) -> bool:
        """Whether a fork failed at the cgroup's limit (the kernel counts it)."""
        if self.cgroup is None:
            return False
        with contextlib.suppress(OSError, ValueError):
            for line in (self.cgroup / "pids.events").read_text().splitlines():
                key, _, count = line.partition(" ")
                if key == "max" and int(count) > 0:
                    return True
        return False

    def notes(self, output: str) -> list[str]:
        """What the tool result says when the command ran into a limit."""
        notes = []
        if self.process_limit_hit() or any(sign in output for sign in _FORK_SIGNS):
            notes.append(
                f"the command reached the sandbox's limit of {self.max_processes} processes "
                "(tools.bash_max_processes); forks beyond it fail. Run fewer processes at "
                "once, or ask the user to raise the limit"
            )
        if any(sign in output for sign in _MEMORY_SIGNS):
            notes.append(
                "an allocation probably failed at the sandbox's memory limit of "
                f"{self.memory_bytes // 2**20} MB per process (tools.bash_memory_mb); use "
                "less memory, or ask the user to raise the limit"
            )
        return notes

    async def close(self) -> None:
        """Remove the run's cgroup once its last process is gone."""
        if self.cgroup is None:
            return
        for _ in range(_RMDIR_TRIES):
            try:
                self.cgroup.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:  # busy: a killed process is not reaped yet
                await asyncio.sleep(0.05)
        log.warning("could not remove the bash run's cgroup %s; it is still busy", self.cgroup)


def run_limits(settings: ToolSettings, marker: str) -> RunLimits:
    """The limits for one sandboxed run: a cgroup of its own when one can be made."""
    limits = RunLimits(settings.bash_max_processes, _within_hard(settings.bash_memory_mb))
    limits.cgroup = _make_cgroup(marker, settings.bash_max_processes)
    if limits.cgroup is None:
        limits.nproc = _nproc_limit(settings.bash_max_processes)
    return limits


def _within_hard(megabytes: int) -> int:
    wanted = megabytes * 2**20
    _soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
    return wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)


def _make_cgroup(marker: str, max_processes: int) -> Path | None:
    parent = pids_cgroup_parent()
    if parent is None:
        return None
    cgroup = parent / f"shiyi-bash-{marker}"
    try:
        cgroup.mkdir()
    except OSError as exc:
        log.debug("cannot create a pids cgroup in %s: %s", parent, exc)
        return None
    try:
        (cgroup / "pids.max").write_text(str(max_processes))
    except OSError as exc:
        log.debug("cannot set %s/pids.max: %s", cgroup, exc)
        with contextlib.suppress(OSError):
            cgroup.rmdir()
        return None
    return cgroup


def pids_cgroup_parent() -> Path | None:
    """This process's cgroup in the pids hierarchy, when shiyi may create children there:
    cgroup v1's pids controller, or v2 with pids enabled for its children."""
    try:
        lines = (_PROC / "self" / "cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        candidate: Path | None
        _id, controllers, path = line.split(":", 2)
        relative = path.lstrip("/")
        if "pids" in controllers.split(","):
            candidate = _CGROUP_ROOT / "pids" / relative
        elif controllers == "":
            candidate = _v2_candidate(relative)
        else:
            continue
        if candidate is not None and candidate.is_dir() and os.access(candidate, os.W_OK):
            return candidate
    return None


def _v2_candidate(relative: str) -> Path | None:
    for mount in (_CGROUP_ROOT, _CGROUP_ROOT / "unified"):
        candidate = mount / relative
        with contextlib.suppress(OSError):
            if "pids" in (candidate / "cgroup.subtree_control").read_text().split():
                return candidate
    return None


def _nproc_limit(max_processes: int) -> int | None:
    """RLIMIT_NPROC counts all the user's tasks: the limit sits that far above them."""
    global _warned_unbounded
    if os.getuid() == 0:
        if not _warned_unbounded:
            _warned_unbounded = True
            log.warning(
                "running as root without a writable pids cgroup: the bash sandbox's process "
                "limit (tools.bash_max_processes) cannot be enforced here"
            )
        return None
    wanted = _user_task_count() + max_processes
    _soft, hard = resource.getrlimit(resource.RLIMIT_NPROC)
    return wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)


def _user_task_count() -> int:
    """The user's processes and threads: the kernel counts threads against RLIMIT_NPROC."""
    uid = os.getuid()
    count = 0
    for entry in os.scandir(_PROC):
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if entry.stat().st_uid == uid:
                    count += len(os.listdir(Path(entry.path, "task")))
    return count
