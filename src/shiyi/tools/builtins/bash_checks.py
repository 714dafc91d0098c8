"""What the bash tool refuses before a command runs, read from the parsed command line.

Four layers, in order: the dangerous commands (:mod:`.bash_dangers`: ``rm -r`` of ``/`` in
any spelling, nested shells, fork bombs, ``kill -1``, devices ...), the protected paths
(the agent's config, secrets and data dir, by name or once resolved), the code locations a
command would change (:mod:`shiyi.tools.code_paths`), then the user's ``tools.bash_deny``
regular expressions over the raw text.  A shell can always hide a name
(``cat shi*.yaml`` is expanded here, ``$(printf ...)`` cannot be): the guarantee for the
protected paths is the sandbox (see :mod:`shiyi.tools.builtins.sandbox`); these checks stop
the plain attempts and the accidents in every mode.
"""

from __future__ import annotations

import glob
import itertools
import os
import posixpath
import re
from collections.abc import Iterator
from pathlib import Path

from shiyi.errors import CommandDenied, ToolError
from shiyi.tools.builtins.bash_dangers import dangers, unwrapped
from shiyi.tools.builtins.bash_parse import CommandLine, parse
from shiyi.tools.code_paths import CODE_ADVICE
from shiyi.tools.protection import ADVICE, protected_name
from shiyi.tools.workspace import Workspace

# Commands that change the paths they name (every argument: mv's source moves too, ln's
# target gets a second name a later write goes through); and those that change only their
# destination (the last argument, or -t DIR).
_CHANGERS = frozenset({
    "rm", "rmdir", "unlink", "mv", "ln", "touch", "truncate", "shred", "mkdir", "chmod",
    "chown", "chgrp", "tee", "patch", "setfattr",
})  # fmt: skip
_COPIERS = frozenset({"cp", "install", "rsync"})
_IN_PLACE = frozenset({"sed", "perl"})
_GLOB = re.compile(r"[*?\[]")
_MAX_GLOB_MATCHES = 200


def check_command(
    command: str, workspace: Workspace, rules: list[str], *, expand_globs: bool = True
) -> None:
    """Raise :class:`CommandDenied` (or :class:`ToolError` for a broken rule) unless
    ``command`` may run.

    ``expand_globs``: also refuse a glob that matches a protected file.  Without a sandbox
    that is what stops ``grep token *`` from printing the server token; in one, the file
    cannot be read anyway and ``ls *`` in a workspace holding shiyi.yaml should just work.
    (A glob among the paths a command changes is always expanded for the code locations.)
    """
    line = parse(command)
    for why in dangers(line, str(workspace.root)):
        raise CommandDenied(
            f"the command was refused: {why}. It was not run; do this another way, or ask "
            "the user to run it themselves."
        )
    _check_paths(line, workspace, expand_globs)
    _check_changes(line, workspace)
    check_rules(command, rules)


# --- protected paths ----------------------------------------------------------------------


def _check_paths(line: CommandLine, workspace: Workspace, expand_globs: bool) -> None:
    for word in line.words():
        for candidate in _path_candidates(word):
            why = _protected_reason(candidate, workspace, expand_globs)
            if why:
                raise CommandDenied(
                    f"the command names {word!r}, which is protected: {why}; {ADVICE}. "
                    "It was not run; ask the user to make this change themselves."
                )


def _path_candidates(word: str) -> list[str]:
    # --config=FILE and of=FILE name a file after the '='.
    parts = [word, word.split("=", 1)[1]] if "=" in word else [word]
    return [os.path.expandvars(os.path.expanduser(p)) for p in parts if p]


def _protected_reason(candidate: str, workspace: Workspace, expand_globs: bool) -> str | None:
    why = protected_name(posixpath.basename(candidate.rstrip("/")))
    if why:
        return why
    if _GLOB.search(candidate):
        return _glob_reason(candidate, workspace) if expand_globs else None
    path = workspace.root / candidate
    try:
        return workspace.protected.reason(path.resolve()) or workspace.protected.reason(path)
    except (OSError, RuntimeError, ValueError):  # a loop of links, a NUL byte
        return None


def _glob_reason(pattern: str, workspace: Workspace) -> str | None:
    """`cat shi*.yaml`: what the shell would expand it to, checked name by name."""
    matches = glob.iglob(pattern, root_dir=workspace.root, recursive=False)
    for count, match in enumerate(matches):
        if count == _MAX_GLOB_MATCHES:
            break
        path = Path(workspace.root, match)
        why = workspace.protected.reason(path.resolve()) or workspace.protected.reason(path)
        if why:
            return why
    return None


def _check_changes(line: CommandLine, workspace: Workspace) -> None:
    """Refuse a command that changes a code location (see :mod:`shiyi.tools.code_paths`)."""
    for word in _changed_words(line):
        for candidate in _path_candidates(word):
            why = _code_reason(candidate, workspace)
            if why:
                raise CommandDenied(
                    f"the command changes {word!r}, which may not be changed: {why}; "
                    f"{CODE_ADVICE}. It was not run."
                )


def _changed_words(line: CommandLine) -> Iterator[str]:
    yield from line.writes
    for words in line.commands:
        words = unwrapped(words)
        if not words:
            continue
        name = posixpath.basename(words[0])
        args = [a for a in words[1:] if not a.startswith("-")]
        if name in _CHANGERS or (
            name in _IN_PLACE and any(a.startswith(("-i", "--in-place")) for a in words)
        ):
            yield from args
        elif name in _COPIERS:
            yield from args[-1:]
            yield from (a.split("=", 1)[1] for a in words if a.startswith("--target-directory="))
            yield from (words[i + 1] for i, a in enumerate(words[:-1]) if a == "-t")
        elif name == "dd":
            yield from (a[3:] for a in words if a.startswith("of="))


def _code_reason(candidate: str, workspace: Workspace) -> str | None:
    paths = [Path(workspace.root, candidate)]
    if _GLOB.search(candidate):
        matches = glob.iglob(candidate, root_dir=workspace.root)
        paths += [Path(workspace.root, m) for m in itertools.islice(matches, _MAX_GLOB_MATCHES)]
    for path in paths:
        try:
            why = workspace.protected.code_reason(path.resolve())
            why = why or workspace.protected.code_reason(Path(os.path.normpath(path)))
        except (OSError, RuntimeError, ValueError):  # a loop of links, a NUL byte
            continue
        if why:
            return why
    return None


# --- the user's rules -----------------------------------------------------------------------


def check_rules(command: str, rules: list[str]) -> None:
    for rule in rules:
        try:
            matched = re.search(rule, command) is not None
        except re.error as exc:
            # Fail closed: a broken safety rule must not silently let everything through.
            raise ToolError(
                f"the deny rule `{rule}` is not a valid regular expression ({exc}); "
                "the command was not run. Fix tools.bash_deny in the configuration."
            ) from None
        if matched:
            raise CommandDenied(
                f"the command was refused by the deny rule `{rule}` and was not run. "
                "Do this another way, or ask the user to run it themselves."
            )
