"""A bash command line read as a shell reads it: simple commands, redirections, functions.

Regular expressions over the raw text missed ``rm -r -f /``, ``rm -Rf /*`` and a fork bomb
written with spaces; the parsed words do not care how the command was spelled or quoted.
bashlex does not understand every construct (``$((...))``, ``[[ ]]``, ``case``): those
command lines are split into words by :mod:`shlex` instead, which sees the same commands
less precisely (a word inside ``[[ ]]`` may look like a command), so no check is skipped.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import bashlex

_OPERATOR_CHARS = ";&|()<>\n"
# A fork bomb in any spacing, named or ':', for the text bashlex could not parse.
# The name starts where its run starts: from inside a run every attempt rescanned it, quadratic
# in the command (issue 29).
_FORK_BOMB = re.compile(r"(?<![\w:.-])([\w:.-]+)\s*\(\s*\)\s*\{[^}]*?\1\s*\|\s*\1\s*&")


@dataclass(slots=True)
class FunctionDef:
    name: str
    calls_itself: bool
    forks: bool
    """The body has a pipeline or a background job: with self-calls, a fork bomb."""


@dataclass(slots=True)
class CommandLine:
    """What a command line runs: each simple command's words, every redirection target and
    every function it defines.  ``parsed`` is False when bashlex gave up (see module doc)."""

    commands: list[list[str]] = field(default_factory=list)
    targets: list[str] = field(default_factory=list)
    functions: list[FunctionDef] = field(default_factory=list)
    parsed: bool = True
    writes: list[str] = field(default_factory=list)
    """The redirection targets written to (``>``, ``>>``, ``&>``), also in ``targets``."""
    fed_by: dict[int, int] = field(default_factory=dict)
    """Command index -> the index of the command whose output it reads through a pipe."""
    here_strings: dict[int, str] = field(default_factory=dict)
    """Command index -> the text a ``<<<`` gives it on its input."""

    def words(self) -> Iterator[str]:
        for words in self.commands:
            yield from words
        yield from self.targets


def parse(command: str) -> CommandLine:
    try:
        trees = bashlex.parse(command)
    except Exception:  # bashlex raises ParsingError, NotImplementedError and others
        return _tokenized(command)
    line = CommandLine()
    for tree in trees:
        _visit(tree, line)
    return line


def _visit(node: Any, line: CommandLine) -> None:
    kind = getattr(node, "kind", None)
    if kind == "command":
        _command(node, line)
        return
    if kind == "pipeline":
        _pipeline(node, line)
        return
    if kind == "function":
        line.functions.append(_function(node))
    for child in _children(node):
        _visit(child, line)


def _pipeline(node: Any, line: CommandLine) -> None:
    previous: int | None = None
    for part in node.parts:
        before = len(line.commands)
        _visit(part, line)
        if getattr(part, "kind", None) == "pipe":
            continue
        current = len(line.commands) - 1 if len(line.commands) > before else None
        if current is not None and previous is not None:
            line.fed_by[current] = previous
        previous = current if getattr(part, "kind", None) == "command" else None


def _command(node: Any, line: CommandLine) -> None:
    words: list[str] = []
    here_string: str | None = None
    for part in node.parts:
        if part.kind == "word":
            words.append(_unquoted(part.word))
        elif part.kind == "redirect" and getattr(part.output, "kind", None) == "word":
            target = _unquoted(part.output.word)
            line.targets.append(target)
            if ">" in part.type:
                line.writes.append(target)
            elif part.type == "<<<":
                here_string = target
        # $(...), <(...) inside words and redirections run commands too.
        for child in _children(part):
            _visit(child, line)
    if words:
        line.commands.append(words)
        if here_string is not None:
            line.here_strings[len(line.commands) - 1] = here_string


def _unquoted(word: str) -> str:
    # bashlex leaves quotes in some words ('shi''yi.yaml'); the shell would not.
    if not any(quote in word for quote in "'\"\\"):
        return word
    try:
        parts = shlex.split(word)
    except ValueError:
        return word
    return parts[0] if len(parts) == 1 else word


def _function(node: Any) -> FunctionDef:
    # `f() {...}` or `function f {...}`: the first word that is not the reserved word.
    name = next(p.word for p in node.parts if p.kind == "word")
    body = CommandLine()
    forks = False
    for part in node.parts[1:]:
        _visit(part, body)
        forks = forks or any(_forks(n) for n in _walk(part))
    calls_itself = any(words and words[0] == name for words in body.commands)
    return FunctionDef(name, calls_itself, forks)


def _forks(node: Any) -> bool:
    kind = getattr(node, "kind", None)
    return kind == "pipe" or (kind == "operator" and getattr(node, "op", "") == "&")


def _walk(node: Any) -> Iterator[Any]:
    yield node
    for child in _children(node):
        yield from _walk(child)


def _children(node: Any) -> Iterator[Any]:
    for name in ("parts", "list"):
        for child in getattr(node, name, None) or ():
            yield child
    for name in ("command", "output"):
        child = getattr(node, name, None)
        if hasattr(child, "kind"):
            yield child


def _tokenized(command: str) -> CommandLine:
    """The fallback: shell words split at operators (quotes honoured where they balance)."""
    line = CommandLine(parsed=False)
    if bomb := _FORK_BOMB.search(command):
        line.functions.append(FunctionDef(bomb.group(1), calls_itself=True, forks=True))
    current: list[str] = []
    piped = False
    tokens = _tokens(command)
    for index, token in enumerate(tokens):
        if token in ("{", "}") or (set(token) <= set(_OPERATOR_CHARS) and not _is_redirect(token)):
            if current:
                _append(line, current, piped)
            piped = token == "|" and bool(current)
            current = []
        elif _is_redirect(token):
            if index + 1 < len(tokens):
                line.targets.append(tokens[index + 1])
                if ">" in token:
                    line.writes.append(tokens[index + 1])
        elif not (index and _is_redirect(tokens[index - 1])):
            current.append(token)
    if current:
        _append(line, current, piped)
    return line


def _append(line: CommandLine, words: list[str], piped: bool) -> None:
    if piped and line.commands:
        line.fed_by[len(line.commands)] = len(line.commands) - 1
    line.commands.append(words)


def _is_redirect(token: str) -> bool:
    # shlex joins a run of operator characters into one token: >, >>, &>, >&, <<<, >|
    return set(token) <= set("<>&|") and bool(set(token) & set("<>"))


def _tokens(command: str) -> list[str]:
    lexer = shlex.shlex(command, posix=True, punctuation_chars=_OPERATOR_CHARS)
    lexer.whitespace = " \t\r"  # a newline separates commands: an operator here
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        return list(lexer)
    except ValueError:  # unbalanced quotes: bash would refuse it too; check the plain words
        return command.split()
