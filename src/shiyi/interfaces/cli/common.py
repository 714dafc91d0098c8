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
        os.environ["SHIYI_CONFIG"] = str(config)
    overrides = {"workspace": workspace} if workspace is not None else {}
    try:
        return load_settings(**overrides)
    except ConfigError as exc:
        fail(str(exc))


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
    """What ``open_`` opens, closed afterwards; a shiyi error while opening or using it ends
    the command with its message."""
    from shiyi.errors import ShiyiError

    try:
        resource = open_()
    except ShiyiError as exc:
        fail(str(exc))
    try:
        yield resource
    except ShiyiError as exc:
        fail(str(exc))
    finally:
        resource.close()
