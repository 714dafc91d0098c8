"""The dangerous commands, read from a parsed command line (see :mod:`.bash_parse`).

Each command is looked at as the shell would run it: behind its wrappers (``sudo``,
``timeout 5``, ``xargs -I{}``), behind a ``$(echo ...)`` that produces it, and inside the
program text another shell or ``eval`` is given (``bash -c '...'``, ``echo '...' | sh``,
``sh <<< '...'``), to a bounded depth.  A ``cd`` changes where relative targets point, so
``cd / && rm -rf *`` is an ``rm -r`` of ``/*``.  Program text a pipe decodes or downloads
(``base64 -d | sh``, ``curl ... | bash``) cannot be read here, so it is refused.
"""

from __future__ import annotations

import os
import posixpath
import re
import shlex
from collections.abc import Iterator

from shiyi.tools.builtins.bash_parse import CommandLine, parse

_MAX_DEPTH = 4
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "yash", "fish"})
_SOURCES = frozenset({"source", "."})
# Wrappers run the command after them; each with its options that take a value and the
# positional arguments before the command (timeout's duration, chroot's directory).
_WRAPPERS: dict[str, tuple[frozenset[str], int]] = {
    "sudo": (frozenset({"-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U", "-T"}), 0),
    "doas": (frozenset({"-u", "-C"}), 0),
    "env": (frozenset({"-u", "-C", "--unset", "--chdir"}), 0),
    "runuser": (frozenset({"-u", "-g", "-G"}), 0),
    "nice": (frozenset({"-n", "--adjustment"}), 0),
    "ionice": (frozenset({"-c", "-n", "-p", "--class", "--classdata"}), 0),
    "timeout": (frozenset({"-s", "-k", "--signal", "--kill-after"}), 1),
    "stdbuf": (frozenset({"-i", "-o", "-e"}), 0),
    "xargs": (frozenset({"-I", "-n", "-P", "-L", "-d", "-a", "-E", "-s", "--max-args"}), 0),
    "watch": (frozenset({"-n", "--interval"}), 0),
    "time": (frozenset({"-f", "-o"}), 0),
    "exec": (frozenset({"-a"}), 0),
    "chroot": (frozenset(), 1),
    "flock": (frozenset({"-w", "-E"}), 1),
    "taskset": (frozenset(), 1),
    "chrt": (frozenset(), 1),
    **{name: (frozenset(), 0) for name in (
        "command", "builtin", "nohup", "setsid", "busybox", "unbuffer", "strace", "nsenter",
        "unshare", "setpriv", "caffeinate",
    )},
}  # fmt: skip
_POWER = frozenset({"shutdown", "reboot", "halt", "poweroff"})
_POWER_VERBS = frozenset({"poweroff", "reboot", "halt", "kexec"})
_HARMLESS_DEVICES = ("/dev/null", "/dev/zero", "/dev/stdout", "/dev/stderr", "/dev/fd/")
_DISK = re.compile(
    r"/dev/(sd|hd|vd|xvd|nvme|mmcblk|loop|dm-|md\d|mapper/|disk/|sr\d|mem$|kmem$|port$)"
)
_DISK_WRITERS = frozenset({
    "truncate", "shred", "wipefs", "blkdiscard", "mkswap", "fdisk", "sfdisk", "sgdisk",
    "parted", "cp", "tee", "mv", "ln", "install", "badblocks",
})  # fmt: skip
_FIND_CHANGERS = frozenset({"rm", "shred", "chmod", "chown", "chgrp", "mv", "truncate", "dd"})
_DOWNLOADERS = frozenset({"curl", "wget", "fetch", "nc", "ncat", "socat", "aria2c"})
_UNPACKERS = frozenset({"gunzip", "zcat", "bzcat", "xzcat", "unxz", "uudecode", "rev", "zstdcat"})
_KILL_EVERYTHING = {"-1": "-1 signals every process", "0": "0 signals its whole group",
                    "1": "1 is init"}  # fmt: skip
_MATCH_ALL = frozenset({"", ".", ".*", ".+", "^", "$", "^.*$", "^.*"})
_GLOB = re.compile(r"[*?\[]")


def dangers(line: CommandLine, cwd: str, depth: int = 0) -> Iterator[str]:
    """Why the parsed command line must not run (nothing when it may); ``cwd`` is the
    directory it starts in."""
    for function in line.functions:
        if function.calls_itself and function.forks:
            yield f"the function {function.name!r} calls itself in the background: a fork bomb"
    for target in line.writes:
        if _DISK.match(target):
            yield f"it writes to the disk device {target}"
    for index, raw in enumerate(line.commands):
        words = unwrapped(raw)
        words, hidden = _substituted(words)
        if hidden:
            yield hidden
        if not words:
            continue
        name = posixpath.basename(words[0])
        if name in ("cd", "pushd"):
            cwd = _changed_dir(cwd, words[1:])
            continue
        yield from _command_dangers(words, cwd, depth)
        if name in _SHELLS:
            yield from _stdin_program(line, index, words, cwd, depth)


def _program_dangers(text: str, cwd: str, depth: int) -> Iterator[str]:
    if depth >= _MAX_DEPTH:
        yield "it nests shells too deeply for the checks to read"
        return
    yield from dangers(parse(text), cwd, depth + 1)


# --- how a command is spelled -----------------------------------------------------------------


def unwrapped(words: list[str]) -> list[str]:
    rest = list(words)
    while rest and (spec := _WRAPPERS.get(posixpath.basename(rest[0]))):
        valued, positional = spec
        name = posixpath.basename(rest.pop(0))
        while rest and (rest[0].startswith("-") or (name in ("env", "sudo") and "=" in rest[0])):
            option = rest.pop(0)
            if option == "--":
                break
            if name == "env" and option in ("-S", "--split-string") and rest:
                rest = [*_split(rest.pop(0)), *rest]  # env -S 'rm -rf /': one word, split
            elif option in valued and rest:
                rest.pop(0)
        del rest[:positional]
    return rest


def _split(text: str) -> list[str]:
    try:
        return shlex.split(text)
    except ValueError:
        return text.split()


def _substituted(words: list[str]) -> tuple[list[str], str | None]:
    """``$(echo rm -rf /)`` as a command is ``rm -rf /``; a program it downloads or
    decodes cannot be read (the second value says why it is refused)."""
    if not words:
        return words, None
    first = words[0]
    if first.startswith("$(") and first.endswith(")"):
        inner = first[2:-1]
    elif len(first) > 1 and first.startswith("`") and first.endswith("`"):
        inner = first[1:-1]
    else:
        return words, None
    produced = parse(inner).commands
    if any(_hides(unwrapped(c)) for c in produced):
        return [], "it runs a program it downloads or decodes, which cannot be checked"
    if len(produced) == 1 and produced[0] and produced[0][0] in ("echo", "printf"):
        return [*_split(" ".join(produced[0][1:])), *words[1:]], None
    return words, None


def _hides(words: list[str]) -> bool:
    """Whether ``words`` outputs program text nobody can read before it runs."""
    if not words:
        return False
    name, args = posixpath.basename(words[0]), words[1:]
    flags = {a for a in args if a.startswith("-")}
    if name in _DOWNLOADERS or name in _UNPACKERS:
        return True
    if name in ("base64", "base32", "basenc"):
        return bool(flags & {"-d", "-D", "--decode"})
    if name == "xxd":
        return any(a.startswith("-r") for a in flags)
    if name in ("gzip", "bzip2", "xz", "zstd"):
        return bool(flags & {"-d", "--decompress", "-dc", "-cd"})
    return name == "openssl" and "-d" in flags


def _changed_dir(cwd: str, args: list[str]) -> str:
    targets = [a for a in args if not a.startswith("-")]
    if not targets:
        return os.path.expanduser("~")
    return posixpath.normpath(posixpath.join(cwd, _expanded(targets[0])))


def _expanded(word: str) -> str:
    return os.path.expandvars(os.path.expanduser(word))


def _absolute(target: str, cwd: str) -> str:
    squeezed = re.sub(r"/+", "/", _expanded(target))
    return posixpath.normpath(posixpath.join(cwd, squeezed))


def _sweeping(target: str, cwd: str) -> bool:
    """``/``, a top-level directory or ``/*``, home or ``~/*``: too much to delete."""
    path = _absolute(target, cwd)
    home = posixpath.normpath(os.path.expanduser("~"))
    parent = posixpath.dirname(path)
    return parent == "/" or path == home or (parent == home and bool(_GLOB.search(path)))


# --- what a command does ----------------------------------------------------------------------


def _command_dangers(words: list[str], cwd: str, depth: int) -> Iterator[str]:
    name, args = posixpath.basename(words[0]), words[1:]
    if name == "rm":
        yield from _rm_dangers(args, cwd)
    elif name == "find":
        yield from _find_dangers(args, cwd, depth)
    elif name in ("kill", "pkill", "killall", "killall5"):
        yield from _kill_dangers(name, args)
    elif name in ("chmod", "chown", "chgrp"):
        yield from _ownership_dangers(name, args, cwd)
    elif name.startswith("mkfs") or name in ("mke2fs", "wipefs"):
        yield f"{name} formats a file system"
    elif name == "dd" and any(_writes_device(arg) for arg in args):
        yield "dd writes to a device"
    elif _powers_off(name, set(args)):
        yield "it would shut down or restart the machine"
    if name in _DISK_WRITERS and (disk := next((a for a in args if _DISK.match(a)), None)):
        yield f"{name} would write to the disk device {disk}"
    yield from _nested_dangers(name, args, cwd, depth)


def _nested_dangers(name: str, args: list[str], cwd: str, depth: int) -> Iterator[str]:
    """The program text a shell, ``su -c``, ``flock -c`` or ``eval`` is given."""
    program: str | None = None
    if name == "eval":
        program = " ".join(args)
    elif name in _SHELLS:
        program = _shell_program(args)
        script = next((a for a in args if not a.startswith("-")), "")
        if program is None and script.startswith("<(") and _hides_text(script[2:-1]):
            yield "it runs a program it downloads or decodes, which cannot be checked"
    elif name in ("su", "flock", "runuser") and "-c" in args[:-1]:
        program = args[args.index("-c") + 1]
    elif name in _SOURCES and args and args[0].startswith("<(") and _hides_text(args[0][2:-1]):
        yield "it runs a program it downloads or decodes, which cannot be checked"
    if program is not None:
        yield from _program_dangers(program, cwd, depth)


def _shell_program(args: list[str]) -> str | None:
    """The text after ``-c`` (``-c``, ``-lc``, ``-ec`` ...), or None for a script/stdin."""
    wants_text = False
    for arg in args:
        if arg == "--":
            continue
        if arg.startswith("-") and not arg.startswith("--") and len(arg) > 1:
            wants_text = wants_text or "c" in arg[1:]
            continue
        if arg.startswith("+"):
            continue
        return arg if wants_text else None
    return None


def _stdin_program(
    line: CommandLine, index: int, words: list[str], cwd: str, depth: int
) -> Iterator[str]:
    """A shell with no ``-c`` and no script reads its program from its input."""
    args = words[1:]
    if _shell_program(args) is not None or any(not a.startswith(("-", "+")) for a in args):
        return
    if (text := line.here_strings.get(index)) is not None:
        yield from _program_dangers(text, cwd, depth)
    feeder = line.fed_by.get(index)
    if feeder is None:
        return
    source = unwrapped(line.commands[feeder])
    if _hides(source):
        yield "it pipes a program it downloads or decodes into a shell, which cannot be checked"
    elif source and posixpath.basename(source[0]) in ("echo", "printf"):
        yield from _program_dangers(" ".join(source[1:]), cwd, depth)


def _hides_text(text: str) -> bool:
    return any(_hides(unwrapped(c)) for c in parse(text).commands)


def _rm_dangers(args: list[str], cwd: str) -> Iterator[str]:
    short, long, targets = _split_options(args)
    recursive = bool({"r", "R"} & short) or any(_abbreviates(o, "--recursive", 4) for o in long)
    if any(_abbreviates(o, "--no-preserve-root", 3) for o in long):
        yield "rm --no-preserve-root may delete the whole file system"
    elif recursive and (roots := [t for t in targets if _sweeping(t, cwd)]):
        yield f"rm -r of {roots[0]!r} (in {cwd}) deletes everything below it"


def _find_dangers(args: list[str], cwd: str, depth: int) -> Iterator[str]:
    starts: list[str] = []
    for arg in args:
        if arg.startswith(("-", "(", "!", ")")):
            break
        starts.append(arg)
    changes = "-delete" in args
    for segment in _exec_segments(args):
        changes = changes or posixpath.basename(segment[0]) in _FIND_CHANGERS
        yield from _command_dangers(segment, cwd, depth)
    if changes and (wide := [s for s in starts or ["."] if _sweeping(s, cwd)]):
        yield f"find {wide[0]} deletes or changes files across the whole of {wide[0]}"


def _exec_segments(args: list[str]) -> Iterator[list[str]]:
    index = 0
    while index < len(args):
        if args[index] in ("-exec", "-execdir", "-ok", "-okdir"):
            end = index + 1
            while end < len(args) and args[end] not in (";", "+", "\\;"):
                end += 1
            if end > index + 1:
                yield args[index + 1 : end]
            index = end
        index += 1


def _kill_dangers(name: str, args: list[str]) -> Iterator[str]:
    if name == "killall5":
        yield "killall5 signals every process"
        return
    if name == "kill":
        for target in _kill_targets(args):
            if why := _KILL_EVERYTHING.get(target.lstrip("+")):
                yield f"kill {target}: {why}"
        return
    valued = {"-u", "-U", "-g", "-G", "-P", "-s", "-t", "-F", "--signal", "--euid", "--uid"}
    patterns: list[str] = []
    users: list[str] = []
    numeric_flags = 0
    rest = iter(args)
    for arg in rest:
        if arg in valued:
            value = next(rest, "")
            if arg in ("-u", "-U", "--euid", "--uid"):
                users.append(value)
        elif arg.startswith("-"):
            numeric_flags += arg[1:].isdigit()
        else:
            patterns.append(arg)
    if any(p in _MATCH_ALL for p in patterns):
        yield f"{name} with a pattern matching every process"
    elif not patterns and ({"root", "0"} & set(users) or numeric_flags > 1):
        yield f"{name} without a name signals every process (of root)"


def _kill_targets(args: list[str]) -> Iterator[str]:
    signal_given = False
    rest = iter(args)
    for arg in rest:
        if arg == "--":
            yield from rest
            return
        if arg in ("-s", "-n"):
            next(rest, None)
            signal_given = True
        elif arg.startswith("-") and not signal_given:
            signal_given = True  # -9, -KILL, -SIGTERM; `kill -1 PID` is a SIGHUP
        else:
            yield arg


def _ownership_dangers(name: str, args: list[str], cwd: str) -> Iterator[str]:
    short, long, targets = _split_options(args)
    recursive = "R" in short or "--recursive" in long
    for target in targets[1:]:  # the first is the mode or owner
        if _absolute(target, cwd) == "/" or (recursive and _sweeping(target, cwd)):
            yield f"{name} -R of {target!r} changes files across the system"
            return


def _powers_off(name: str, args: set[str]) -> bool:
    if name in ("init", "telinit"):
        return bool({"0", "6"} & args)
    return name in _POWER or (name == "systemctl" and bool(_POWER_VERBS & args))


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


def _writes_device(arg: str) -> bool:
    return arg.startswith("of=/dev/") and not arg[3:].startswith(_HARMLESS_DEVICES)
