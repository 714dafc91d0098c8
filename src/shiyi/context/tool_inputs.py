"""What a tool call looked at, and how to tell that it changed (for :mod:`tool_memory`).

Arguments are normalised so that spelling differences the tool ignores (``./a.txt`` versus
``a.txt``, stray spaces, an explicit default) give the same cache key. The files a call read
are summarised as stamps; a call is answered from the cache only while its stamps still match.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

# (kind, absolute POSIX path, stamp); kind is "file" for one file, "tree" for a walked directory.
Input = tuple[str, str, tuple[int, int, int]]

TREE_WALK_LIMIT = 10_000  # past this many entries a walk costs more than the call it guards
_PATH_KEYS = frozenset({"path", "file", "file_path", "directory", "dir"})
# Whitespace is meaning in these: a regex " foo" is not "foo", and edits must match exactly.
_EXACT_KEYS = frozenset({"pattern", "old_text", "new_text", "content", "command"})
_DEFAULTS: dict[str, dict[str, Any]] = {
    "list_dir": {"path": ".", "depth": 1},
    "grep": {"path": ".", "ignore_case": False},
    "repo_map": {"path": "."},
}
_FILE_TOOLS = frozenset({"read_file"})
_TREE_TOOLS = frozenset({"list_dir", "grep", "repo_map"})
_MISSING = (-1, -1, -1)


def normalise(name: str, arguments: dict[str, Any], root: Path) -> dict[str, Any]:
    """Arguments in canonical form: defaults filled, ``None`` dropped, paths workspace-relative."""
    merged = {**_DEFAULTS.get(name, {}), **arguments}
    normal: dict[str, Any] = {}
    for key, value in merged.items():
        if value is None:
            continue  # an explicit null means "use the default", same as leaving it out
        if key in _PATH_KEYS and isinstance(value, str):
            normal[key] = relative_path(root, value.strip() or ".")
        elif key in _EXACT_KEYS:
            normal[key] = value
        else:
            normal[key] = _trimmed(value)
    return normal


def relative_path(root: Path, raw: str) -> str:
    """Workspace-relative POSIX path (absolute when outside the workspace)."""
    candidate = Path(raw).expanduser()
    absolute = (candidate if candidate.is_absolute() else root / candidate).resolve()
    resolved_root = root.resolve()
    if absolute.is_relative_to(resolved_root):
        return absolute.relative_to(resolved_root).as_posix() or "."
    return absolute.as_posix()


def absolute_path(root: Path, normal: str) -> Path:
    path = Path(normal)
    return path if path.is_absolute() else root.resolve() / path


def watched_inputs(name: str, normal: dict[str, Any], root: Path) -> tuple[Input, ...] | None:
    """Stamps of what the call read; ``()`` for calls not based on files, ``None`` if unwatchable.

    ``normal`` must come from :func:`normalise`.
    """
    path = normal.get("path")
    if name not in _FILE_TOOLS | _TREE_TOOLS or not isinstance(path, str):
        return ()
    target = absolute_path(root, path)
    if name in _FILE_TOOLS:
        return (("file", target.as_posix(), file_stamp(target)),)
    tree = tree_stamp(target)
    return None if tree is None else (("tree", target.as_posix(), tree),)


def touches(inputs: tuple[Input, ...], changed: Path) -> bool:
    """Whether a change to ``changed`` (absolute) may alter a result built from ``inputs``."""
    for kind, raw, _ in inputs:
        watched = Path(raw)
        if watched == changed or (kind == "tree" and changed.is_relative_to(watched)):
            return True
    return False


def file_stamp(path: Path) -> tuple[int, int, int]:
    try:
        info = path.stat()
    except OSError:
        return _MISSING
    return (1, info.st_mtime_ns, info.st_size)


def tree_stamp(root: Path) -> tuple[int, int, int] | None:
    """(entries, newest mtime_ns, total file size) under ``root``, skipping ``.git``.

    Directory mtimes are included, so a deleted or renamed file shows even when sizes balance.
    ``None`` when the walk passes :data:`TREE_WALK_LIMIT`: a partial stamp could miss changes.
    """
    try:
        info = root.stat()
    except OSError:
        return _MISSING
    if not stat.S_ISDIR(info.st_mode):
        return (1, info.st_mtime_ns, info.st_size)
    count, newest, total = 0, info.st_mtime_ns, 0
    pending = [root]
    while pending:
        try:
            entries = list(os.scandir(pending.pop()))
        except OSError:
            continue  # unreadable now and, most likely, unreadable to the tool as well
        for entry in entries:
            if entry.name == ".git":
                continue
            count += 1
            if count > TREE_WALK_LIMIT:
                return None
            try:
                entry_info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            newest = max(newest, entry_info.st_mtime_ns)
            if stat.S_ISDIR(entry_info.st_mode):
                pending.append(Path(entry.path))
            else:
                total += entry_info.st_size
    return (count, newest, total)


def _trimmed(value: Any) -> Any:
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, list):
        return [_trimmed(item) for item in value]
    if isinstance(value, dict):
        return {key: _trimmed(item) for key, item in value.items()}
    return value
