"""The ``shiyi`` command. Heavy modules are imported inside commands so ``--help`` is fast."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from shiyi.interfaces.cli.common import fail, guard, load
from shiyi.interfaces.cli.doctor_cmd import doctor
from shiyi.interfaces.cli.kb_cmd import kb_app
from shiyi.interfaces.cli.memory_cmd import memory_app
from shiyi.interfaces.cli.model_cmd import model_app
from shiyi.interfaces.cli.repomap_cmd import repomap
from shiyi.interfaces.cli.scripts_cmd import scripts_app
from shiyi.interfaces.cli.worker_cmd import worker

if TYPE_CHECKING:
    pass

app = typer.Typer(
    name="shiyi",
    help="shiyi: an agent runtime with a real long-term memory.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain help: rendering it with rich costs ~80 ms at start-up
)
sessions_app = typer.Typer(
    help="List and inspect logged sessions.", no_args_is_help=True, rich_markup_mode=None
)
config_app = typer.Typer(
    help="Inspect the effective configuration.", no_args_is_help=True, rich_markup_mode=None
)
app.add_typer(sessions_app, name="sessions")
app.add_typer(memory_app, name="memory")
app.add_typer(kb_app, name="kb")
app.add_typer(model_app, name="model")
app.add_typer(scripts_app, name="scripts")
app.add_typer(config_app, name="config")
app.command("repomap")(repomap)
app.command("worker")(worker)
app.command("doctor")(doctor)


@app.command("mcp")
def mcp(
    config: Annotated[
        Path | None, typer.Option("--config", "-c", help="Config file (default: ./shiyi.yaml).")
    ] = None,
) -> None:
    """Serve memory as MCP tools on stdin/stdout (for Claude Code, Claude Desktop, Cursor):
    as the configured user, through a running `shiyi serve`/`shiyi chat` when one owns the
    data dir.  `shiyi serve` offers the same tools over HTTP at /mcp."""
    from shiyi.interfaces.mcp.stdio import serve_stdio

    serve_stdio(config)


ConfigOption = Annotated[
    Path | None, typer.Option("--config", "-c", help="Config file (default: ./shiyi.yaml).")
]
WorkspaceOption = Annotated[
    Path | None, typer.Option("--workspace", "-w", help="Directory the tools work in.")
]


def _version(value: bool) -> None:
    if value:
        from shiyi import __version__

        typer.echo(f"shiyi {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version."),
    ] = False,
) -> None:
    """shiyi: an agent runtime with a real long-term memory."""


@app.command()
def chat(
    session: Annotated[str | None, typer.Option("--session", "-s", help="Resume this id.")] = None,
    plain: Annotated[
        bool,
        typer.Option("--plain", help="Line-based output, no terminal UI (automatic off a TTY)."),
    ] = False,
    config: ConfigOption = None,
    workspace: WorkspaceOption = None,
) -> None:
    """Talk with the agent interactively (Ctrl-C cancels the current run)."""
    from shiyi.interfaces.cli.chat import run_chat

    settings = load(config, workspace)
    raise typer.Exit(guard(lambda: run_chat(settings, session, plain=plain)))


@app.command()
def run(
    task: Annotated[str, typer.Argument(help="What the agent should do.")],
    json_lines: Annotated[bool, typer.Option("--json", help="Print events as JSON lines.")] = False,
    session: Annotated[str | None, typer.Option("--session", "-s", help="Resume this id.")] = None,
    memory_wait: Annotated[
        float | None,
        typer.Option(
            "--memory-wait",
            min=0,
            help="Seconds to wait after the reply for this run's memory work (embedding,"
            " extraction, consolidation); 0: leave it queued. Default: memory.run_wait.",
        ),
    ] = None,
    config: ConfigOption = None,
    workspace: WorkspaceOption = None,
) -> None:
    """Run one task to completion and exit (status 0 when the run completed); then finish
    its memory work, up to memory.run_wait seconds, and say what was learned or what waits."""
    from shiyi.interfaces.cli.oneshot import run_once

    if not task.strip():
        fail('the task is empty: say what the agent should do (shiyi run "…")')
    settings = load(config, workspace)
    raise typer.Exit(guard(lambda: run_once(settings, task, session, json_lines, memory_wait)))


@app.command()
def serve(
    host: Annotated[
        str | None, typer.Option(help="Address to bind (default: server.host).")
    ] = None,
    port: Annotated[
        int | None, typer.Option(min=0, max=65535, help="Port (default: server.port).")
    ] = None,
    config: ConfigOption = None,
    workspace: WorkspaceOption = None,
) -> None:
    """Serve the HTTP/SSE API (a token is required off loopback)."""
    from shiyi.interfaces.server.run import serve as run_server

    settings = load(config, workspace)
    raise typer.Exit(guard(lambda: run_server(settings, host=host, port=port)))


@sessions_app.command("list")
def sessions_list(
    limit: Annotated[int, typer.Option(help="How many sessions to show.")] = 20,
    config: ConfigOption = None,
) -> None:
    """Recent sessions, newest first."""
    from shiyi.interfaces.cli.sessions import print_sessions

    settings = load(config)
    raise typer.Exit(guard(lambda: print_sessions(settings, limit)))


@sessions_app.command("show")
def sessions_show(
    session_id: Annotated[str, typer.Argument(help="Session id or a unique prefix.")],
    config: ConfigOption = None,
) -> None:
    """Every message and run of one session."""
    from shiyi.interfaces.cli.sessions import print_session

    settings = load(config)
    raise typer.Exit(guard(lambda: print_session(settings, session_id)))


@config_app.command("show")
def config_show(
    config: ConfigOption = None,
    workspace: WorkspaceOption = None,
) -> None:
    """Print the effective configuration (API keys masked)."""
    import yaml

    from shiyi.config import masked_dump

    settings = load(config, workspace)
    typer.echo(yaml.safe_dump(masked_dump(settings), sort_keys=False, allow_unicode=True))


def main() -> None:
    import sys

    from shiyi.interfaces.cli.terminal_safe import guard_output

    guard_output(sys.argv)
    app(prog_name="shiyi")


if __name__ == "__main__":
    main()
