"""What every ``shiyi`` command shares: loading settings, failing with one clear line."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn, Protocol, TypeVar

import typer

if TYPE_CHECKING:
    from shiyi.config import Settings


class _Closable(Protocol):
    def close(self) -> None: ...


C = TypeVar("C", bound=_Closable)


def fail(message: str, code: int = 2) -> NoReturn:
    typer.echo(f"shiyi: error: {message}", err=True)
    raise typer.Exit(code)


def load(config: Path | None = None, workspace: Path | None = None) -> Settings:
    """Effective settings; a config problem ends the command with its message."""
    from shiyi.config import load_settings
    from shiyi.errors import ConfigError

    if config is not None:
        if not config.expanduser().is_file():
            fail(f"--config {config} is not a file: give the path of a shiyi.yaml, or leave it out")
        os.environ["SHIYI_CONFIG"] = str(config)
    overrides = {"workspace": workspace} if workspace is not None else {}
    try:
        settings = load_settings(**overrides)
    except ConfigError as exc:
        fail(str(exc))
    if settings.home is not None and (problem := unusable_home(settings.home)):
        fail(
            f"the data dir {settings.home} {problem}: set SHIYI_HOME (or home: in "
            "shiyi.yaml) to a folder you can write"
        )
    return settings


def unusable_home(home: Path) -> str:
    """What keeps ``home`` from being the data dir ("" when nothing): a file in its place,
    or no folder it could be made in that this user may write."""
    if home.exists():
        return "" if home.is_dir() else "is a file, not a folder"
    ancestor = home.parent
    while not ancestor.exists() and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        return f"cannot be made: {ancestor} is a file, not a folder"
    if not os.access(ancestor, os.W_OK | os.X_OK):
        return f"cannot be made: {ancestor} is not writable"
    return ""


def guard(action: object) -> int:
    """Run a command body; shiyi errors become one clear line and a non-zero status."""
    from shiyi.errors import ShiyiError

    try:
        result = action()  # type: ignore[operator]
    except ShiyiError as exc:
        typer.echo(f"shiyi: error: {exc}", err=True)
        return 2
    return int(result or 0)


@contextmanager
def opened_or_fail(open_: Callable[[], C]) -> Iterator[C]:
    """What ``open_`` opens, closed afterwards; a shiyi error while opening or using it, or
    an OS error while opening it (a data dir that cannot be made), ends the command with its
    message."""
    from shiyi.errors import ShiyiError

    try:
        resource = open_()
    except ShiyiError as exc:
        fail(str(exc))
    except OSError as exc:  # the data dir cannot be made or read: say where and why
        where = f" {exc.filename}" if exc.filename else ""
        fail(
            f"cannot open{where}: {exc.strerror or exc}; set SHIYI_HOME (or home: in "
            "shiyi.yaml) to a folder you can write"
        )
    try:
        yield resource
    except ShiyiError as exc:
        fail(str(exc))
    finally:
        resource.close()
