"""``<data dir>/server.json``: which live process owns the data dir and where it serves.

Kuzu lets one process open the store read-write.  ``shiyi serve`` and ``shiyi chat`` write
this record (pid, address) while they own it; other ``shiyi`` commands read it and talk to
that process's API instead of opening the database.  A chat's API needs the random token it
made at start (``token``): the record is the owner's alone (mode 0600, in the data dir that
the bash sandbox hides), so a program that merely finds the port cannot use the API.

A record outlives its writer when that process is killed, and after a container restart
its pid is often reused: by an unrelated process, or by the new ``shiyi serve`` itself
(which then refused to start, naming itself).  So a record counts only while its pid is
alive, is not this process (unless this process wrote it), started before the record was
written, runs shiyi (or Python), and, once past its start-up grace, answers ``/healthz``.
Anything else is stale: :func:`check_owner` removes it and says why, so the next command
opens the store itself (the kernel has already released the store's ``flock``).
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path

from shiyi.client.procinfo import pid_alive, process_command, process_start_time

log = logging.getLogger(__name__)

OWNER_FILE = "server.json"
START_GRACE_SECONDS = 15.0
"""An owner writes its record just before it listens: until then, silence is not death."""
PROBE_SECONDS = 2.0
_CLOCK_SLACK = 2.0  # /proc start times are whole seconds since boot plus clock ticks
_written_here: set[Path] = set()  # records this process wrote (its own pid is no proof)

__all__ = [
    "OWNER_FILE",
    "Owner",
    "OwnerCheck",
    "check_owner",
    "live_owner",
    "owner_hint",
    "owner_path",
    "pid_alive",
    "read_owner",
    "remove_owner",
    "write_owner",
]


@dataclass(slots=True, frozen=True)
class Owner:
    pid: int
    address: str
    started_at: float
    command: str = ""
    token: str = field(default="", repr=False)
    """The API's bearer token when the owner made one for this start (a chat's); empty
    when it uses ``server.token`` from the config, or none."""


@dataclass(slots=True, frozen=True)
class OwnerCheck:
    """The live owner, or the stale record that was removed and why (both None: no record)."""

    owner: Owner | None = None
    stale: Owner | None = None
    reason: str = ""


def owner_path(data_dir: Path) -> Path:
    return data_dir / OWNER_FILE


def owner_hint(data_dir: Path, owner: Owner) -> str:
    """How to clear an owner record, for every message that names an owner."""
    return (
        f"the owner is recorded in {owner_path(data_dir)}; stop pid {owner.pid} to release "
        f"the data dir, or, if pid {owner.pid} is not a shiyi process, delete that file"
    )


def write_owner(data_dir: Path, address: str, token: str = "") -> Owner:
    """Record this process as the owner serving ``address`` with ``token`` (atomically
    replaced; readable by this user only, since it may hold the token)."""
    command = " ".join(sys.argv) or sys.executable
    owner = Owner(os.getpid(), address, time.time(), command, token)
    data_dir.mkdir(parents=True, exist_ok=True)
    path = owner_path(data_dir)
    temporary = path.with_name(f".{OWNER_FILE}.{os.getpid()}")
    temporary.unlink(missing_ok=True)  # left by a killed process with this pid
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as file:
        file.write(json.dumps(asdict(owner)))
    os.replace(temporary, path)
    _written_here.add(path.resolve())
    return owner


def remove_owner(data_dir: Path) -> None:
    """Remove the record if it is this process's (never another owner's)."""
    path = owner_path(data_dir)
    owner = read_owner(data_dir)
    if owner is not None and owner.pid == os.getpid() and path.resolve() in _written_here:
        path.unlink(missing_ok=True)
    _written_here.discard(path.resolve())


def read_owner(data_dir: Path) -> Owner | None:
    """The record as written, alive or not; None when there is none or it is unreadable."""
    try:
        data = json.loads(owner_path(data_dir).read_text(encoding="utf-8"))
        return Owner(
            pid=int(data["pid"]),
            address=str(data["address"]),
            started_at=float(data.get("started_at", 0.0)),
            command=str(data.get("command", "")),
            token=str(data.get("token", "")),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


def live_owner(data_dir: Path) -> Owner | None:
    """The owner if it is a live shiyi process; a stale record is removed."""
    return check_owner(data_dir).owner


def check_owner(data_dir: Path) -> OwnerCheck:
    """Read the record and decide whether its process still owns ``data_dir``."""
    path = owner_path(data_dir)
    owner = read_owner(data_dir)
    if owner is None:
        if path.exists():
            log.warning("removing an unreadable owner record %s", path)
            path.unlink(missing_ok=True)
        return OwnerCheck()
    reason = stale_reason(owner, path)
    if reason is None:
        return OwnerCheck(owner=owner)
    # Info, not a warning: the commands that care (remote.find_owner) say it themselves.
    log.info("removing the stale owner record %s: %s", path, reason)
    path.unlink(missing_ok=True)
    return OwnerCheck(stale=owner, reason=reason)


def stale_reason(owner: Owner, path: Path) -> str | None:
    """Why the record at ``path`` no longer names its owner, or None if it still does."""
    pid = owner.pid
    if pid == os.getpid():
        if path.resolve() in _written_here:
            return None
        return f"pid {pid} is this very process, which did not write it (a reused pid)"
    if not pid_alive(pid):
        return f"pid {pid} is gone"
    started = process_start_time(pid)
    if started is not None and started > owner.started_at + _CLOCK_SLACK:
        return (
            f"pid {pid} started at {_clock(started)}, after the record was written at "
            f"{_clock(owner.started_at)}, so it is another process that reuses the pid"
        )
    command = process_command(pid)
    if command is not None and not _runs_shiyi(command):
        return f"pid {pid} runs `{command[:80]}`, not shiyi"
    if time.time() - owner.started_at > START_GRACE_SECONDS and not _answers(owner.address):
        return f"pid {pid} does not answer at {owner.address}/healthz"
    return None


def _clock(ts: float) -> str:
    return datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M:%S")


def _runs_shiyi(command: str) -> bool:
    # The console script, `python -m shiyi`, or a Python program embedding the service.
    lowered = command.lower()
    return "shiyi" in lowered or "python" in lowered


def _answers(address: str) -> bool:
    import httpx

    try:
        reply = httpx.get(f"{address.rstrip('/')}/healthz", timeout=PROBE_SECONDS)
    except httpx.ConnectError:
        return False  # nothing listens there
    except httpx.TimeoutException as exc:
        # Connected but slow: a busy owner is still the owner.
        return not isinstance(exc, httpx.ConnectTimeout)
    except (httpx.HTTPError, ValueError):
        return False
    return reply.status_code == 200
