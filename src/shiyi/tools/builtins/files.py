"""File tools: read, write, edit and list files inside the workspace."""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterator
from pathlib import Path

from shiyi.errors import ToolError
from shiyi.textfiles import looks_binary, number_line
from shiyi.tools.base import ToolContext, tool

PREVIEW_LINES = 100
MAX_LINE_CHARS = 2000
LIST_DIR_MAX_ENTRIES = 500
LIST_DIR_MAX_DEPTH = 10
# Round-trips bytes that are not valid UTF-8, so an edit never corrupts the rest of a file.
_ERRORS = "surrogateescape"


# --- shared helpers ---------------------------------------------------------------------


def _existing_file(ctx: ToolContext, path: str, *, hint: str, write: bool = False) -> Path:
    """Resolve ``path`` and insist it is a readable text file."""
    resolved = ctx.workspace.resolve(path, write=write)
    if not resolved.exists():
        raise ToolError(f"file {path!r} does not exist{_similar_names(resolved)}; {hint}")
    if resolved.is_dir():
        raise ToolError(
            f"{path!r} is a directory, not a file; use list_dir(path={path!r}) to see its contents."
        )
    try:
        binary = looks_binary(resolved)
    except OSError as exc:
        raise ToolError(f"cannot read {path!r}: {exc.strerror or exc}.") from None
    if binary:
        size = resolved.stat().st_size
        raise ToolError(
            f"{path!r} looks like a binary file ({size} bytes); the file tools only handle text. "
            f"Inspect it with bash instead (e.g. `file {path}` or `xxd {path} | head`)."
        )
    return resolved


def _similar_names(missing: Path) -> str:
    parent = missing.parent
    if not parent.is_dir():
        return " (its directory does not exist either)"
    try:
        siblings = os.listdir(parent)
    except OSError:
        return ""
    names = difflib.get_close_matches(missing.name, siblings, n=3, cutoff=0.6)
    return f" (similar names there: {', '.join(names)})" if names else ""


# --- read_file ----------------------------------------------------------------------------


@tool(read_only=True)
def read_file(
    path: str, ctx: ToolContext, start_line: int | None = None, end_line: int | None = None
) -> str:
    """Read a text file; every line is prefixed with its line number.

    Large files return a preview unless a line range is given.

    Args:
        path: File to read, relative to the workspace root.
        start_line: First line to return (1-based, inclusive).
        end_line: Last line to return (1-based, inclusive).
    """
    resolved = _existing_file(ctx, path, hint="use list_dir to see which files exist.")
    _check_range(start_line, end_line)
    rel = ctx.workspace.display(resolved)
    limit = ctx.settings.large_file_lines
    first = start_line or 1
    # An explicit range is honoured up to the large-file limit; the footer says how to go on.
    last = min(end_line or first + limit - 1, first + limit - 1)
    lines, total = _read_range(resolved, first, last)
    if total == 0:
        return f"({rel} is empty)"
    if start_line is None and end_line is None and total > limit:
        return _preview(lines, rel, total)
    if first > total:
        raise ToolError(
            f"start_line {first} is past the end of {rel}, which has {total} lines; "
            f"use a start_line between 1 and {total}."
        )
    body = "\n".join(number_line(first + i, text) for i, text in enumerate(lines))
    shown_last = first + len(lines) - 1
    if first == 1 and shown_last == total:
        return body
    footer = f"[lines {first}-{shown_last} of {total} in {rel}"
    if shown_last < total:
        footer += f"; call read_file(path={rel!r}, start_line={shown_last + 1}) for more"
    return f"{body}\n{footer}]"


def _check_range(start_line: int | None, end_line: int | None) -> None:
    if start_line is not None and start_line < 1:
        raise ToolError(f"start_line must be 1 or more (got {start_line}); lines count from 1.")
    if end_line is not None and end_line < 1:
        raise ToolError(f"end_line must be 1 or more (got {end_line}); lines count from 1.")
    if start_line is not None and end_line is not None and end_line < start_line:
        raise ToolError(
            f"end_line ({end_line}) is before start_line ({start_line}); "
            "give a range with start_line <= end_line."
        )


def _iter_lines(path: Path) -> Iterator[str]:
    # Streaming keeps memory flat for huge files. Splitting on "\n" only keeps line numbers in
    # step with edit_file and grep, whatever other line separators the text contains.
    with path.open(encoding="utf-8", errors="replace", newline="\n") as fh:
        for line in fh:
            yield line.rstrip("\r\n")


def _read_range(path: Path, first: int, last: int) -> tuple[list[str], int]:
    """Lines ``first..last`` (clipped to the file) and the file's total line count."""
    selected: list[str] = []
    total = 0
    for total, text in enumerate(_iter_lines(path), start=1):
        if first <= total <= last:
            selected.append(_clip(text))
    return selected, total


def _clip(text: str) -> str:
    if len(text) <= MAX_LINE_CHARS:
        return text
    return f"{text[:MAX_LINE_CHARS]}… [{len(text) - MAX_LINE_CHARS} more characters on this line]"


def _preview(lines: list[str], rel: str, total: int) -> str:
    lines = lines[:PREVIEW_LINES]
    body = "\n".join(number_line(i, text) for i, text in enumerate(lines, start=1))
    return (
        f"{body}\n[file has {total} lines; this is a preview of lines 1-{len(lines)}. "
        f"Call read_file(path={rel!r}, start_line=X, end_line=Y) to read a range, "
        "or use grep to find the part you need.]"
    )


# --- write_file ---------------------------------------------------------------------------


@tool(sequential=True)
def write_file(path: str, content: str, ctx: ToolContext) -> str:
    """Create or overwrite a text file with the given content (parent directories are created).

    Args:
        path: File to write, relative to the workspace root.
        content: The complete new content of the file.
    """
    resolved = ctx.workspace.resolve(path, write=True)
    if resolved.is_dir():
        raise ToolError(f"{path!r} is a directory; give the path of a file inside it.")
    existed = resolved.exists()
    size = _write(resolved, content, path)
    verb = "overwrote" if existed else "created"
    rel = ctx.workspace.display(resolved)
    return f"{verb} {rel}: {_plural(size, 'byte')}, {_plural(_line_count(content), 'line')}."


def _write(resolved: Path, content: str, path: str) -> int:
    data = content.encode("utf-8", errors=_ERRORS)
    try:
        resolved.parent.mkdir(parents=True, exist_ok=True)
        if _hard_linked(resolved):
            _replace(resolved, data)
        else:
            resolved.write_bytes(data)
    except OSError as exc:
        raise ToolError(f"could not write {path!r}: {exc.strerror or exc}.") from None
    return len(data)


def _hard_linked(path: Path) -> bool:
    try:
        return path.stat().st_nlink > 1
    except OSError:
        return False


def _replace(path: Path, data: bytes) -> None:
    """Write ``path`` as a new file in its place: a hard link's other names (which may be
    protected code or config elsewhere) keep their bytes instead of changing with it."""
    temporary = path.with_name(f".{path.name}.shiyi-write")
    temporary.write_bytes(data)
    os.chmod(temporary, path.stat().st_mode & 0o7777)
    os.replace(temporary, path)


def _line_count(text: str) -> int:
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


# --- edit_file ----------------------------------------------------------------------------


@tool(sequential=True)
def edit_file(
    path: str, old_text: str, new_text: str, ctx: ToolContext, replace_all: bool = False
) -> str:
    """Replace exact text in a file. old_text must match the file exactly, indentation included.

    Args:
        path: File to edit, relative to the workspace root.
        old_text: Text to replace; it must occur exactly once unless replace_all is true.
        new_text: Replacement text.
        replace_all: Replace every occurrence instead of requiring exactly one.
    """
    if not old_text:
        raise ToolError(
            "old_text is empty; to create a file use write_file, to insert text include a "
            "neighbouring line in old_text and repeat it in new_text."
        )
    if old_text == new_text:
        raise ToolError("old_text and new_text are identical, so there is nothing to change.")
    resolved = _existing_file(ctx, path, hint="use write_file to create a new file.", write=True)
    rel = ctx.workspace.display(resolved)
    text = resolved.read_bytes().decode("utf-8", errors=_ERRORS)
    old_text, new_text = _match_newlines(text, old_text, new_text)
    positions = _occurrences(text, old_text)
    if not positions:
        raise ToolError(_not_found_message(text, old_text, rel))
    lines = [text.count("\n", 0, pos) + 1 for pos in positions]
    if len(positions) > 1 and not replace_all:
        raise ToolError(
            f"old_text occurs {len(positions)} times in {rel} (lines {_join(lines)}); "
            "add surrounding lines to make it unique or set replace_all."
        )
    _write(resolved, text.replace(old_text, new_text), path)
    if len(positions) == 1:
        return f"edited {rel}: replaced 1 occurrence at line {lines[0]}."
    return f"edited {rel}: replaced {len(positions)} occurrences (lines {_join(lines)})."


def _match_newlines(text: str, old_text: str, new_text: str) -> tuple[str, str]:
    # Models write "\n"; a CRLF file should still be editable and stay CRLF.
    if "\r\n" in text and old_text not in text and "\r\n" not in old_text:
        crlf_old = old_text.replace("\n", "\r\n")
        if crlf_old in text:
            return crlf_old, new_text.replace("\r\n", "\n").replace("\n", "\r\n")
    return old_text, new_text


def _occurrences(text: str, needle: str) -> list[int]:
    positions: list[int] = []
    start = text.find(needle)
    while start != -1:
        positions.append(start)
        start = text.find(needle, start + len(needle))
    return positions


def _join(numbers: list[int], limit: int = 10) -> str:
    shown = ", ".join(str(n) for n in numbers[:limit])
    return shown + (", ..." if len(numbers) > limit else "")


def _not_found_message(text: str, old_text: str, rel: str) -> str:
    file_lines = [line.rstrip("\r") for line in text.split("\n")]
    advice = "Re-read the file with read_file and copy old_text exactly, including indentation."
    stripped = [line.strip() for line in file_lines]
    wanted = [line.strip() for line in old_text.splitlines() if line.strip()]
    # Point at the first line of old_text the file does not contain: that is where it differs.
    missing = next((line for line in wanted if line not in stripped), None)
    target = missing or (wanted[0] if wanted else "")
    close = difflib.get_close_matches(target, stripped, n=3, cutoff=0.6) if target else []
    if not close:
        return f"old_text was not found in {rel} and no similar lines exist. {advice}"
    hits = [i for i, line in enumerate(stripped) if line in close][:5]
    shown = "\n".join(number_line(i + 1, file_lines[i]) for i in hits)
    what = (
        f"the line {missing!r} of old_text is not in the file"
        if missing
        else "every line of old_text exists, but not in this order or with this indentation"
    )
    return f"old_text was not found in {rel}: {what}. Closest line(s):\n{shown}\n{advice}"


# --- list_dir -----------------------------------------------------------------------------


@tool(read_only=True)
def list_dir(ctx: ToolContext, path: str = ".", depth: int = 1) -> str:
    """List a directory: subdirectories end with '/', files show their size.

    Args:
        path: Directory to list, relative to the workspace root.
        depth: How many levels to descend (1 lists only the directory itself).
    """
    if not 1 <= depth <= LIST_DIR_MAX_DEPTH:
        raise ToolError(f"depth must be between 1 and {LIST_DIR_MAX_DEPTH} (got {depth}).")
    resolved = ctx.workspace.resolve(path)
    if not resolved.exists():
        raise ToolError(f"directory {path!r} does not exist{_similar_names(resolved)}.")
    if not resolved.is_dir():
        raise ToolError(f"{path!r} is a file, not a directory; use read_file(path={path!r}).")
    rel = ctx.workspace.display(resolved)
    entries: list[str] = []
    for entry in _walk(resolved, ctx, depth):
        if len(entries) == LIST_DIR_MAX_ENTRIES:
            entries.append(
                f"[stopped after {LIST_DIR_MAX_ENTRIES} entries; "
                "list a subdirectory or use a smaller depth]"
            )
            break
        entries.append(entry)
    if not entries:
        return f"{rel}/ is empty."
    return f"{rel}/\n" + "\n".join(entries)


def _walk(directory: Path, ctx: ToolContext, depth: int) -> Iterator[str]:
    try:
        children = sorted(os.scandir(directory), key=lambda e: (not _is_dir(e), e.name))
    except OSError as exc:
        yield f"{ctx.workspace.display(directory)}/ [cannot list: {exc.strerror or exc}]"
        return
    for child in children:
        if child.name == ".git":
            continue
        if ctx.workspace.is_protected(Path(child.path)):
            # Named, so the model knows why it cannot open it; its size and contents are not.
            yield f"{ctx.workspace.display(Path(child.path))}  (protected)"
            continue
        yield _describe(child, ctx)
        # Symlinked directories are listed but not entered: they may lead anywhere.
        if depth > 1 and _is_dir(child) and not child.is_symlink():
            yield from _walk(Path(child.path), ctx, depth - 1)


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def _describe(entry: os.DirEntry[str], ctx: ToolContext) -> str:
    rel = ctx.workspace.display(Path(entry.path))
    if entry.is_symlink():
        return f"{rel}{'/' if _is_dir(entry) else ''} -> (symlink)"
    if _is_dir(entry):
        return f"{rel}/"
    try:
        return f"{rel}  {_human_size(entry.stat().st_size)}"
    except OSError:
        return rel


def _human_size(size: int) -> str:
    if size < 1024:
        return f"{size} B"
    scaled = float(size)
    for unit in ("KB", "MB", "GB"):
        scaled /= 1024
        if scaled < 1024 or unit == "GB":
            break
    return f"{scaled:.1f} {unit}"
