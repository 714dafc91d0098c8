"""The repo map's data: tags of one file, files seen, and the finished map."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import NamedTuple


class Definition(NamedTuple):
    """A named definition in a file, with the header line a reader needs to use it.

    A NamedTuple rather than a dataclass: a warm map of the standard library loads ~80k
    of them from the cache, and tuples are built and hashed several times faster.
    """

    name: str
    kind: str
    """What the tags query called it: class, function, method, interface, type, ..."""
    line: int
    """1-based line of the definition's first line."""
    end_line: int
    indent: int
    """Columns of leading whitespace on the first line (nesting, e.g. a method)."""
    signature: str
    """The header from the start of its line to its body, whitespace collapsed."""


@dataclass(frozen=True, slots=True)
class RankedDefinition:
    """A definition with its file and the score the ranking gave it."""

    score: float
    rel: str
    definition: Definition


@dataclass(frozen=True, slots=True)
class FileTags:
    """What one file defines and which identifiers it refers to (with counts)."""

    definitions: tuple[Definition, ...] = ()
    references: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class SourceFile:
    """A file the map may include: its path relative to the root and its stat identity."""

    rel: str
    """POSIX path relative to the map's root."""
    path: str
    """Absolute path (a str: building thousands of ``Path`` objects costs a warm build)."""
    language: str
    mtime_ns: int
    size: int


@dataclass(frozen=True, slots=True)
class SkippedFile:
    """A source file left out of the map, and why (binary, too large, unreadable...)."""

    rel: str
    reason: str


@dataclass(frozen=True, slots=True)
class RepoMapStats:
    """Counts that show what a build did; tests and the benchmark read them."""

    files: int
    """Source files in a language we parse (after .gitignore)."""
    parsed: int
    """Files parsed by tree-sitter in this build (tag cache misses)."""
    cache_hits: int
    """Files whose tags came from the SQLite cache unchanged (same mtime and size)."""
    unsupported: int
    """Files skipped because no grammar handles their extension."""
    definitions: int
    skipped: tuple[SkippedFile, ...] = ()
    map_cache_hit: bool = False
    """The whole map came from the result cache (same files, focus, mentions, budget)."""
    seconds: float = 0.0


@dataclass(frozen=True, slots=True)
class RepoMapResult:
    """The map text and how it was made."""

    text: str
    tokens: int
    max_tokens: int
    files_shown: tuple[str, ...]
    """Files in the map, most important first."""
    stats: RepoMapStats
    unmatched_focus: tuple[str, ...] = ()
    """Focus files that exist but hold no parsable source (e.g. a README): not ranked."""
