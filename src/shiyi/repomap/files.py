"""The source files of a repository: the files git would see, in a language we parse."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from shiyi.errors import RepoMapError
from shiyi.gitignore import IgnoreRules, walk_files
from shiyi.repomap.languages import EXTENSIONS
from shiyi.repomap.model import SourceFile

# Directories no repo map wants even without a .gitignore saying so: installed packages and
# caches. Hidden directories (.git, .venv, .tox, .mypy_cache...) are skipped by their dot.
SKIPPED_DIRS = frozenset({"node_modules", "__pycache__", "site-packages"})


@dataclass(slots=True)
class Walk:
    """Everything a walk found: source files, and how many files had no grammar."""

    files: list[SourceFile] = field(default_factory=list)
    unsupported: int = 0


def walk_sources(root: Path, exclude: Sequence[str] = ()) -> Walk:
    """Files under ``root`` in a language we parse, sorted by path, minus ignored ones.

    ``exclude`` holds extra gitignore-style patterns relative to the root.
    """
    if not root.is_dir():
        raise RepoMapError(f"{root} is not a directory; give the repository's folder.")
    try:
        rules = IgnoreRules.of_patterns(exclude)
    except ValueError as exc:
        raise RepoMapError(f"invalid exclude patterns {list(exclude)!r}: {exc}.") from None
    walk = Walk()
    for rel, entry in walk_files(root, rules=rules, prune=_pruned):
        language = EXTENSIONS.get(os.path.splitext(entry.name)[1].lower())
        if language is None:
            walk.unsupported += 1
            continue
        try:
            stat = entry.stat()
        except OSError:
            continue  # vanished between listing and stat
        walk.files.append(SourceFile(rel, entry.path, language, stat.st_mtime_ns, stat.st_size))
    walk.files.sort(key=lambda f: f.rel)
    return walk


def _pruned(name: str) -> bool:
    return name.startswith(".") or name in SKIPPED_DIRS
