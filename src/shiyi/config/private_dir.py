"""The data dir is made readable by its owner only.

It holds every conversation (``sessions.sqlite3``, ``runs/*.md``) and memory (``memory/``).
Made with the default mode (0755 under the usual umask 022), with its files 0644, any other
account on the machine could read them wherever the home folder can be entered.  A folder
this creates is 0700, as ssh and gpg keep theirs; the files inside then need no mode of
their own.  A data dir that already exists keeps its mode: changing a folder the user made
would be a surprise.
"""

from __future__ import annotations

from pathlib import Path

PRIVATE = 0o700


def ensure_private_dir(path: Path) -> None:
    """Create ``path`` and each missing folder above it with mode 0700 (no-op if present)."""
    missing: list[Path] = []
    folder = path
    while not folder.exists() and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    for made in reversed(missing):
        made.mkdir(mode=PRIVATE, exist_ok=True)
