"""Where code lives that runs at the next start: the tools may read it, never change it.

A served model without bash once wrote ``.venv/lib/python3.11/site-packages/x.pth`` with
``write_file``; the next Python start there ran it, with the server token in its
environment.  ``python -m shiyi`` run from the workspace likewise imports a ``yaml.py`` the
model wrote there before the real one.  So these are refused for writing, editing, moving and
deleting (reading stays allowed), unless ``tools.allow_code_paths`` says otherwise:

* anything inside a virtualenv (a directory holding ``pyvenv.cfg``) or a ``site-packages`` /
  ``dist-packages`` directory, any ``*.pth`` file and ``pyvenv.cfg`` itself;
* ``__pycache__`` and ``*.pyc`` (compiled code runs in place of its source);
* ``.git`` itself and everything in it: ``.git/hooks/`` and ``.git/config`` (hooks,
  ``core.hooksPath`` and ``core.fsmonitor`` run programs at the next git command), and the
  files that point git at config and hooks elsewhere (``commondir``, a submodule's
  ``modules/*/config`` and ``hooks``, ``config.worktree``); git itself still writes there
  (what bash does to those files anyway is put back: :mod:`.builtins.git_guard`);
* ``sitecustomize.py`` / ``usercustomize.py`` anywhere (run at every Python start);
* a top-level module that shadows one Python would import: a ``.py`` file (or extension, or
  package) directly in a directory on shiyi's ``sys.path`` or its working directory, named
  like a standard-library module or an installed distribution's top-level name.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

CODE_ADVICE = (
    "the agent may read code that runs at the next start but not change it. Ask the user "
    "to make this change, or to set tools.allow_code_paths: true"
)
_SITE_DIRS = frozenset({"site-packages", "dist-packages"})
_STARTUP_FILES = frozenset({"sitecustomize.py", "usercustomize.py"})
_MODULE_SUFFIXES = (".py", ".pyc", ".pyw", ".so", ".pyd")
_PACKAGE_INIT = "__init__.py"


def code_reason(path: Path, module_dirs: Iterable[Path]) -> str | None:
    """Why changing the absolute ``path`` could plant code that runs later, or None.

    ``module_dirs``: the resolved directories whose top-level modules Python imports first
    (see :func:`module_dirs`).  Costs a few ``stat`` calls (the virtualenv lookup)."""
    return _by_name(path) or _virtualenv_reason(path) or _shadow_reason(path, module_dirs)


def _by_name(path: Path) -> str | None:
    # Case folded: on macOS and Windows ``.GIT/Hooks`` and ``X.PTH`` are the same files.
    name, parts = path.name.casefold(), tuple(p.casefold() for p in path.parts)
    if name.endswith(".pth"):
        return "a .pth file runs code at every Python start"
    if name == "pyvenv.cfg":
        return "pyvenv.cfg configures a virtualenv's Python"
    if name in _STARTUP_FILES:
        return f"{name} runs at every Python start"
    if "__pycache__" in parts or name.endswith(".pyc"):
        return "compiled Python (__pycache__, .pyc) runs in place of its source"
    if site := next((p for p in parts if p in _SITE_DIRS), None):
        return f"it is in a {site} directory, whose packages Python imports"
    return _git_reason(parts)


def _git_reason(parts: tuple[str, ...]) -> str | None:
    for index, part in enumerate(parts):
        if part != ".git":
            continue
        below = parts[index + 1 :]
        if not below:
            return "a .git file or directory can point git at hooks it runs"
        if below[0] == "hooks":
            return "git runs the programs in .git/hooks"
        if below == ("config",):
            return ".git/config can name programs git runs (core.hooksPath, core.fsmonitor)"
        return (
            "git reads .git as its own: commondir, a submodule's modules/*/config and "
            "hooks, config.worktree can point it at config and hooks that run programs"
        )
    return None


def _virtualenv_reason(path: Path) -> str | None:
    for directory in (path, *path.parents):
        if (directory / "pyvenv.cfg").is_file():
            return f"it is in the virtualenv {directory}, whose Python and packages run as code"
    return None


def _shadow_reason(path: Path, dirs: Iterable[Path]) -> str | None:
    for directory in dirs:
        if path.parent == directory:
            module = _module_name(path.name)
        elif path.parent.parent == directory and (
            path.name == _PACKAGE_INIT or (path.parent / _PACKAGE_INIT).is_file()
        ):
            module = path.parent.name  # a file of a package there
        else:
            continue
        if module is not None and module in shadowable_modules():
            return (
                f"it would shadow the Python module {module!r}, which Python imports from "
                f"{directory} before the installed one (python -m shiyi run from there)"
            )
    return None


def _module_name(name: str) -> str | None:
    """The module a top-level entry called ``name`` would provide, or None (a ``.txt``)."""
    stem, dot, _ = name.partition(".")
    if not dot:
        return stem  # a package directory (or a file that could become one)
    return stem if name.endswith(_MODULE_SUFFIXES) else None


def module_dirs(cwd: Path | None = None) -> frozenset[Path]:
    """Where Python looks for top-level modules before the installed ones, for shiyi: the
    directories on ``sys.path`` other than site-packages (the installed ones) and the
    working directory (``python -m shiyi`` puts it first)."""
    found = {(cwd or Path.cwd()).resolve()}
    for entry in sys.path:
        path = Path(entry or ".").resolve()
        if path.is_dir() and path.name not in _SITE_DIRS:
            found.add(path)
    return frozenset(found)


@functools.cache
def shadowable_modules() -> frozenset[str]:
    """Standard-library module names and the top-level names installed in site-packages
    (one directory listing per site dir: computed once, in milliseconds)."""
    names = set(sys.stdlib_module_names) | {"shiyi"}
    for entry in sys.path:
        if Path(entry).name in _SITE_DIRS:
            names.update(_installed_names(entry))
    return frozenset(names)


def _installed_names(site_dir: str) -> Iterator[str]:
    try:
        entries = os.listdir(site_dir)
    except OSError:
        return
    for entry in entries:
        if entry.endswith((".dist-info", ".egg-info", ".pth")) or entry == "__pycache__":
            continue
        module = _module_name(entry)
        if module and module.isidentifier():
            yield module


def code_locations(root: Path) -> list[Path]:
    """The code locations that exist in the top of the workspace ``root``: what a sandbox
    binds read-only (a full walk would cost every command dearly on a large tree)."""
    found: list[Path] = []
    git = root / ".git"
    if git.is_file():
        found.append(git)
    found += [p for p in (git / "hooks", git / "config") if p.exists()]
    try:
        entries = sorted(root.iterdir())
    except OSError:
        return found
    shadowing = (root,) if root in module_dirs() else ()
    for entry in entries:
        if entry.name == ".git":
            continue
        venv = entry.is_dir() and (entry / "pyvenv.cfg").is_file()
        if venv or _by_name(entry) or _shadow_reason(entry, shadowing):
            found.append(entry)
    return found
