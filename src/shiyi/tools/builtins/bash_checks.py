"""What the bash tool refuses before a command runs, read from the parsed command line.

Three layers, in order: the dangerous commands (``rm -r`` of ``/``, ``--no-preserve-root``,
fork bombs, ``mkfs``, ``dd`` to a device, shutting the machine down), the protected paths
(the agent's config, secrets and data dir, by name or once resolved), then the user's
``tools.bash_deny`` regular expressions over the raw text.  A shell can always hide a name
(``cat shi*.yaml`` is expanded here, ``$(printf ...)`` cannot be): the guarantee for the
protected paths is the sandbox (see :mod:`shiyi.tools.builtins.sandbox`); these checks stop
the plain attempts and the accidents in every mode.
"""

from __future__ import annotations

import glob
import os
import posixpath
import re
from collections.abc import Iterator
from pathlib import Path

from shiyi.errors import CommandDenied, ToolError
from shiyi.tools.builtins.bash_parse import CommandLine, parse
from shiyi.tools.protection import ADVICE, protected_name
from shiyi.tools.workspace import Workspace

_ROOTS = frozenset({"/", "/*", "~", "~/*", "$HOME", "$HOME/*", "${HOME}", "${HOME}/*"})
# Commands that run the command after them: `sudo rm -rf /` is an rm.
_WRAPPERS = frozenset({
    "sudo", "doas", "env", "command", "builtin", "exec", "nohup", "nice", "ionice", "time",
    "timeout", "setsid", "stdbuf", "xargs", "busybox", "unbuffer",
})  # fmt: skip
_POWER = frozenset({"shutdown", "reboot", "halt", "poweroff"})
_POWER_VERBS = frozenset({"poweroff", "reboot", "halt", "kexec"})
_HARMLESS_DEVICES = ("/dev/null", "/dev/zero", "/dev/stdout", "/dev/stderr", "/dev/fd/")
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
    """
    line = parse(command)
    for why in dangers(line):
        raise CommandDenied(
            f"the command was refused: {why}. It was not run; do this another way, or ask "
            "the user to run it themselves."
        )
    _check_paths(line, workspace, expand_globs)
    check_rules(command, rules)


def dangers(line: CommandLine) -> Iterator[str]:
    """Why the parsed command line must not run (nothing when it may)."""
    for function in line.functions:
        if function.calls_itself and function.forks:
            yield f"the function {function.name!r} calls itself in the background: a fork bomb"
    for words in line.commands:
        yield from _command_dangers(_unwrapped(words))


def _unwrapped(words: list[str]) -> list[str]:
    rest = list(words)
    while rest and posixpath.basename(rest[0]) in _WRAPPERS:
        rest.pop(0)
        # The wrapper's own options and arguments: -n 5, NAME=value, a duration.
        while rest and (rest[0].startswith("-") or "=" in rest[0] or rest[0][:1].isdigit()):
            rest.pop(0)
    return rest


def _command_dangers(words: list[str]) -> Iterator[str]:
    if not words:
        return
    name, args = posixpath.basename(words[0]), words[1:]
    if name == "rm":
        yield from _rm_dangers(args)
    elif name.startswith("mkfs") or name in ("mke2fs", "wipefs"):
        yield f"{name} formats a file system"
    elif name == "dd" and any(_writes_device(arg) for arg in args):
        yield "dd writes to a device"
    elif _powers_off(name, set(args)):
        yield "it would shut down or restart the machine"


def _powers_off(name: str, args: set[str]) -> bool:
    if name in ("init", "telinit"):
        return bool({"0", "6"} & args)
    return name in _POWER or (name == "systemctl" and bool(_POWER_VERBS & args))


def _rm_dangers(args: list[str]) -> Iterator[str]:
    short, long, targets = _split_options(args)
    recursive = bool({"r", "R"} & short) or any(_abbreviates(o, "--recursive", 4) for o in long)
    if any(_abbreviates(o, "--no-preserve-root", 3) for o in long):
        yield "rm --no-preserve-root may delete the whole file system"
    elif recursive and (roots := [t for t in targets if _normalized(t) in _ROOTS]):
        yield f"rm -r of {roots[0]!r} deletes everything below it"


def _split_options(args: list[str]) -> tuple[set[str], list[str], list[str]]:
    short: set[str] = set()
    long: list[str] = []
    targets: list[str] = []
    options_end = False
    for arg in args:
        if options_end or arg == "-" or not arg.startswith("-"):
            targets.append(arg)
        elif arg == "--":
            options_end = True
        elif arg.startswith("--"):
            long.append(arg)
        else:
            short.update(arg[1:])
    return short, long, targets


def _abbreviates(option: str, full: str, shortest: int) -> bool:
    # GNU tools accept any unambiguous prefix of a long option: --rec is --recursive.
    return len(option) >= shortest and full.startswith(option)


def _normalized(target: str) -> str:
    squeezed = re.sub(r"/+", "/", target)
    return posixpath.normpath(squeezed) if squeezed not in ("/*",) else squeezed


def _writes_device(arg: str) -> bool:
    return arg.startswith("of=/dev/") and not arg[3:].startswith(_HARMLESS_DEVICES)


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
