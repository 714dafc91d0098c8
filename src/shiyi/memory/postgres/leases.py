"""Who holds which job: lease tokens, the heartbeat that renews them, and telling a dead
worker on this machine from a live one."""

from __future__ import annotations

import logging
import os
import socket
import threading
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path

log = logging.getLogger(__name__)


def default_worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def machine_identity() -> str:
    """Whose process ids this process can check: the same kernel boot and pid namespace
    (a container has its own).  Empty when unknown (not Linux): no pid is checked then."""
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text(encoding="ascii").strip()
        namespace = os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        return ""
    return f"{boot}/pidns:{namespace}"


def dead_pids(pids: Sequence[int]) -> list[int]:
    """The pids with no process behind them (a reused pid counts as alive: the lease then
    decides, which is merely slower)."""
    dead = []
    for pid in pids:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            dead.append(pid)
        except PermissionError:  # another user's live process
            continue
    return dead


class Leases:
    """Job id -> lease token of the jobs this queue holds; shared with the heartbeat."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tokens: dict[int, uuid.UUID] = {}

    def add(self, ids: Sequence[int], token: uuid.UUID) -> None:
        with self._lock:
            self._tokens.update(dict.fromkeys(ids, token))

    def pop(self, ids: Sequence[int]) -> list[tuple[int, uuid.UUID]]:
        with self._lock:
            found = [(i, self._tokens.pop(i)) for i in ids if i in self._tokens]
        return found

    def snapshot(self) -> list[tuple[int, uuid.UUID]]:
        with self._lock:
            return list(self._tokens.items())

    def forget(self, pairs: Sequence[tuple[int, uuid.UUID]]) -> list[int]:
        """Drop leases that were lost; returns their ids.  A pair no longer held (finished
        meanwhile) or held under a newer claim is left alone."""
        dropped = []
        with self._lock:
            for job_id, token in pairs:
                if self._tokens.get(job_id) == token:
                    del self._tokens[job_id]
                    dropped.append(job_id)
        return dropped


class Heartbeat:
    """A daemon thread calling ``beat`` every ``interval`` seconds until stopped."""

    def __init__(self, beat: Callable[[], object], interval: float) -> None:
        self._beat = beat
        self._interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="shiyi-job-leases", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            try:
                self._beat()
            except Exception as exc:  # the database may be back at the next beat
                log.warning("could not renew job leases: %s", exc)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(self._interval + 5)
