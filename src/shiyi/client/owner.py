"""``<data dir>/server.json``: which live process owns the data dir and where it serves.

Kuzu lets one process open the store read-write.  ``shiyi serve`` and ``shiyi chat`` write
this record (pid, address) while they own it; other ``shiyi`` commands read it and talk to
that process's API instead of opening the database.  A record whose pid is gone (the owner
was killed) is stale: :func:`live_owner` removes it, so the next command opens the store
itself (the kernel has already released the store's ``flock``).
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

log = logging.getLogger(__name__)

OWNER_FILE = "server.json"


@dataclass(slots=True, frozen=True)
class Owner:
    pid: int
    address: str
    started_at: float
    command: str = ""


def owner_path(data_dir: Path) -> Path:
    return data_dir / OWNER_FILE


def write_owner(data_dir: Path, address: str) -> Owner:
    """Record this process as the owner serving ``address`` (atomically replaced)."""
    owner = Owner(os.getpid(), address, time.time(), " ".join(sys.argv) or sys.executable)
    data_dir.mkdir(parents=True, exist_ok=True)
    path = owner_path(data_dir)
    temporary = path.with_name(f".{OWNER_FILE}.{os.getpid()}")
    temporary.write_text(json.dumps(asdict(owner)), encoding="utf-8")
    os.replace(temporary, path)
    return owner


def remove_owner(data_dir: Path) -> None:
    """Remove the record if it is this process's (never another owner's)."""
    owner = read_owner(data_dir)
    if owner is not None and owner.pid == os.getpid():
        owner_path(data_dir).unlink(missing_ok=True)


def read_owner(data_dir: Path) -> Owner | None:
    """The record as written, alive or not; None when there is none or it is unreadable."""
    try:
        data = json.loads(owner_path(data_dir).read_text(encoding="utf-8"))
        return Owner(
            pid=int(data["pid"]),
            address=str(data["address"]),
            started_at=float(data.get("started_at", 0.0)),
            command=str(data.get("command", "")),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


def live_owner(data_dir: Path) -> Owner | None:
    """The owner if its process is alive; a stale record (dead pid) is removed."""
    owner = read_owner(data_dir)
    if owner is None:
        if owner_path(data_dir).exists():
            log.warning("removing an unreadable owner record %s", owner_path(data_dir))
            owner_path(data_dir).unlink(missing_ok=True)
        return None
    if pid_alive(owner.pid):
        return owner
    log.warning("removing a stale owner record: pid %s (%s) is gone", owner.pid, owner.address)
    owner_path(data_dir).unlink(missing_ok=True)
    return None


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
        status = Path(f"/proc/{pid}/status").read_text(encoding="utf-8")
    except OSError:
        return True  # no procfs: trust kill(0)
    state = next((line for line in status.splitlines() if line.startswith("State:")), "")
    return "Z" not in state.split()[1:2]
