"""``shiyi memory migrate --to postgresql://...``: copy the embedded store into PostgreSQL."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from shiyi.memory.transfer.kuzu_to_postgres import MigrationReport, Progress


def migrate(
    to: Annotated[
        str,
        typer.Option(
            "--to", help="Target database: postgresql://user:password@host:port/database."
        ),
    ],
    batch: Annotated[int, typer.Option(help="Rows per write.", min=1)] = 2000,
    config: Annotated[
        Path | None, typer.Option("--config", "-c", help="Config file (default: ./shiyi.yaml).")
    ] = None,
) -> None:
    """Copy the embedded store (events, facts, entities, edges, vectors, access counts) into
    PostgreSQL.  Safe to re-run: what is there already is not duplicated."""
    from shiyi.errors import ShiyiError
    from shiyi.interfaces.cli.common import fail, load
    from shiyi.interfaces.cli.remote import refuse_while_owned

    settings = load(config)
    refuse_while_owned(settings, "memory migrate")
    try:
        report = _copy(settings.memory_dir, to, batch, settings.memory.lock_timeout)
    except ShiyiError as exc:
        fail(str(exc))
    _print_report(report)
    if report.mismatches:
        fail(f"the copy is incomplete: {report.mismatches} (source, target); run it again")
    typer.echo(f"done in {report.seconds:.1f} s. To use it, set in your config:")
    typer.echo(f"  memory:\n    store: {to}")


def _copy(directory: Path, url: str, batch: int, lock_timeout: float) -> MigrationReport:
    from shiyi.errors import ConfigError
    from shiyi.memory.kuzu.store import GRAPH_NAME, EmbeddedStore

    if not (directory / GRAPH_NAME).exists():
        raise ConfigError(f"there is no embedded memory store in {directory} to copy")
    try:
        from shiyi.memory.postgres.store import PostgresStore, check_url, redacted
        from shiyi.memory.transfer.kuzu_to_postgres import embedding_model_of, migrate
    except ImportError as exc:
        raise ConfigError(
            f"copying to PostgreSQL needs its driver ({exc}); "
            "install it with `pip install 'shiyi[postgres]'`"
        ) from exc
    check_url(url)
    source = EmbeddedStore(directory, lock_timeout=lock_timeout, check_model=False)
    try:
        model, dimension = embedding_model_of(source)
        typer.echo(f"copying {directory} -> {redacted(url)} (vectors: {model}, {dimension}-d)")
        target = PostgresStore(url, dimension=dimension, embedding_model=model)
        try:
            return migrate(source, target, batch=batch, progress=_progress())
        finally:
            target.close()
    finally:
        source.close()


def _progress() -> Progress:
    shown: dict[str, int] = {}

    def show(stage: str, done: int, total: int) -> None:
        # One line per stage at its end, and at most every ~10% on the way.
        step = max(1, total // 10)
        if done == total or done - shown.get(stage, 0) >= step:
            shown[stage] = done
            typer.echo(f"  {stage:<16} {done:>9,} / {total:,}")

    return show


def _print_report(report: MigrationReport) -> None:
    typer.echo(f"{'':18}{'embedded':>10}  {'postgresql':>10}")
    for key in sorted(set(report.source) | set(report.target)):
        source, target = report.source.get(key, "-"), report.target.get(key, "-")
        typer.echo(f"  {key:<16}{source:>10}  {target:>10}")
