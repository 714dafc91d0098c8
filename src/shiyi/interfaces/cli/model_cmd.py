"""``shiyi model pull | list | use``: get a GGUF, see the models at hand, pick the main one."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, TextIO

import typer

from shiyi.interfaces.cli.common import fail, load

model_app = typer.Typer(
    help="Download GGUF models, list the models at hand, choose the main one.",
    no_args_is_help=True,
    rich_markup_mode=None,
)

ConfigOption = Annotated[
    Path | None, typer.Option("--config", "-c", help="Config file (default: ./shiyi.yaml).")
]


class ProgressLine:
    """Bytes, rate and time left on one line of ``out``: redrawn in place on a terminal,
    else a line every ``every`` seconds (logs stay short)."""

    def __init__(self, out: TextIO = sys.stderr, every: float | None = None) -> None:
        self._out = out
        self._tty = out.isatty()
        self._every = every if every is not None else (0.2 if self._tty else 5.0)
        self._shown = -1.0
        self._last = ""

    def __call__(self, done: int, total: int | None, seconds: float) -> None:
        self._last = line = _progress_text(done, total, seconds)
        if seconds - self._shown < self._every and done != total:
            return
        self._shown = seconds
        self._out.write(f"\r{line}\033[K" if self._tty else line + "\n")
        self._out.flush()

    def end(self) -> None:
        if self._tty and self._last:
            self._out.write("\n")
            self._out.flush()


def _progress_text(done: int, total: int | None, seconds: float) -> str:
    rate = done / seconds if seconds > 0 else 0.0
    size = f"{_mb(done)}/{_mb(total)} MB" if total else f"{_mb(done)} MB"
    eta = ""
    if total and rate > 0:
        left = int((total - done) / rate)
        eta = f"  ETA {left // 60}:{left % 60:02d}"
    return f"  {size}  {rate / 1e6:.1f} MB/s{eta}"


def _mb(count: int) -> str:
    return f"{count / 1e6:.1f}"


@model_app.command("pull")
def pull(
    source: Annotated[str, typer.Argument(help="A GGUF URL, or a hub file: org/repo/file.gguf.")],
    sha256: Annotated[
        str | None, typer.Option("--sha256", help="Expected sha256 of the file.")
    ] = None,
    config: ConfigOption = None,
) -> None:
    """Download a GGUF into the models directory (resumes a broken download, checks sha256)."""
    from shiyi.errors import ShiyiError
    from shiyi.llm.catalog import models_dir
    from shiyi.llm.pull import pull as download
    from shiyi.llm.pull import source_url

    settings = load(config)
    progress = ProgressLine()
    try:
        url = source_url(source, settings.model_sources.hub_url)
        typer.echo(f"pulling {url}", err=True)
        got = download(url, models_dir(settings), expected_sha256=sha256, progress=progress)
    except ShiyiError as exc:
        progress.end()
        fail(str(exc), code=1)
    progress.end()
    if got.already_had:
        state = "already pulled"
    elif got.resumed_from:
        state = f"saved (resumed at {_mb(got.resumed_from)} MB)"
    else:
        state = "saved"
    check = (
        f"matches {got.verified_by}"
        if got.verified_by
        else "not verified: no published checksum, pass --sha256 to check"
    )
    typer.echo(f"{state} {got.path}")
    typer.echo(f"sha256 {got.sha256} ({check})")
    typer.echo(f"use it: shiyi model use {got.path.name}")


@model_app.command("list")
def list_models(config: ConfigOption = None) -> None:
    """The packaged model, pulled files and models of servers running here; * is in use."""
    from shiyi.llm.catalog import at_hand, in_use
    from shiyi.llm.discovery import printable
    from shiyi.llm.first_model import pick_main_model

    settings = load(config)
    chosen = pick_main_model(settings)
    main = chosen.settings.model_role("main")
    entries = at_hand(settings)
    marked = False
    for entry in entries:
        mark = "*" if in_use(entry, main) and not marked else " "
        marked = marked or mark == "*"
        typer.echo(f"{mark} {printable(entry.name)}  ({entry.where})")
    if not marked:
        typer.echo(
            f"* {printable(main.model)}  (configured: {main.provider} {main.base_url or ''})"
        )
    if chosen.note:
        typer.echo(chosen.note, err=True)


@model_app.command("use")
def use(
    name: Annotated[
        str,
        typer.Argument(
            help="default, a pulled file's name, a GGUF path, or a model a local server lists."
        ),
    ],
    config: ConfigOption = None,
) -> None:
    """Make a model the main one: writes models.main into the config file in effect."""
    from shiyi.errors import ShiyiError
    from shiyi.llm.catalog import config_target, find_entry, write_main_model
    from shiyi.llm.discovery import printable

    settings = load(config)
    try:
        entry = find_entry(name, settings)
        target = config_target(Path.cwd())
        backup = write_main_model(target, entry.role)
    except (ShiyiError, OSError) as exc:
        fail(str(exc))
    typer.echo(f"main model: {printable(entry.name)} ({entry.where})")
    saved = f" (previous file kept as {backup})" if backup else ""
    typer.echo(f"written to {target}{saved}")
