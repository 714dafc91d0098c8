"""The grep tool: a regex search over workspace files that honours .gitignore."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from pathspec import GitIgnoreSpec

from shiyi.errors import ToolError
from shiyi.gitignore import rules_down_to, walk_files
from shiyi.textfiles import looks_binary
from shiyi.tools.base import ToolContext, tool

MAX_SHOWN_LINE_CHARS = 300


@tool(read_only=True)
def grep(
    pattern: str,
    ctx: ToolContext,
    path: str = ".",
    glob: str | None = None,
    ignore_case: bool = False,
    max_matches: int | None = None,
) -> str:
    """Search file contents with a Python regular expression; prints path:line: text.

    Files ignored by .gitignore, the .git directory and binary files are skipped.

    Args:
        pattern: Python `re` regular expression to search for.
        path: File or directory to search, relative to the workspace root.
        glob: Only search files matching this glob (e.g. "*.py" or "src/**/*.ts").
        ignore_case: Match without regard to letter case.
        max_matches: Stop showing matches after this many (at most the configured limit).
    """
    regex = _compile(pattern, ignore_case)
    limit = _limit(max_matches, ctx.settings.grep_max_matches)
    start = ctx.workspace.resolve(path)
    if not start.exists():
        raise ToolError(f"path {path!r} does not exist; use list_dir to see what is there.")
    only = _glob_spec(glob)
    shown: list[str] = []
    total = 0
    files = 0
    for file in _candidate_files(ctx.workspace.root, start, only):
        if ctx.workspace.is_protected(file):
            continue  # a walk must not show what read_file refuses (server.token, keys)
        files += 1
        for number, text in _matching_lines(file, regex):
            total += 1
            if len(shown) < limit:
                rel = ctx.workspace.display(file)
                shown.append(f"{rel}:{number}: {_shorten(text, regex)}")
    if not shown:
        where = ctx.workspace.display(start)
        noun = "file" if files == 1 else "files"
        return f"no matches for {pattern!r} in {where} ({files} {noun} searched)."
    if total > len(shown):
        shown.append(
            f"[{total - len(shown)} more matches not shown; "
            "narrow the pattern, path or glob to see them]"
        )
    return "\n".join(shown)


def _compile(pattern: str, ignore_case: bool) -> re.Pattern[str]:
    try:
        return re.compile(pattern, re.IGNORECASE if ignore_case else 0)
    except re.error as exc:
        raise ToolError(
            f"invalid regular expression {pattern!r}: {exc}. Patterns use Python `re` syntax; "
            "escape special characters such as ( [ . * + ? with a backslash."
        ) from None


def _limit(requested: int | None, configured: int) -> int:
    if requested is None:
        return configured
    if requested < 1:
        raise ToolError(f"max_matches must be 1 or more (got {requested}).")
    return min(requested, configured)


def _glob_spec(glob: str | None) -> GitIgnoreSpec | None:
    if not glob:
        return None
    try:
        # A glob is a one-line gitignore: "*.py" matches at any depth, ** works too.
        return GitIgnoreSpec.from_lines([glob])
    except ValueError as exc:
        raise ToolError(f"invalid glob {glob!r}: {exc}.") from None


def _candidate_files(root: Path, start: Path, only: GitIgnoreSpec | None) -> Iterator[Path]:
    """Text files under ``start`` that git would track, in a stable order."""
    if start.is_file():
        # A file named explicitly is searched even if it is ignored or fails the glob.
        if _is_text(start):
            yield start
        return
    rel_start = "" if start == root else start.relative_to(root).as_posix()
    skip = len(rel_start) + 1 if rel_start else 0
    for rel, entry in walk_files(root, rel_start, rules=rules_down_to(root, rel_start)):
        if only is not None and not only.match_file(rel[skip:]):
            continue
        file = Path(entry.path)
        if _is_text(file):
            yield file


def _is_text(file: Path) -> bool:
    try:
        return not looks_binary(file)
    except OSError:
        return False


def _matching_lines(file: Path, regex: re.Pattern[str]) -> Iterator[tuple[int, str]]:
    try:
        with file.open(encoding="utf-8", errors="replace", newline="\n") as fh:
            for number, line in enumerate(fh, start=1):
                text = line.rstrip("\r\n")
                if regex.search(text):
                    yield number, text
    except OSError:
        return


def _shorten(text: str, regex: re.Pattern[str]) -> str:
    """Keep long (e.g. minified) lines readable by showing a window around the match."""
    if len(text) <= MAX_SHOWN_LINE_CHARS:
        return text
    match = regex.search(text)
    begin = max((match.start() if match else 0) - MAX_SHOWN_LINE_CHARS // 3, 0)
    window = text[begin : begin + MAX_SHOWN_LINE_CHARS]
    return ("…" if begin else "") + window + ("…" if begin + len(window) < len(text) else "")
