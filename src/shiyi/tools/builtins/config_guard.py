"""Undo what a bash command did to the agent's configuration.

The parsed checks stop the plain ways (``> shiyi.yaml``, ``mv x shiyi.yaml``) and the sandbox
makes the existing files read-only, but a shell can still spell a name the checks cannot
see, and outside the sandbox nothing stops it.  So the config files are read before each
command and put back after it: a changed one gets its old bytes, a new ``shiyi.yaml`` in the
workspace (the next start would load it) is removed.
"""

from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass
from pathlib import Path

from shiyi.config.loader import CONFIG_FILE_NAME, user_config_dir
from shiyi.tools.workspace import Workspace

log = logging.getLogger(__name__)
_MAX_BYTES = 1_000_000  # a config file is small; something larger is not ours to keep


@dataclass(frozen=True, slots=True)
class ConfigSnapshot:
    contents: dict[Path, bytes | None]
    """Each guarded file's bytes before the command, None when it did not exist."""


def take_snapshot(workspace: Workspace) -> ConfigSnapshot:
    """The guarded files as they are now: every place a next start reads a config or persona
    from (the workspace, the working directory, the user config dir) and the protected
    YAML files (the loaded config, SHIYI_CONFIG's)."""
    config_dir = user_config_dir()
    paths = {
        workspace.root / CONFIG_FILE_NAME,
        Path.cwd() / CONFIG_FILE_NAME,
        config_dir / CONFIG_FILE_NAME,
        config_dir / "persona.md",
    }
    paths.update(f for f in workspace.protected.files if f.suffix in (".yaml", ".yml"))
    with contextlib.suppress(OSError):
        paths.update(entry for entry in config_dir.iterdir() if entry.is_file())
    contents = {path: _read(path) for path in paths}
    # A link (the user's dotfiles) or a huge file cannot be put back byte for byte: the
    # sandbox and the checks are all that guard them.
    return ConfigSnapshot({p: c for p, c in contents.items() if c not in (_TOO_BIG, _LINK)})


def restore(snapshot: ConfigSnapshot) -> list[Path]:
    """Put every guarded file back as it was; the files that had changed."""
    changed = [path for path, before in snapshot.contents.items() if _read(path) != before]
    for path in changed:
        before = snapshot.contents[path]
        log.warning("a bash command changed %s, which the agent may not change: restored", path)
        with contextlib.suppress(FileNotFoundError):
            path.unlink()  # also drops a symlink put in its place
        if before is not None:
            path.write_bytes(before)
    return changed


_TOO_BIG = b"\0too big"
_LINK = b"\0symlink"


def _read(path: Path) -> bytes | None:
    if path.is_symlink():
        return _LINK  # never equal to a file's bytes: a link in its place is a change
    try:
        if path.stat().st_size > _MAX_BYTES:
            return _TOO_BIG
        return path.read_bytes()
    except OSError:
        return None
