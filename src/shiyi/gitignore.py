"""Walking a folder the way git sees it: .gitignore files honoured, symlinks not followed.

Shared by the grep tool and the repo map.  Rules are kept per .gitignore with the folder
they sit in; like git, the deepest file with a matching rule has the last word, and a ``!``
rule re-includes.  Paths are POSIX strings relative to the walk's root.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from pathspec import GitIgnoreSpec


@dataclass(frozen=True, slots=True)
class _Rules:
    """One ignore file's rules; patterns are relative to ``base``."""

    base: str
    """POSIX path of the folder holding the rules, relative to the root ('' = root)."""
    spec: GitIgnoreSpec

    def decide(self, rel: str, is_dir: bool) -> bool | None:
        """True = ignored, False = re-included by ``!``, None = no rule matched."""
        local = rel[len(self.base) + 1 :] if self.base else rel
        return self.spec.check_file(local + ("/" if is_dir else "")).include


@dataclass(frozen=True, slots=True)
class IgnoreRules:
    """The rules in effect in one folder, outermost first."""

    rules: tuple[_Rules, ...] = ()

    @classmethod
    def of_patterns(cls, patterns: Sequence[str]) -> IgnoreRules:
        """Root-level rules from gitignore-style lines; ValueError names a bad pattern."""
        return cls((_Rules("", GitIgnoreSpec.from_lines(list(patterns))),) if patterns else ())

    def ignored(self, rel: str, is_dir: bool) -> bool:
        for item in reversed(self.rules):
            decision = item.decide(rel, is_dir)
            if decision is not None:
                return decision
        return False

    def entering(self, directory: Path, rel_dir: str) -> IgnoreRules:
        """These rules plus those of ``directory``'s own .gitignore, if it has a usable one."""
        try:
            text = (directory / ".gitignore").read_text(encoding="utf-8", errors="replace")
            spec = GitIgnoreSpec.from_lines(text.splitlines())
        except (OSError, ValueError):
            return self  # unreadable or malformed: walk as if it were not there
        return IgnoreRules((*self.rules, _Rules(rel_dir, spec)))


def rules_down_to(root: Path, rel_dir: str, base: IgnoreRules | None = None) -> IgnoreRules:
    """The rules of the .gitignore files from ``root`` down to ``rel_dir``'s parent.

    A folder that these rules ignore gets none: walking inside an ignored folder on purpose
    (say ``node_modules/``) must still find its files.
    """
    rules = base or IgnoreRules()
    if not rel_dir:
        return rules
    parts = rel_dir.split("/")
    for depth in range(len(parts)):
        prefix = "/".join(parts[:depth])
        rules = rules.entering(root / prefix if prefix else root, prefix)
    return IgnoreRules() if rules.ignored(rel_dir, is_dir=True) else rules


def walk_files(
    root: Path,
    rel_dir: str = "",
    *,
    rules: IgnoreRules | None = None,
    prune: Callable[[str], bool] = lambda name: name == ".git",
) -> Iterator[tuple[str, os.DirEntry[str]]]:
    """(path relative to ``root``, entry) of every file below ``root/rel_dir`` that git
    would see, in name order per folder.  ``prune`` names folders never entered."""
    directory = root / rel_dir if rel_dir else root
    rules = (rules or IgnoreRules()).entering(directory, rel_dir)
    try:
        entries = sorted(os.scandir(directory), key=lambda e: e.name)
    except OSError:
        return  # an unreadable folder: walk the rest
    for entry in entries:
        # Symlinks are not followed: they may lead out of the workspace or loop forever.
        if entry.is_symlink():
            continue
        rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
        is_dir = entry.is_dir()
        if is_dir and prune(entry.name):
            continue
        if rules.ignored(rel, is_dir):
            continue
        if is_dir:
            yield from walk_files(root, rel, rules=rules, prune=prune)
        elif entry.is_file():
            yield rel, entry
