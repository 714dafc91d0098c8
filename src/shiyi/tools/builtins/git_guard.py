"""Put back what a bash command did to the files through which git finds programs to run.

The file tools and bash's parsed checks refuse every write inside ``.git``
(:mod:`shiyi.tools.code_paths`), but a shell can spell a name the checks cannot see
(``echo ../evil > "$(printf .gi)t/commondir"``), plain git writes them too
(``git -C sub config core.fsmonitor ...``), and a sandbox can bind read-only only what
exists.  A new ``commondir`` naming a directory whose ``config`` sets ``core.fsmonitor``
runs that program at the user's next ``git status``; so does a nested repository's config,
once the outer one tracks it.  So before each command the files that name programs or point
git at them are recorded, in every git directory of the workspace, and after it each one
the command created, changed or deleted is put back (a created one removed):

* in each git directory (every ``.git`` directory in the workspace, and inside it each
  ``worktrees/*`` and each directory below ``modules/``): ``config``, ``config.worktree``,
  ``commondir`` and ``hooks/`` with everything in it (``*.sample`` files aside: git never
  runs them);
* every ``.git`` file (``gitdir: <path>``) in the workspace.

A repository the command created (``git init``) is guarded the same way: it loses its
``config`` and hooks, which git does without.  Two creations git makes for itself are kept:
a ``worktrees/<name>/commondir`` naming its own repository, and a ``.git`` file naming a
guarded ``.git/worktrees/*`` or ``.git/modules/*`` directory (``git worktree add``).

In the sandbox the guarded files and hook directories that exist are also bound read-only
(:meth:`GitSnapshot.read_only`), so writing one fails at once.  Not covered: without a
sandbox, a background job the command left running can write after the put-back; a
``core.hooksPath`` or ``include.path`` naming a directory in the workspace is an ordinary
file there; past :data:`MAX_ENTRIES` inside the git directories the rest is unguarded.

Everything is read and put back through directory descriptors opened without following
links, from the workspace root down: a link found on the way is removed, never followed, so
putting back writes nothing outside the workspace, and only bytes recorded from the same
place.  Cost: the walk for ``.git`` entries (the sandbox's search for secret files, which
finds them on the way) and again after the command, plus reading the guarded files.  On
shiyi's own repository (1,200 entries, 3 linked worktrees, 2026-12-06)
``bench/git_guard_bench.py`` gives 3.4 ms per command without a sandbox, 1.9 ms in one (the
first walk was made anyway); end to end a ``true`` took 5 ms and 3 ms longer (median of 200,
of 20-40 ms).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import posixpath
import shutil
import stat
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

log = logging.getLogger(__name__)

Key = tuple[str, ...]
"""A path as its components below the workspace root."""

GUARDED_FILES = ("config", "config.worktree", "commondir")
HOOKS = "hooks"
MAX_ENTRIES = 10_000
"""Entries looked at inside the git directories per snapshot, at most (a repository has a
few dozen; many submodules a few hundred).  Past it the rest is not guarded, and the tool
result says so."""
MAX_DEPTH = 8
"""Nesting of submodules (``modules/a/modules/b``) and of directories in ``hooks`` followed."""
_MAX_BYTES = 1_000_000
"""A guarded file larger than this is kept as a digest: changed, it can only be removed."""
_FLAGS = os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | _FLAGS
_SUPPORTED = os.open in os.supports_dir_fd and os.scandir in os.supports_fd


@dataclass(frozen=True, slots=True)
class State:
    """What is at a guarded path: a directory, a link (``content`` its target), a regular
    file (its bytes and mode, or a digest when ``whole`` is False) or something else."""

    kind: str
    content: bytes = b""
    mode: int = 0
    whole: bool = True


_DIR = State("dir")


@dataclass(slots=True)
class GitSnapshot:
    """The guarded paths of one workspace at one moment."""

    states: dict[Key, State] = field(default_factory=dict)
    gitdirs: set[Key] = field(default_factory=set)
    """The git directories (and ``.git`` files) among ``states``."""
    owner: dict[Key, Key] = field(default_factory=dict)
    """For each guarded path inside a git directory, that directory."""
    complete: bool = True
    """False when :data:`MAX_ENTRIES` stopped the walk."""

    def read_only(self, root: Path) -> list[Path]:
        """The guarded files, hook directories and ``.git`` files that exist (a sandbox
        can bind them read-only); every component of each is a real directory, no link."""
        found = []
        for key, state in self.states.items():
            if key in self.gitdirs:
                bind = key[-1] == ".git" and state.kind == "file"
            else:
                rel = key[len(self.owner[key]) :]
                bind = len(rel) == 1 and (
                    (rel[0] in GUARDED_FILES and state.kind == "file")
                    or (rel[0] == HOOKS and state.kind == "dir")
                )
            if bind:
                found.append(root.joinpath(*key))
        return sorted(found)


@dataclass(frozen=True, slots=True)
class Restored:
    """What putting back did: the paths changed back, and whether every git directory was
    looked at."""

    paths: list[Key]
    complete: bool = True

    def note(self, root: Path) -> str | None:
        """A sentence for the tool result, or None when nothing was done."""
        notes = []
        if self.paths:
            names = ", ".join(posixpath.join(*key) for key in self.paths)
            notes.append(
                f"the command changed {names}: files through which git finds programs to run "
                "(hooks, core.fsmonitor, commondir and the like) at the user's next git "
                "command. They were put back as they were (created ones removed: a repository "
                "the command made keeps no config or hooks, git works without them). The agent "
                "may use git (add, commit, branch ...) but not change git's config or hooks, "
                "nor make a repository that has them; ask the user to make this change "
                "themselves"
            )
        if not self.complete:
            notes.append(
                f"the git directories in {root} hold more than {MAX_ENTRIES} entries; only "
                "the first were checked for changes to git's config and hooks"
            )
        return ". ".join(notes) or None


def take(root: Path, git_entries: Iterable[Path]) -> GitSnapshot | None:
    """The guarded paths of the workspace ``root`` as they are now; ``git_entries``: the
    ``.git`` entries a walk of it found (the one at the top is always looked at).  None
    where the platform cannot open paths relative to a directory without following links."""
    if not _SUPPORTED:
        return None
    keys: set[Key] = {(".git",)}
    for entry in git_entries:
        with contextlib.suppress(ValueError):
            keys.add(entry.relative_to(root).parts)
    snapshot = GitSnapshot()
    try:
        root_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return snapshot
    try:
        _Scanner(root_fd, snapshot).scan(sorted(keys, key=len))
    finally:
        os.close(root_fd)
    return snapshot


def restore(root: Path, before: GitSnapshot, git_entries: Iterable[Path]) -> Restored:
    """Put every guarded path of ``root`` back as ``before`` recorded it; what was changed
    back.  ``git_entries``: the ``.git`` entries a walk found now (new repositories)."""
    after = take(root, git_entries)
    if after is None:
        return Restored([])
    changed = sorted(
        (k for k in before.states.keys() | after.states.keys() if _differs(k, before, after)),
        key=lambda k: (len(k), k),
    )
    if not changed:
        return Restored([], before.complete and after.complete)
    put_back: list[Key] = []
    try:
        root_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return Restored([])
    try:
        putter = _Putter(root, root_fd, before, after)
        for key in changed:
            try:
                if putter.put_back(key):
                    put_back.append(key)
            except OSError as exc:
                log.warning("could not put back %s in %s: %s", posixpath.join(*key), root, exc)
    finally:
        os.close(root_fd)
    for key in put_back:
        log.warning(
            "a bash command changed %s, through which git runs programs: put back",
            root.joinpath(*key),
        )
    return Restored(put_back, before.complete and after.complete)


def _differs(key: Key, before: GitSnapshot, after: GitSnapshot) -> bool:
    old, new = before.states.get(key), after.states.get(key)
    if old == new:
        return False
    if key in after.gitdirs or key in before.gitdirs:
        # A git directory that went away, or a new one: only what is in it counts.
        return not (new is None and old == _DIR) and new != _DIR
    return True


# --- reading -----------------------------------------------------------------------------


class _Scanner:
    def __init__(self, root_fd: int, snapshot: GitSnapshot) -> None:
        self.root_fd = root_fd
        self.snapshot = snapshot
        self.seen = 0
        self.visited: set[Key] = set()

    def scan(self, gitdirs: list[Key]) -> None:
        # Breadth first: the top repository's own files before any submodule's, so that a
        # crowd of directories made in modules/ cannot push them past the limit.
        pending: deque[tuple[Key, int]] = deque((key, 0) for key in gitdirs)
        while pending:
            key, depth = pending.popleft()
            if key in self.visited:
                continue
            self.visited.add(key)
            pending.extend(self._gitdir(key, depth))

    def _count(self) -> bool:
        self.seen += 1
        if self.seen > MAX_ENTRIES:
            if self.snapshot.complete:
                log.warning("more than %d entries in the git directories", MAX_ENTRIES)
            self.snapshot.complete = False
            return False
        return True

    def _gitdir(self, key: Key, depth: int) -> Iterator[tuple[Key, int]]:
        """Record the git directory (or ``.git`` file) ``key``; the ones inside it."""
        with _opened(self.root_fd, key[:-1]) as parent:
            if parent is None or not self._count():
                return
            state = _state(parent, key[-1])
            if state is None:
                return
            self.snapshot.states[key] = state
            self.snapshot.gitdirs.add(key)
            if state.kind != "dir":
                return
            with _opened(parent, key[-1:]) as fd:
                if fd is None:
                    return
                for name in GUARDED_FILES:
                    self._record(fd, key, (name,))
                self._hooks(fd, key, (HOOKS,), 0)
                if depth < MAX_DEPTH:
                    yield from self._children(fd, key, "worktrees", depth, nested=False)
                    yield from self._children(fd, key, "modules", depth, nested=True)

    def _record(self, fd: int, owner: Key, rel: Key) -> State | None:
        if not self._count():
            return None
        state = _state_at(fd, rel)
        if state is not None:
            key = owner + rel
            self.snapshot.states[key] = state
            self.snapshot.owner[key] = owner
        return state

    def _hooks(self, fd: int, owner: Key, rel: Key, depth: int) -> None:
        state = self._record(fd, owner, rel)
        if state is None or state.kind != "dir" or depth >= MAX_DEPTH:
            return
        for name in _names(fd, rel):
            if not name.endswith(".sample"):
                self._hooks(fd, owner, (*rel, name), depth + 1)

    def _children(
        self, fd: int, owner: Key, name: str, depth: int, *, nested: bool
    ) -> Iterator[tuple[Key, int]]:
        """``worktrees/*`` and (``nested``: at any depth, names may hold a slash) the
        directories below ``modules/``: each is a git directory."""
        pending: list[Key] = [(name,)]
        while pending:
            rel = pending.pop()
            if not self._count():
                return
            state = _state_at(fd, rel)
            if state is None:
                continue
            if len(rel) == 1:  # worktrees/ or modules/ itself: a link there is removed
                self.snapshot.states[owner + rel] = state
                self.snapshot.gitdirs.add(owner + rel)
            if state.kind != "dir":
                continue
            for child in _names(fd, rel):
                below = (*rel, child)
                yield owner + below, depth + 1
                if nested and len(below) <= MAX_DEPTH and _state_at(fd, (*below, "HEAD")) is None:
                    pending.append(below)  # modules/a/b: the submodule "a/b"


def _names(fd: int, rel: Key) -> list[str]:
    with _opened(fd, rel) as inner:
        if inner is None:
            return []
        try:
            return sorted(entry.name for entry in os.scandir(inner))
        except OSError:
            return []


def _state_at(fd: int, rel: Key) -> State | None:
    with _opened(fd, rel[:-1]) as parent:
        return None if parent is None else _state(parent, rel[-1])


def _opened(fd: int, rel: Key) -> contextlib.AbstractContextManager[int | None]:
    """``rel`` below the directory ``fd``, every component opened without following a
    link; None when one is missing, a link or not a directory."""
    return _walk(fd, rel, make=False)


@contextlib.contextmanager
def _walk(fd: int, rel: Key, *, make: bool) -> Iterator[int | None]:
    """``rel`` below ``fd`` opened one component at a time without following links;
    ``make``: a missing component, or a link or file in the way, becomes a directory."""
    current = os.dup(fd)
    try:
        for part in rel:
            inner = _step(current, part, make)
            if inner is None:
                yield None
                return
            os.close(current)
            current = inner
        yield current
    finally:
        os.close(current)


def _step(fd: int, part: str, make: bool) -> int | None:
    try:
        return os.open(part, _DIR_FLAGS, dir_fd=fd)
    except OSError:
        if not make:
            return None
    try:
        _remove(fd, part)
        os.mkdir(part, 0o755, dir_fd=fd)
        return os.open(part, _DIR_FLAGS, dir_fd=fd)
    except OSError:
        return None


def _state(fd: int, name: str) -> State | None:
    try:
        info = os.stat(name, dir_fd=fd, follow_symlinks=False)
    except (OSError, ValueError):
        return None
    if stat.S_ISDIR(info.st_mode):
        return _DIR
    if stat.S_ISLNK(info.st_mode):
        try:
            return State("link", os.fsencode(os.readlink(name, dir_fd=fd)))
        except OSError:
            return State("link")
    if not stat.S_ISREG(info.st_mode):
        return State("other", mode=stat.S_IFMT(info.st_mode))
    mode = stat.S_IMODE(info.st_mode)
    try:
        file = os.open(name, os.O_RDONLY | os.O_NONBLOCK | _FLAGS, dir_fd=fd)
    except OSError:
        return State("file", b"", mode, whole=False)
    with os.fdopen(file, "rb") as handle:
        data = handle.read(_MAX_BYTES + 1)
        if len(data) <= _MAX_BYTES:
            return State("file", data, mode)
        digest = hashlib.sha256(data)
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
        return State("file", digest.digest(), mode, whole=False)


# --- putting back ------------------------------------------------------------------------


class _Putter:
    def __init__(self, root: Path, root_fd: int, before: GitSnapshot, after: GitSnapshot) -> None:
        self.root = root
        self.root_fd = root_fd
        self.before = before
        self.after = after
        self.replaced: set[Key] = set()
        """Git directories a link or file had taken, made directories again."""

    def put_back(self, key: Key) -> bool:
        """Make ``key`` what ``before`` recorded; whether anything was changed."""
        old, new = self.before.states.get(key), self.after.states.get(key)
        if key in self.before.gitdirs or key in self.after.gitdirs:
            return self._gitdir(key, old, new)
        owner = self.after.owner.get(key) or self.before.owner[key]
        if self.after.states.get(owner) != _DIR and owner not in self.replaced:
            return False  # its git directory is gone: nothing in it is read
        if new is not None and (_kept(key, new, owner) or (old is None and new == _DIR)):
            return False  # a new directory: what is in it is looked at on its own
        with _opened(self.root_fd, key[: len(owner)]) as owner_fd:
            if owner_fd is None:
                return False
            inside = key[len(owner) : -1]
            if old is None:
                with _opened(owner_fd, inside) as parent:
                    if parent is not None:
                        _remove(parent, key[-1])
                return True
            with _made(owner_fd, inside) as parent:
                if parent is None:
                    return False
                _remove(parent, key[-1])
                _write(parent, key[-1], old)
        return True

    def _gitdir(self, key: Key, old: State | None, new: State | None) -> bool:
        if new is None and (old is None or old.kind != "file"):
            return False  # removed (a worktree pruned): nothing left to read
        gitfile = new is not None and new.kind == "file" and key[-1] == ".git"
        if gitfile and new is not None and self._names_a_guarded_gitdir(key, new):
            return False
        with _opened(self.root_fd, key[:-1]) as parent:
            if parent is None:
                return False
            _remove(parent, key[-1])
            if old is not None:
                _write(parent, key[-1], old)
                if old == _DIR:
                    self.replaced.add(key)
        return True

    def _names_a_guarded_gitdir(self, key: Key, state: State) -> bool:
        """A ``.git`` file (``gitdir: <path>``) naming a guarded directory in
        ``.git/worktrees`` or ``.git/modules`` of the workspace, as ``git worktree add``
        and ``git submodule`` write."""
        text = state.content.decode(errors="replace") if state.whole else ""
        if not text.startswith("gitdir:"):
            return False
        where = Path(self.root, *key[:-1], text[len("gitdir:") :].strip())
        try:
            parts = Path(os.path.normpath(where)).relative_to(self.root).parts
        except ValueError:
            return False  # outside the workspace: not guarded
        inside = any(
            parts[i] == ".git" and parts[i + 1] in ("worktrees", "modules")
            for i in range(len(parts) - 2)
        )
        return inside and parts in self.after.gitdirs and self.after.states.get(parts) == _DIR


def _kept(key: Key, state: State, owner: Key) -> bool:
    """A ``commondir`` of ``<repo>/worktrees/<name>`` naming ``<repo>`` itself: what
    ``git worktree add`` writes, and harmless (git reads the repository's own config)."""
    if key[-1] != "commondir" or len(owner) < 3 or owner[-2] != "worktrees":
        return False
    if state.kind != "file" or not state.whole:
        return False
    where = state.content.decode(errors="replace").strip()
    if not where or os.path.isabs(where):
        return False
    target = posixpath.normpath(posixpath.join(*owner, where))
    return target == posixpath.join(*owner[:-2])


def _made(fd: int, rel: Key) -> contextlib.AbstractContextManager[int | None]:
    """Like :func:`_opened`, making each missing component a directory and replacing a
    link or file in the way by one (inside a git directory: nothing else lives there)."""
    return _walk(fd, rel, make=True)


def _remove(fd: int, name: str) -> None:
    try:
        info = os.stat(name, dir_fd=fd, follow_symlinks=False)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(info.st_mode):
        shutil.rmtree(name, dir_fd=fd)  # by descriptors: links inside are removed, not followed
    else:
        os.unlink(name, dir_fd=fd)


def _write(fd: int, name: str, state: State) -> None:
    if state.kind == "dir":
        os.mkdir(name, 0o755, dir_fd=fd)
    elif state.kind == "link" and state.content:
        os.symlink(os.fsdecode(state.content), name, dir_fd=fd)
    elif state.kind == "file" and state.whole:
        file = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _FLAGS, 0o600, dir_fd=fd)
        with os.fdopen(file, "wb") as handle:
            handle.write(state.content)
            os.fchmod(handle.fileno(), state.mode)
    # A file too large to keep, or a device: removed, not put back.
