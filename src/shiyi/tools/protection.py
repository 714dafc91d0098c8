"""What the agent's tools may never read or change: its own configuration and data.

A model confined to the workspace could otherwise lift its own sandbox: ``shiyi.yaml`` is
read from the working directory, which is usually the workspace, so writing
``tools: {allow_outside_workspace: true}`` there takes effect at the next start, and reading
it shows ``server.token``.  Every path a tool touches is checked here after full resolution
(symlinks followed), so a link, a ``..`` or an absolute path to a protected file is refused
like the file itself, and so is a hard link to it (same device and inode).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from shiyi.config.loader import CONFIG_FILE_NAME, user_config_dir
from shiyi.tools.code_paths import code_reason, module_dirs

ADVICE = "the agent may not read or change its own configuration, secrets or data directory"
_ENV_TEMPLATES = (".example", ".sample", ".template", ".dist")


def protected_name(name: str) -> str | None:
    """Why a file called ``name`` is protected wherever it is, or None.

    Any ``shiyi.yaml``, existing or not: one created in the working directory is the config
    the next start loads.  ``.env`` files hold keys (``.env.example`` and the like do not).
    In any case: on macOS and Windows ``Shiyi.YAML`` and ``.ENV`` are those same files.
    """
    name = name.casefold()
    if name == CONFIG_FILE_NAME:
        return f"a file named {CONFIG_FILE_NAME} is shiyi's configuration"
    if name == ".env" or (name.startswith(".env.") and not name.endswith(_ENV_TEMPLATES)):
        return "a .env file holds secrets"
    return None


@dataclass(frozen=True, slots=True)
class Protection:
    """Protected files and directories (resolved), plus every file :func:`protected_name`
    names.  Build it with :func:`protection`."""

    files: tuple[Path, ...] = ()
    dirs: tuple[Path, ...] = ()
    reasons: Mapping[Path, str] = field(default_factory=dict)
    code_dirs: frozenset[Path] | None = None
    """Where Python imports top-level modules first; None when code locations may be
    changed (``tools.allow_code_paths``).  See :mod:`shiyi.tools.code_paths`."""

    def reason(self, resolved: Path) -> str | None:
        """Why the resolved path ``resolved`` is protected, or None when a tool may use it."""
        why = protected_name(resolved.name)
        if why:
            return why
        for path in (*self.files, *self.dirs):
            if resolved == path or (path in self.dirs and resolved.is_relative_to(path)):
                return self.reasons.get(path, "it is protected")
        return self._hard_link_reason(resolved)

    def code_reason(self, path: Path) -> str | None:
        """Why changing ``path`` (absolute) could plant code that runs later, or None when
        it may be changed (reading it is always allowed)."""
        if self.code_dirs is None:
            return None
        return code_reason(path, self.code_dirs)

    def _hard_link_reason(self, resolved: Path) -> str | None:
        # A hard link made by bash has its own name and place but is the config file itself.
        try:
            target = resolved.stat()
        except OSError:
            return None
        if target.st_nlink < 2:  # the common case: one name, so no link to anything
            return None
        for path in self.files:
            try:
                if os.path.samestat(target, path.stat()):
                    return f"it is a hard link to {path}"
            except OSError:
                continue
        return None

    def hidden_dirs(self, root: Path) -> list[Path]:
        """The protected directories that exist and do not hold ``root`` (a sandbox hides
        them; hiding one holding the workspace would hide the workspace too)."""
        return [d for d in self.dirs if d.is_dir() and not root.is_relative_to(d)]

    def hidden_files(self, root: Path) -> list[Path]:
        """The protected files that exist: the listed ones and those in ``root`` itself."""
        found = [f for f in self.files if f.is_file()]
        with contextlib.suppress(OSError):  # an unreadable root hides nothing more
            found += [e for e in root.iterdir() if protected_name(e.name) and e.is_file()]
        return sorted(set(found))


def protection(
    *,
    data_dir: Path | None = None,
    extra: Iterable[Path] = (),
    env: Mapping[str, str] | None = None,
    guard_code: bool = True,
) -> Protection:
    """The protection of one agent: the user config dir, ``SHIYI_CONFIG``'s file, the data
    dir (server.json, stores, tokens) and ``extra`` (the loaded config file, the user's
    ``tools.protected_paths``); with ``guard_code``, also the code locations (see
    :mod:`shiyi.tools.code_paths`)."""
    env = os.environ if env is None else env
    entries: list[tuple[Path, str]] = [(user_config_dir(), "it is shiyi's config directory")]
    explicit = env.get("SHIYI_CONFIG")
    if explicit:
        entries.append((Path(explicit), "it is the configuration SHIYI_CONFIG names"))
    if data_dir is not None:
        entries.append((data_dir, "it is shiyi's data directory (stores, server token)"))
    listed = "it is the loaded config file or in tools.protected_paths"
    entries += [(path, listed) for path in extra]
    files: list[Path] = []
    dirs: list[Path] = []
    reasons: dict[Path, str] = {}
    for raw, why in entries:
        path = raw.expanduser().resolve()
        reasons.setdefault(path, why)
        (files if path.is_file() else dirs).append(path)
    code_dirs = module_dirs() if guard_code else None
    return Protection(tuple(files), tuple(dirs), reasons, code_dirs)
