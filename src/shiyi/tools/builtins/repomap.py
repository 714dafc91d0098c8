"""The repo_map tool: a ranked outline of the workspace's code within a token budget."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from shiyi.errors import ToolError
from shiyi.llm.tokens import TokenCounter
from shiyi.tools.base import ToolContext, tool

if TYPE_CHECKING:
    from shiyi.repomap import RepoMapResult

MIN_TOKENS = 64
MAX_TOKENS = 8192
_counter = TokenCounter()  # one per process: the cl100k vocabulary loads once


@tool(read_only=True, timeout=300.0)
def repo_map(
    ctx: ToolContext,
    path: str = ".",
    focus_files: list[str] | None = None,
    mentioned: list[str] | None = None,
    max_tokens: int | None = None,
) -> str:
    """Outline the code: files ranked by importance, each with its key class and function
    signatures and line numbers. Use it to find where things are before reading files.

    Python, JavaScript, TypeScript, Go, Rust and Java are parsed; files ignored by
    .gitignore are left out. The first map of a large tree parses every file (seconds);
    later maps reuse cached tags.

    Args:
        path: Directory to map, relative to the workspace root.
        focus_files: Files you are working on (relative to `path`); the map favours what
            they use and what uses them.
        mentioned: Identifiers (function, class or file names) to favour, besides those the
            user's messages in this run already name.
        max_tokens: Size of the map in tokens (default from the configuration).
    """
    # Imported here: tree-sitter and numpy need not load for agents that never map.
    from shiyi.repomap import RepoMap, RepoMapError

    budget = _budget(max_tokens, ctx.settings.repo_map.max_tokens)
    root = ctx.workspace.resolve(path)
    if not root.is_dir():
        what = "does not exist" if not root.exists() else "is a file, not a directory"
        raise ToolError(f"path {path!r} {what}; give a directory to map (default '.').")
    focus = [_inside(ctx, root, item) for item in focus_files or []]
    try:
        with RepoMap(
            root, count_tokens=_counter.count, cache_path=ctx.settings.repo_map.cache
        ) as mapper:
            result = mapper.build(
                focus_files=focus,
                mentioned=[*(mentioned or []), *identifiers_in(ctx.conversation)],
                max_tokens=budget,
            )
    except RepoMapError as exc:
        raise ToolError(str(exc)) from None
    return _present(result, ctx.workspace.display(root))


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")
_MAX_MENTIONS = 200


def identifiers_in(texts: Sequence[str]) -> list[str]:
    """Identifier-like words of the conversation, newest first: the map favours files that
    define them or are named like them ("fix the UserStore in config" -> config.*)."""
    found: dict[str, None] = {}
    for text in reversed(texts):
        found.update(dict.fromkeys(_IDENTIFIER.findall(text)))
    return list(found)[:_MAX_MENTIONS]


def _budget(requested: int | None, configured: int) -> int:
    budget = configured if requested is None else requested
    if not MIN_TOKENS <= budget <= MAX_TOKENS:
        raise ToolError(f"max_tokens must be between {MIN_TOKENS} and {MAX_TOKENS} (got {budget}).")
    return budget


def _inside(ctx: ToolContext, root: Path, item: str) -> str:
    """A focus file checked against the workspace sandbox, relative to the mapped root."""
    resolved = ctx.workspace.resolve(root / item)  # raises WorkspaceViolation when outside
    if not resolved.is_relative_to(root):
        raise ToolError(f"focus file {item!r} is not inside the mapped directory {root}.")
    return resolved.relative_to(root).as_posix()


def _present(result: RepoMapResult, where: str) -> str:
    stats = result.stats
    header = (
        f"Repo map of {where}: {len(result.files_shown)} of {stats.files} source files, "
        f"{result.tokens}/{result.max_tokens} tokens."
    )
    lines = [header]
    if result.unmatched_focus:
        lines.append(
            "Not ranked (no parsable code, or ignored): " + ", ".join(result.unmatched_focus)
        )
    if stats.skipped:
        lines.append(f"Skipped {len(stats.skipped)} file(s): " + "; ".join(
            f"{s.rel} ({s.reason})" for s in stats.skipped[:5]
        ))  # fmt: skip
    if not result.text:
        lines.append(
            "No definitions found (or none fit the budget): the directory may hold no "
            "Python, JavaScript, TypeScript, Go, Rust or Java code."
        )
    return "\n".join(lines) + "\n" + result.text
