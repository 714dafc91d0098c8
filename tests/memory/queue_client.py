"""A job-queue client in its own OS process, driven line by line over stdin (for tests).

    python -m tests.memory.queue_client sqlite PATH
    python -m tests.memory.queue_client postgres URL LEASE

Commands, one per line; each answers one JSON line on stdout:

    claim KIND LIMIT   -> [[id, attempts], ...]
    complete ID...     -> how many were completed
    pid                -> this process's id
    crash              -> exits at once without closing anything (no answer)
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from shiyi.memory.jobs import JobQueue
from shiyi.memory.kuzu.jobs import SqliteJobQueue

ROOT = Path(__file__).resolve().parents[2]


def open_queue(argv: list[str]) -> JobQueue:
    if argv[0] == "sqlite":
        return SqliteJobQueue(Path(argv[1]))
    from shiyi.memory.postgres.jobs import PostgresJobQueue

    return PostgresJobQueue(argv[1], lease=float(argv[2]))


def answer(value: object) -> None:
    sys.stdout.write(json.dumps(value) + "\n")
    sys.stdout.flush()


def main(argv: list[str]) -> None:
    queue = open_queue(argv)
    answer("ready")
    for line in sys.stdin:
        command, *args = line.split()
        if command == "claim":
            jobs = queue.claim([args[0]], limit=int(args[1]))
            answer([[job.id, job.attempts] for job in jobs])
        elif command == "complete":
            answer(queue.complete([int(a) for a in args]))
        elif command == "pid":
            answer(os.getpid())
        elif command == "crash":
            os._exit(0)  # no close(): the claimed jobs stay claimed, as after kill -9
    queue.close()


class QueueProcess:
    """The test side: starts a client process and talks to it."""

    def __init__(self, *argv: str, timeout: float = 20.0) -> None:
        self.timeout = timeout
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.memory.queue_client", *argv],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )
        assert self._read() == "ready"

    def _read(self) -> Any:
        assert self.process.stdout is not None
        ready, _, _ = select.select([self.process.stdout], [], [], self.timeout)
        assert ready, f"the queue client did not answer within {self.timeout} s"
        line = self.process.stdout.readline()
        assert line, f"the queue client exited ({self.process.poll()})"
        return json.loads(line)

    def send(self, command: str) -> Any:
        assert self.process.stdin is not None
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()
        if command == "crash":
            self.process.wait(self.timeout)
            return None
        return self._read()

    def signal(self, number: signal.Signals) -> None:
        self.process.send_signal(number)

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(self.timeout)


if __name__ == "__main__":
    main(sys.argv[1:])
