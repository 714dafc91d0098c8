"""Session tool memory (seed 003): answer repeated read-only calls, remember relevant results.

Two stores, both for the current session only:

* an exact-call cache: the same read-only call (after normalising its arguments) is answered
  from memory while the files it looked at are unchanged; side-effecting calls invalidate;
* a relevance memory: the best search-like results, at most ``capacity`` of them.

File freshness is judged from ``(mtime_ns, size)`` stamps; side-effecting calls invalidate
explicitly as well, because two writes within one mtime tick that keep the size are invisible
to stamps.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from shiyi.context.tool_inputs import Input, absolute_path, normalise, touches, watched_inputs

SEARCH_TOOLS = frozenset({"grep", "query_memory", "web_search"})
PATH_WRITERS = frozenset({"write_file", "edit_file"})
SHELL_TOOLS = frozenset({"bash"})
HINT_LINES = 15  # more lines than this in the prompt cost more than the repeats they save
_QUERY_KEYS = ("query", "pattern", "q")
_TERM = re.compile(r"[a-z0-9]+|[\u3400-\u9fff]")
_NEUTRAL_LENGTH = 2000  # results up to this many characters are not penalised for length


@dataclass(slots=True, frozen=True)
class CachedResult:
    name: str
    arguments: dict[str, Any]
    content: str
    age: float  # seconds since the result was stored
    hits: int  # times it was served from the cache, this one included


@dataclass(slots=True, frozen=True)
class RelevantResult:
    name: str
    arguments: dict[str, Any]
    content: str
    relevance: float


@dataclass(slots=True)
class _Entry:
    name: str
    arguments: dict[str, Any]
    content: str
    inputs: tuple[Input, ...]
    stored_at: float
    hits: int = 0


class ToolMemory:
    def __init__(
        self,
        capacity: int,
        min_relevance: float,
        *,
        max_entries: int = 200,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.capacity = capacity
        self.min_relevance = min_relevance
        self.max_entries = max_entries
        self._clock = clock
        self._cache: OrderedDict[str, _Entry] = OrderedDict()  # least recently used first
        self._relevant: dict[str, tuple[RelevantResult, tuple[Input, ...]]] = {}

    # --- exact-call cache -----------------------------------------------------------------

    def lookup(
        self, name: str, arguments: dict[str, Any], read_only: bool, workspace_root: Path
    ) -> CachedResult | None:
        """The stored result of an identical read-only call whose inputs have not changed."""
        if not read_only:
            return None
        key = _key(name, normalise(name, arguments, workspace_root))
        entry = self._cache.get(key)
        if entry is None:
            return None
        current = watched_inputs(name, entry.arguments, workspace_root)
        if current is None or current != entry.inputs:
            del self._cache[key]
            return None
        entry.hits += 1
        self._cache.move_to_end(key)
        age = max(0.0, self._clock() - entry.stored_at)
        return CachedResult(entry.name, dict(entry.arguments), entry.content, age, entry.hits)

    def store(
        self,
        name: str,
        arguments: dict[str, Any],
        read_only: bool,
        content: str,
        workspace_root: Path,
        *,
        ok: bool = True,
    ) -> None:
        """Remember a finished call; a side-effecting one invalidates instead of being kept."""
        if not read_only:
            # Even a failed command may have changed files halfway, so failures count too.
            self.invalidate(name, arguments, workspace_root)
            return
        if not ok:
            return
        normal = normalise(name, arguments, workspace_root)
        inputs = watched_inputs(name, normal, workspace_root)
        if inputs is None:
            return  # inputs too large to watch: a stale answer would be worse than a repeat
        key = _key(name, normal)
        self._cache[key] = _Entry(name, normal, content, inputs, self._clock())
        self._cache.move_to_end(key)
        while len(self._cache) > self.max_entries:
            self._cache.popitem(last=False)
        if name in SEARCH_TOOLS:
            self._keep(name, normal, content, None, inputs)

    def invalidate(self, name: str, arguments: dict[str, Any], workspace_root: Path) -> None:
        """Forget what a side-effecting call may have changed.

        ``write_file``/``edit_file`` touch one path: entries that read it, or walked a tree
        holding it, go. ``bash`` can change any file: every file-based entry goes. Any other
        side-effecting tool is unknown territory (``remember`` changes what ``query_memory``
        finds, say), so everything goes.
        """
        stale = _stale_rule(name, arguments, workspace_root)
        for key in [k for k, e in self._cache.items() if stale(e.inputs)]:
            del self._cache[key]
        for key in [k for k, (_, i) in self._relevant.items() if stale(i)]:
            del self._relevant[key]

    def already_fetched(self) -> list[str]:
        """One line per cached call, most recent last (seed 003's "already cached" hint)."""
        entries = list(self._cache.values())[-HINT_LINES:]
        return [
            f"{e.name} {_describe(e.arguments)} (cached; call again only if you need it refreshed)"
            for e in entries
        ]

    def render_hint(self) -> str:
        lines = self.already_fetched()
        if not lines:
            return ""
        head = (
            "## Already fetched\n"
            "These read-only calls already ran this session; their results have not changed "
            "since. Repeating one returns the same text."
        )
        hidden = len(self._cache) - len(lines)
        more = [f"- ... and {hidden} older calls"] if hidden > 0 else []
        return "\n".join([head, *more, *(f"- {line}" for line in lines)])

    # --- relevance memory -----------------------------------------------------------------

    def keep(
        self,
        name: str,
        arguments: dict[str, Any],
        content: str,
        relevance: float | None = None,
    ) -> bool:
        """Remember a result if relevant enough; ``None`` scores it with :func:`relevance_of`."""
        return self._keep(name, dict(arguments), content, relevance, ())

    def relevant_results(self) -> list[RelevantResult]:
        """Kept results, most relevant first (ties: earliest kept first)."""
        results = [result for result, _ in self._relevant.values()]
        return sorted(results, key=lambda r: -r.relevance)

    def clear(self) -> None:
        self._cache.clear()
        self._relevant.clear()

    def _keep(
        self,
        name: str,
        arguments: dict[str, Any],
        content: str,
        relevance: float | None,
        inputs: tuple[Input, ...],
    ) -> bool:
        score = relevance if relevance is not None else relevance_of(arguments, content)
        if self.capacity <= 0 or score < self.min_relevance:
            return False
        key = _key(name, arguments)
        self._relevant.pop(key, None)
        self._relevant[key] = (RelevantResult(name, arguments, content, score), inputs)
        if len(self._relevant) > self.capacity:
            # The least relevant goes; among equals the oldest, since dicts keep order.
            weakest = min(self._relevant, key=lambda k: self._relevant[k][0].relevance)
            del self._relevant[weakest]
        return key in self._relevant


def relevance_of(arguments: dict[str, Any], content: str) -> float:
    """Share of the query's terms found in ``content``, discounted for long results.

    Terms are lower-case ASCII words and single CJK characters (no segmenter needed). A long
    result contains many terms by chance and costs more context, so past
    ``_NEUTRAL_LENGTH`` characters the score shrinks with the square root of the length.
    Without a query there is no evidence of relevance: 0.
    """
    query = next((arguments[k] for k in _QUERY_KEYS if isinstance(arguments.get(k), str)), "")
    terms = set(_TERM.findall(query.lower()))
    if not terms or not content:
        return 0.0
    text = content.lower()
    coverage = sum(term in text for term in terms) / len(terms)
    return coverage * min(1.0, math.sqrt(_NEUTRAL_LENGTH / len(content)))


def _key(name: str, arguments: dict[str, Any]) -> str:
    return f"{name}:{json.dumps(arguments, sort_keys=True, ensure_ascii=False, default=str)}"


def _describe(arguments: dict[str, Any], width: int = 60) -> str:
    parts: list[str] = []
    for key in sorted(arguments):
        value = arguments[key]
        shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        if len(shown) > width:
            shown = shown[: width - 1] + "…"
        parts.append(f"{key}={shown}")
    return " ".join(parts)


def _stale_rule(
    name: str, arguments: dict[str, Any], root: Path
) -> Callable[[tuple[Input, ...]], bool]:
    """Which results a side-effecting call may have made stale, judged from their inputs."""
    if name in PATH_WRITERS:
        changed = normalise(name, arguments, root).get("path")
        if not isinstance(changed, str):
            return _never
        return partial(touches, changed=absolute_path(root, changed))
    return _file_based if name in SHELL_TOOLS else _always


def _file_based(inputs: tuple[Input, ...]) -> bool:
    return bool(inputs)


def _always(_inputs: tuple[Input, ...]) -> bool:
    return True


def _never(_inputs: tuple[Input, ...]) -> bool:
    return False
