"""The repo map: a ranked outline of a repository's code that fits a token budget.

Aider's design: tree-sitter tags (definitions and references) per file -> a graph of which
file uses what another defines -> personalised PageRank toward the files in focus and the
identifiers the conversation mentions -> as many of the best definitions as fit the budget.
Tags are cached in SQLite by file mtime and size.
"""

from __future__ import annotations

from shiyi.errors import RepoMapError
from shiyi.repomap.languages import EXTENSIONS, LANGUAGES, language_for
from shiyi.repomap.model import Definition, FileTags, RepoMapResult, RepoMapStats, SkippedFile
from shiyi.repomap.repo_map import DEFAULT_MAX_TOKENS, RepoMap

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "EXTENSIONS",
    "LANGUAGES",
    "Definition",
    "FileTags",
    "RepoMap",
    "RepoMapError",
    "RepoMapResult",
    "RepoMapStats",
    "SkippedFile",
    "language_for",
]
