"""What confines plain bash (no bubblewrap): shiyi's own process closed to inspection, and
the command run under :mod:`.supervise`.

Without a sandbox a command shares shiyi's process view: ``tr '\\0' '\\n' <
/proc/$PPID/environ`` printed the keys in shiyi's environment (AWS_SECRET_ACCESS_KEY,
DATABASE_URL, SHIYI_SERVER__TOKEN) that the command's own environment leaves out.  So before
the first command shiyi makes itself non-dumpable: its ``/proc/<pid>/environ``, ``mem``,
``fd`` and ptrace then need CAP_SYS_PTRACE, which a command of the same user lacks, and which
the supervisor takes from a command run as root.
"""

from __future__ import annotations

import ctypes
import functools
import logging
import sys
from pathlib import Path

from shiyi.tools.builtins import supervise

log = logging.getLogger(__name__)
_PR_SET_DUMPABLE = 4


def supervised(program: list[str]) -> list[str]:
    """``program`` run by the supervisor (Linux; elsewhere as it is), shiyi closed first."""
    if not sys.platform.startswith("linux"):
        return program
    close_to_inspection()
    return [sys.executable, "-I", "-S", str(Path(supervise.__file__)), *program]


@functools.cache
def close_to_inspection() -> bool:
    """Make this process non-dumpable (once); False when the kernel refused."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        log.warning(
            "could not make shiyi non-dumpable (errno %d): bash commands may read its "
            "environment from /proc",
            ctypes.get_errno(),
        )
        return False
    return True
