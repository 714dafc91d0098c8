"""``shiyi scripts ...``: the scripts the agent saved (list, show, run, rm).

The library is plain files in ``<data dir>/scripts``, so ``list``, ``show`` and ``run`` read
them directly, also while ``shiyi serve`` or ``shiyi chat`` owns the data dir.  ``run`` goes
the way the agent's ``bash`` goes (checks, sandbox, timeout, environment) in the workspace.
``rm`` also forgets the script's procedural memory: through the owner's API while a process
owns the store, else in the store itself.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from shiyi.config import Settings
    from shiyi.scripts.library import Script, ScriptLibrary

scripts_app = typer.Typer(
    help="The scripts the agent saved: list, show, run, rm.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
ConfigOption = Annotated[
    Path | None, typer.Option("--config", "-c", help="Config file (default: ./shiyi.yaml).")
]
NameArgument = Annotated[str, typer.Argument(help="The script's name (see shiyi scripts list).")]


def _library(settings: Settings) -> ScriptLibrary:
    from shiyi.scripts.library import ScriptLibrary

    return ScriptLibrary.for_data_dir(settings.data_dir)


def _get(settings: Settings, name: str) -> Script:
    from shiyi.errors import ShiyiError
    from shiyi.interfaces.cli.common import fail

    try:
        return _library(settings).get(name)
    except ShiyiError as exc:
        fail(str(exc), 1)


@scripts_app.command("list")
def list_scripts(
    search: Annotated[
        str | None, typer.Option("--search", "-s", help="Only scripts matching these words.")
    ] = None,
    config: ConfigOption = None,
) -> None:
    """List the saved scripts (name, parameters, language, description)."""
    from shiyi.interfaces.cli.common import load
    from shiyi.tools.builtins.script import script_line

    library = _library(load(config))
    found = library.search(search) if search else library.list_all()
    for script in found:
        typer.echo(script_line(script))
    if not found:
        what = f"matches {search!r}" if search else "is saved"
        typer.echo(f"No script {what} in {library.root}.")


@scripts_app.command("show")
def show(name: NameArgument, config: ConfigOption = None) -> None:
    """Print a script: description, usage, parameters and body."""
    from shiyi.interfaces.cli.common import load
    from shiyi.tools.builtins.script import show_text

    typer.echo(show_text(_get(load(config), name)))


@scripts_app.command(
    "run", context_settings={"allow_extra_args": True, "ignore_unknown_options": True}
)
def run(
    name: NameArgument,
    args: Annotated[
        list[str] | None, typer.Argument(help="Arguments, in the order of its parameters.")
    ] = None,
    timeout: Annotated[
        float | None, typer.Option("--timeout", help="Seconds before it is killed.")
    ] = None,
    workspace: Annotated[
        Path | None, typer.Option("--workspace", "-w", help="Directory it runs in.")
    ] = None,
    config: ConfigOption = None,
) -> None:
    """Run a script in the workspace as the agent's bash would (same checks, sandbox,
    timeout); prints its output and exits with its exit code."""
    import asyncio

    from shiyi.errors import ShiyiError
    from shiyi.interfaces.cli.common import fail, load
    from shiyi.tools.base import ToolContext
    from shiyi.tools.builtins.script import run_script

    settings = load(config, workspace)
    script = _get(settings, name)
    try:
        outcome = asyncio.run(
            run_script(script, list(args or []), ToolContext.for_settings(settings), timeout)
        )
    except ShiyiError as exc:
        fail(str(exc))
    for note in outcome.notes:
        typer.echo(f"shiyi: note: {note}", err=True)
    if outcome.output:
        typer.echo(outcome.output, nl=not outcome.output.endswith("\n"))
    code = outcome.returncode
    raise typer.Exit(code if code is not None and code >= 0 else 1)


@scripts_app.command("rm")
def remove(name: NameArgument, config: ConfigOption = None) -> None:
    """Delete a script and forget its procedural memory."""
    from shiyi.errors import ShiyiError
    from shiyi.interfaces.cli.common import fail, load
    from shiyi.interfaces.cli.memory_remote import connected

    settings = load(config)
    try:  # a missing or misspelt name fails here, before any store opens (a broken one not)
        saved = _library(settings).exists(name)
    except ShiyiError as exc:
        fail(str(exc), 1)
    if not saved:
        fail(f"no saved script is called {name!r}; list the scripts to see names.", 1)
    with connected(config) as client:
        if client is not None:
            forgotten = client.script_delete(name).forgotten
        else:
            forgotten = _remove_here(settings, name)
    from shiyi.scripts.library import forgotten_text

    typer.echo(f"deleted script {name} and forgot {forgotten_text(forgotten)} of it")


def _remove_here(settings: Settings, name: str) -> int:
    """Delete the files, then forget the memory in the store opened here."""
    from shiyi.app import open_memory
    from shiyi.errors import ShiyiError
    from shiyi.interfaces.cli.common import fail
    from shiyi.scripts.library import forget_script

    _library(settings).delete(name)
    if not settings.memory.enabled:
        return 0
    try:
        memory = open_memory(settings, fast=None, start_worker=False)
    except ShiyiError as exc:
        fail(f"deleted script {name}, but its memory could not be forgotten: {exc}")
    try:
        return forget_script(memory, name)
    finally:
        memory.close()
