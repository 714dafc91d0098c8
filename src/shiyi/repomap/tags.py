"""Tags of one file: tree-sitter parses it and the language's tags query marks definitions
(``@definition.*``) and references (``@reference.*``), each with an ``@name`` capture.

Syntax errors do not stop this: tree-sitter recovers and still yields the tags around them.
"""

from __future__ import annotations

import builtins
import re
from collections import Counter
from dataclasses import dataclass

from tree_sitter import Node, QueryCursor

from shiyi.repomap.languages import grammar, parser_for
from shiyi.repomap.model import Definition, FileTags

MAX_SIGNATURE_CHARS = 160
MAX_INDENT = 24


@dataclass(frozen=True, slots=True)
class _Generic:
    """Names whose uses point at the language's own library, not at the repository."""

    bare: frozenset[str]
    """Used as a plain name: ``len(x)`` is the builtin, not some class's ``def len``."""
    member: frozenset[str]
    """Used as an attribute: ``d.get(k)``, ``xs.append(x)`` are far more often the
    built-in types' methods than ours; counting them would tie every file to any class
    that happens to define ``get``."""
    member_parent: str


_BUILTIN_TYPES = (dict, list, str, set, frozenset, bytes, tuple, int, float, object)
GENERIC: dict[str, _Generic] = {
    "python": _Generic(
        frozenset(dir(builtins)),
        frozenset(name for kind in _BUILTIN_TYPES for name in dir(kind)),
        "attribute",
    )
}
_NOTHING = _Generic(frozenset(), frozenset(), "")
_DEF = "definition."
_REF = "reference."
_OPEN_PAREN = re.compile(r"([(\[])\s+")
# Whitespace runs begin a match only at their start (or after the comma): from inside a run
# every attempt rescanned it, quadratic in the run (issue 29).
_CLOSE_PAREN = re.compile(r",?(?<!\s)\s+([)\]])")
_PREFIX_STOP = re.compile(rb"[{};=]")


def extract_tags(source: bytes, language: str) -> FileTags:
    """Definitions and reference counts of ``source`` written in ``language``."""
    compiled = grammar(language)
    generic = GENERIC.get(language, _NOTHING)
    tree = parser_for(language).parse(source)
    definitions: dict[tuple[str, int], Definition] = {}
    def_names: set[int] = set()
    ref_nodes: dict[int, str] = {}
    for _, captures in QueryCursor(compiled.query).matches(tree.root_node):
        names = captures.get("name")
        if not names:
            continue  # e.g. Go's package clause: a @name with no definition or reference
        name_node = names[0]
        for capture, nodes in captures.items():
            if capture.startswith(_DEF):
                name = _text(source, name_node)
                key = (name, nodes[0].start_byte)
                # One node can match twice (a Rust method is a function too): keep the first.
                if key not in definitions:
                    definitions[key] = _definition(source, nodes[0], name, capture[len(_DEF) :])
                def_names.add(name_node.start_byte)
                break
            if capture.startswith(_REF):
                name = _text(source, name_node)
                if _is_generic(generic, name, name_node):
                    break
                # Keyed by position: overlapping patterns must not count one use twice.
                ref_nodes[name_node.start_byte] = name
                break
    references = Counter(
        name for start, name in ref_nodes.items() if start not in def_names and name
    )
    ordered = sorted(definitions.values(), key=lambda d: (d.line, d.indent))
    return FileTags(tuple(ordered), dict(references))


def _is_generic(generic: _Generic, name: str, node: Node) -> bool:
    if name not in generic.bare and name not in generic.member:
        return False  # the common case: no need to look at the parent node
    parent = node.parent
    is_member = parent is not None and parent.type == generic.member_parent
    return name in generic.member if is_member else name in generic.bare


def _text(source: bytes, node: Node) -> str:
    return source[node.start_byte : node.end_byte].decode("utf-8", errors="replace")


def _definition(source: bytes, node: Node, name: str, kind: str) -> Definition:
    line_start = source.rfind(b"\n", 0, node.start_byte) + 1
    prefix = source[line_start : node.start_byte].decode("utf-8", errors="replace")
    indent = len(prefix.expandtabs(4)) - len(prefix.expandtabs(4).lstrip())
    return Definition(
        name=name,
        kind=kind,
        line=node.start_point.row + 1,
        end_line=node.end_point.row + 1,
        indent=min(indent, MAX_INDENT),
        signature=_signature(source, node, line_start),
    )


def _signature(source: bytes, node: Node, line_start: int) -> str:
    """The definition's header: from the start of its line up to its body.

    Starting at the line start keeps words such as ``export``, ``type`` or ``const`` that sit
    outside the definition node (unless another statement shares the line); without a body
    (a constant, a type alias) the first line stands for the whole.
    """
    body = node.child_by_field_name("body")
    if body is not None and body.start_byte > node.start_byte:
        end = body.start_byte
    else:
        newline = source.find(b"\n", node.start_byte, node.end_byte)
        end = newline if newline != -1 else node.end_byte
    begin = line_start
    if _PREFIX_STOP.search(source[line_start : node.start_byte]):
        begin = node.start_byte  # another statement shares the line: `{ area(): number`
    header = source[begin:end].decode("utf-8", errors="replace")
    text = " ".join(header.split())
    text = _CLOSE_PAREN.sub(r"\1", _OPEN_PAREN.sub(r"\1", text))  # multi-line parameter lists
    text = text.removesuffix("{").rstrip()
    if len(text) > MAX_SIGNATURE_CHARS:
        text = text[: MAX_SIGNATURE_CHARS - 1].rstrip() + "…"
    return text
