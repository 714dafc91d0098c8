"""The languages the repo map understands: file extensions, grammars and tags queries.

Each grammar is its own PyPI package (``tree-sitter-python`` ...) holding a compiled
parser and, in every version pinned here, a ``queries/tags.scm`` that marks definitions and
references.  ``tree-sitter-language-pack`` is not used: its 1.x downloads grammars at run
time, which an offline machine cannot do.

The shipped queries are thin in places (Python's sees only calls as references, Rust's
misses ``Foo::new()``), so ``shiyi/repomap/queries/<lang>.scm`` adds patterns to them; for a
grammar without a ``tags.scm`` that file alone would be the query.
"""

from __future__ import annotations

import functools
import importlib
import threading
from dataclasses import dataclass
from importlib import resources
from pathlib import PurePath

from tree_sitter import Language, Parser, Query

from shiyi.errors import RepoMapError


@dataclass(frozen=True, slots=True)
class LanguageSpec:
    """One grammar: where it lives and which tags queries make up its query."""

    name: str
    package: str
    """The grammar's Python module, e.g. ``tree_sitter_python``."""
    function: str = "language"
    """The module function returning the grammar pointer (TypeScript ships two)."""
    tags_from: tuple[str, ...] = ()
    """Modules whose ``queries/tags.scm`` are joined, in order (default: ``package``)."""
    extra: tuple[str, ...] = ()
    """Our own query files (``queries/<name>.scm``) appended to the shipped ones."""


_JS = "tree_sitter_javascript"
_TS = "tree_sitter_typescript"

LANGUAGES: dict[str, LanguageSpec] = {
    spec.name: spec
    for spec in (
        LanguageSpec("python", "tree_sitter_python", extra=("python",)),
        LanguageSpec("javascript", _JS, extra=("javascript", "ecma")),
        # TypeScript's tags.scm only holds what it adds to JavaScript (the upstream
        # tree-sitter config says "inherits: ecma"), so the JavaScript one comes first.
        LanguageSpec("typescript", _TS, "language_typescript", (_JS, _TS), ("typescript", "ecma")),
        LanguageSpec("tsx", _TS, "language_tsx", (_JS, _TS), ("typescript", "ecma")),
        LanguageSpec("go", "tree_sitter_go"),
        LanguageSpec("rust", "tree_sitter_rust", extra=("rust",)),
        LanguageSpec("java", "tree_sitter_java", extra=("java",)),
    )
}

EXTENSIONS: dict[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".js": "javascript",
    ".jsx": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
}


def language_for(path: str | PurePath) -> str | None:
    """The language name for a file, or None when its extension is not one we parse."""
    return EXTENSIONS.get(PurePath(path).suffix.lower())


@dataclass(frozen=True, slots=True)
class Grammar:
    """A loaded grammar with its compiled tags query (shared: both are immutable)."""

    spec: LanguageSpec
    language: Language
    query: Query


@functools.cache
def grammar(name: str) -> Grammar:
    """Load a grammar and compile its query once per process.

    Raises :class:`RepoMapError` naming the missing package, so a broken install says what
    to ``pip install`` rather than failing with a bare ``ImportError``.
    """
    spec = LANGUAGES[name]
    module = _import(spec.package)
    language = Language(getattr(module, spec.function)())
    source = "\n".join(_query_texts(spec))
    try:
        query = Query(language, source)
    except Exception as exc:  # QueryError, or a NameError from an incompatible grammar
        raise RepoMapError(f"the tags query for {name} does not compile: {exc}") from exc
    return Grammar(spec, language, query)


def _import(package: str) -> object:
    try:
        return importlib.import_module(package)
    except ImportError as exc:
        dist = package.replace("_", "-")
        raise RepoMapError(
            f"the {dist} grammar is not installed ({exc}); run `pip install {dist}`."
        ) from exc


def _query_texts(spec: LanguageSpec) -> list[str]:
    texts = [shipped_tags(package) for package in spec.tags_from or (spec.package,)]
    texts += [own_query(name) for name in spec.extra]
    present = [text for text in texts if text]
    if not present:
        raise RepoMapError(
            f"no tags query for {spec.name}: {spec.package} ships no queries/tags.scm and "
            f"shiyi has no queries/{spec.name}.scm."
        )
    return present


def shipped_tags(package: str) -> str:
    try:
        return (resources.files(package) / "queries" / "tags.scm").read_text(encoding="utf-8")
    except (OSError, ModuleNotFoundError):
        return ""


def own_query(name: str) -> str:
    path = resources.files("shiyi.repomap") / "queries" / f"{name}.scm"
    return path.read_text(encoding="utf-8")


_local = threading.local()


def parser_for(name: str) -> Parser:
    """A parser for this thread: a ``Parser`` keeps state and must not be shared."""
    parsers: dict[str, Parser] | None = getattr(_local, "parsers", None)
    if parsers is None:
        parsers = _local.parsers = {}
    parser = parsers.get(name)
    if parser is None:
        parser = parsers[name] = Parser(grammar(name).language)
    return parser
