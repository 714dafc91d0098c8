"""Focused files: every file the agent reads or changes appears once, in full (seed 004 §3.2.1).

The system prompt carries one block with the current text of each focused file; the history
keeps a one-line reference in place of each full ``read_file`` result. Text is re-read from
disk rather than copied from the tool output, because the output may have been capped by the
registry and because after ``write_file``/``edit_file`` only the disk knows the new text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from shiyi.context.tool_inputs import absolute_path, relative_path
from shiyi.textfiles import looks_binary, number_line

_READ = "read_file"
_WRITERS = frozenset({"write_file", "edit_file"})
# read_file's large-file preview footer; a preview is not the whole file, so it stays in history.
_PREVIEW = re.compile(r"\n\[file has \d+ lines; this is a preview of lines 1-\d+\.")
_BACKTICKS = re.compile(r"`{3,}")

Stamp = tuple[int, int]  # (mtime_ns, size): cheap evidence that a file changed on disk


@dataclass(slots=True)
class _Focused:
    text: str  # numbered like read_file, so line numbers the model cites stay valid
    lines: int
    edited: bool
    stamp: Stamp


class FocusedFiles:
    """The working set of files, capped at ``max_chars`` of numbered text."""

    def __init__(self, max_chars: int) -> None:
        self.max_chars = max_chars
        self._files: dict[str, _Focused] = {}  # insertion order = least recently focused first
        self._references: dict[str, tuple[str, str]] = {}  # call id -> (path, reference)

    @property
    def total_chars(self) -> int:
        return sum(len(item.text) for item in self._files.values())

    @property
    def paths(self) -> list[str]:
        """Focused paths, least recently read or changed first."""
        return list(self._files)

    def observe(
        self,
        call_name: str,
        arguments: dict[str, Any] | None,
        outcome_content: str,
        ok: bool,
        workspace_root: Path,
        *,
        call_id: str | None = None,
    ) -> str | None:
        """Note a tool result; return the one-line reference history should keep, if any.

        ``None`` means history keeps the original content (other tools, failures, previews,
        ranged reads of unfocused files, files too large for the cap).
        """
        raw_path = (arguments or {}).get("path")
        if not ok or not isinstance(raw_path, str):
            return None
        path = relative_path(workspace_root, raw_path)
        if call_name == _READ:
            reference = self._observe_read(path, arguments or {}, outcome_content, workspace_root)
        elif call_name in _WRITERS:
            reference = self._observe_write(call_name, path, workspace_root)
        else:
            return None
        if reference is not None and call_id is not None:
            self._references[call_id] = (path, reference)
        return reference

    def history_content(self, call_id: str) -> str | None:
        """The reference for an observed call, while its file is still in the block.

        Once a file is evicted its old references would point at nothing, so this returns
        ``None`` and the history falls back to the original tool result.
        """
        entry = self._references.get(call_id)
        if entry is None or entry[0] not in self._files:
            return None
        return entry[1]

    def refresh(self, workspace_root: Path) -> list[str]:
        """Re-read files changed on disk by someone else, drop deleted ones; return those paths."""
        touched: list[str] = []
        for path in list(self._files):
            if self._sync(path, workspace_root):
                touched.append(path)
        return touched

    def render(self) -> str:
        """The system-prompt block, most recently focused file last; empty when nothing is."""
        if not self._files:
            return ""
        parts = [
            "## Focused files",
            "Current text of the files you read or changed, numbered like read_file output. "
            "Use it instead of calling read_file again.",
        ]
        for path, item in self._files.items():
            parts.append(_render_file(path, item))
        return "\n\n".join(parts)

    def clear(self) -> None:
        self._files.clear()
        self._references.clear()

    # --- internals ----------------------------------------------------------------------

    def _observe_read(
        self, path: str, arguments: dict[str, Any], content: str, root: Path
    ) -> str | None:
        start, end = arguments.get("start_line"), arguments.get("end_line")
        if start is not None or end is not None:
            return self._ranged_reference(path, start, end, root)
        if _PREVIEW.search(content):
            return None
        item = self._focus(path, root, edited=False)
        if item is None:
            return None
        return f"[read_file: {path} — {_lines(item.lines)}, full text in the focused files block]"

    def _ranged_reference(self, path: str, start: Any, end: Any, root: Path) -> str | None:
        # A range of a file that is already focused is a duplicate too; sync first so the
        # block shows what the read just returned.
        if path not in self._files:
            return None
        self._sync(path, root)
        if path not in self._files:
            return None
        span = f"lines {start or 1}-{end or self._files[path].lines}"
        return f"[read_file: {path} {span} — these lines are in the focused files block]"

    def _observe_write(self, call_name: str, path: str, root: Path) -> str | None:
        if self._focus(path, root, edited=True) is None:
            return None
        return f"[{call_name}: {path} updated; current text in the focused files block]"

    def _sync(self, path: str, root: Path) -> bool:
        """Bring one entry in line with the disk; True when it was re-read or dropped."""
        item = self._files[path]
        stamp = _stamp(absolute_path(root, path))
        if stamp == item.stamp:
            return False
        if stamp is None:
            del self._files[path]
        else:
            self._reload(path, root, item)
        return True

    def _reload(self, path: str, root: Path, item: _Focused) -> None:
        # An outside change is not a new read: keep the file's place in the eviction order.
        loaded = _load(absolute_path(root, path))
        if loaded is None or len(loaded[0]) > self.max_chars:
            del self._files[path]
            return
        item.text, item.lines, item.stamp = loaded
        self._evict(keep=path)

    def _focus(self, path: str, root: Path, *, edited: bool) -> _Focused | None:
        previous = self._files.pop(path, None)
        loaded = _load(absolute_path(root, path))
        if loaded is None or len(loaded[0]) > self.max_chars:
            return None
        text, lines, stamp = loaded
        # "Edited" is sticky: a file the agent changed stays its working set after a re-read.
        was_edited = previous is not None and previous.edited
        item = _Focused(text, lines, edited or was_edited, stamp)
        self._files[path] = item
        self._evict(keep=path)
        return item

    def _evict(self, *, keep: str) -> None:
        """Drop the oldest unedited files, then the oldest edited ones, until under the cap."""
        total = self.total_chars
        for want_edited in (False, True):
            for path in list(self._files):
                if total <= self.max_chars:
                    return
                item = self._files[path]
                if path != keep and item.edited == want_edited:
                    total -= len(item.text)
                    del self._files[path]


def _stamp(path: Path) -> Stamp | None:
    try:
        info = path.stat()
    except OSError:
        return None
    return (info.st_mtime_ns, info.st_size)


def _load(path: Path) -> tuple[str, int, Stamp] | None:
    """Numbered text, line count and stamp; None for missing, unreadable or binary files."""
    # Stamp before reading: a change racing the read leaves an old stamp, so the next
    # refresh re-reads instead of trusting a stale copy.
    stamp = _stamp(path)
    if stamp is None or not path.is_file():
        return None
    try:
        if looks_binary(path):
            return None
        raw = path.read_bytes().decode("utf-8", errors="replace")
    except OSError:
        return None
    text, lines = _numbered(raw)
    return text, lines, stamp


def _numbered(raw: str) -> tuple[str, int]:
    # Split on "\n" only, like read_file, so the numbers match the tool's and edit_file's.
    lines = raw.split("\n")
    if raw.endswith("\n"):
        lines.pop()
    if not raw:
        lines = []
    numbered = [number_line(i, line.rstrip("\r")) for i, line in enumerate(lines, start=1)]
    return "\n".join(numbered), len(lines)


def _render_file(path: str, item: _Focused) -> str:
    state = f"{_lines(item.lines)}, edited" if item.edited else _lines(item.lines)
    # A fence longer than any backtick run inside keeps Markdown files from closing it early.
    longest = max((len(m) for m in _BACKTICKS.findall(item.text)), default=2)
    fence = "`" * (longest + 1)
    body = item.text or "(empty file)"
    return f"### {path} ({state})\n{fence}\n{body}\n{fence}"


def _lines(count: int) -> str:
    return "1 line" if count == 1 else f"{count} lines"
