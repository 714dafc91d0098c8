"""Turn ranked definitions into map text, and find how many fit a token budget.

The map lists files (most important first) and under each the chosen definitions' headers
in line order, numbered like ``read_file`` output so the model can read the lines it needs.
A chosen method brings its class header along: a method without its class is hard to use.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from shiyi.repomap.model import Definition, FileTags, RankedDefinition

TokenCount = Callable[[str], int]


@dataclass(frozen=True, slots=True)
class Fitted:
    text: str
    tokens: int
    files: tuple[str, ...]
    definitions: int
    """How many ranked definitions were chosen (enclosing headers not counted)."""


class Outline:
    """The enclosing definitions of each definition, worked out once per file per fit."""

    def __init__(self, tags: Mapping[str, FileTags]) -> None:
        self._tags = tags
        self._parents: dict[str, dict[Definition, tuple[Definition, ...]]] = {}

    def definitions(self, rel: str) -> Sequence[Definition]:
        return self._tags[rel].definitions

    def enclosing(self, rel: str, definition: Definition) -> tuple[Definition, ...]:
        parents = self._parents.get(rel)
        if parents is None:
            parents = self._parents[rel] = _parents(self._tags[rel].definitions)
        return parents.get(definition, ())


def _parents(definitions: Sequence[Definition]) -> dict[Definition, tuple[Definition, ...]]:
    parents: dict[Definition, tuple[Definition, ...]] = {}
    stack: list[Definition] = []  # the definitions enclosing the current one
    for definition in definitions:  # sorted by line
        while stack and not _encloses(stack[-1], definition):
            stack.pop()
        if stack:
            parents[definition] = tuple(stack)
        stack.append(definition)
    return parents


def _encloses(outer: Definition, inner: Definition) -> bool:
    return (
        outer.line <= inner.line
        and inner.end_line <= outer.end_line
        and outer.indent < inner.indent
    )


def render(chosen: Sequence[RankedDefinition], outline: Outline) -> Fitted:
    """The map text for ``chosen`` (token count left at 0 for the caller to fill)."""
    by_file: dict[str, set[Definition]] = {}
    for item in chosen:  # dicts keep insertion order: files appear best first
        shown = by_file.setdefault(item.rel, set())
        shown.add(item.definition)
        # A method without its class is hard to use: bring the enclosing headers along.
        shown.update(outline.enclosing(item.rel, item.definition))
    blocks: list[str] = []
    for rel, shown in by_file.items():
        lines = [f"{rel}:"]
        for d in sorted(shown, key=lambda d: (d.line, d.indent)):
            lines.append(f"{d.line:>5}| {' ' * d.indent}{d.signature}")
        blocks.append("\n".join(lines))
    text = "\n".join(blocks) + ("\n" if blocks else "")
    return Fitted(text, 0, tuple(by_file), len(chosen))


def fit(
    ranked: Sequence[RankedDefinition],
    tags: Mapping[str, FileTags],
    max_tokens: int,
    count_tokens: TokenCount,
) -> Fitted:
    """The largest prefix of ``ranked`` whose map fits ``max_tokens``, by binary search.

    Tokens grow with every definition added, so the best prefix length is found in
    ~log2(budget) renders instead of one per definition.  Every listed definition costs at
    least one token, which bounds the search to ``max_tokens`` definitions.
    """
    low, high = 0, min(len(ranked), max_tokens)
    best = Fitted("", 0, (), 0)
    outline = Outline(tags)
    while low <= high:
        middle = (low + high) // 2
        candidate = render(ranked[:middle], outline)
        tokens = count_tokens(candidate.text)
        if tokens <= max_tokens:
            best = Fitted(candidate.text, tokens, candidate.files, middle)
            low = middle + 1
        else:
            high = middle - 1
    return best
