"""Progress of ``shiyi memory import``: turns done of the total, turns/s and ETA.

On a terminal one line is rewritten in place (``\\r``) as turns get done; otherwise (a log,
a pipe, CI) plain lines come every :data:`PLAIN_EVERY` seconds, so a log neither floods nor
stays silent.  A turn is *done* when its last processing step has run: its vector stored (or,
without an embedder, its entity links), which makes it findable by every recall path.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

PLAIN_EVERY = 2.0


def rate_text(turns: int, seconds: float) -> str:
    return f"{turns / max(seconds, 1e-6):,.0f} turns/s"


def eta_text(seconds: float) -> str:
    if seconds >= 3600:
        return f"{seconds / 3600:.1f} h"
    if seconds >= 60:
        return f"{int(seconds // 60)} min {int(seconds % 60):02d} s"
    return f"{seconds:.0f} s"


class ImportProgress:
    """``processed 1,200 of 5,882 turns · 410 turns/s · ETA 12 s`` on ``stream`` (stderr)."""

    def __init__(self, total: int, stream: TextIO | None = None) -> None:
        self.total = total
        self.stream = stream if stream is not None else sys.stderr
        self.tty = self.stream.isatty()
        self.started = time.monotonic()
        self._last = 0.0
        self._said = -1
        self._open_line = False

    def update(self, done: int, *, force: bool = False) -> None:
        """Say how far the import is: on a terminal at each change (a worker batch is a few
        hundred turns), in plain lines at most every :data:`PLAIN_EVERY` s unless ``force``."""
        now, done = time.monotonic(), min(done, self.total)
        if done == self._said:
            return  # nothing new (a batch of another kind of job, or the closing call)
        if not force and not self.tty and now - self._last < PLAIN_EVERY:
            return
        self._last, self._said = now, done
        self._write(self.line(done, now - self.started))

    def line(self, done: int, elapsed: float) -> str:
        text = f"processed {done:,} of {self.total:,} turns · {rate_text(done, elapsed)}"
        if 0 < done < self.total:
            eta = (self.total - done) * elapsed / done
            text += f" · ETA {eta_text(eta)}"
        return text

    def finish(self) -> None:
        """End the line being rewritten (before other output, or at the end)."""
        self._end_line()

    def _write(self, text: str) -> None:
        if self.tty:
            self.stream.write(f"\r\x1b[K{text}")
            self._open_line = True
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def _end_line(self) -> None:
        if self._open_line:
            self.stream.write("\n")
            self.stream.flush()
            self._open_line = False
