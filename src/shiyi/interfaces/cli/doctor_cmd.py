"""``shiyi doctor``: check the data dir's stores against each other and repair what can be
rebuilt (see :mod:`shiyi.memory.kuzu.doctor`); the summary cache is checked here too."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from shiyi.config import Settings
    from shiyi.memory.kuzu.doctor import DoctorOptions, DoctorReport

PROBLEMS_REMAIN = 1
SUMMARIES = "summaries.sqlite3"


def doctor(
    repair: Annotated[
        bool, typer.Option("--repair", help="Rebuild what can be rebuilt from the other copies.")
    ] = False,
    rebuild_graph: Annotated[
        bool,
        typer.Option(
            "--rebuild-graph",
            help="Move a damaged graph.kuzu aside and rebuild it from memory.sqlite3 "
            "(implies --repair).",
        ),
    ] = False,
    rebuild_sqlite: Annotated[
        bool,
        typer.Option(
            "--rebuild-sqlite",
            help="Move a damaged memory.sqlite3 aside and rebuild it from graph.kuzu "
            "(implies --repair; queued jobs and cached vectors are lost).",
        ),
    ] = False,
    config: Annotated[
        Path | None, typer.Option("--config", "-c", help="Config file (default: ./shiyi.yaml).")
    ] = None,
) -> None:
    """Count the memory in every store (graph, mirror, keyword index, vectors, jobs), report
    where they disagree and, with --repair, fix it.  Exit status 1 while problems remain."""
    from shiyi.errors import ShiyiError
    from shiyi.interfaces.cli.common import fail, load
    from shiyi.interfaces.cli.doctor_log import check_session_log
    from shiyi.interfaces.cli.remote import refuse_while_owned
    from shiyi.memory.kuzu.doctor import examine

    settings = load(config)
    if settings.memory.store != "embedded":
        fail("`shiyi doctor` checks the embedded store; this data dir uses PostgreSQL")
    refuse_while_owned(settings, "doctor")
    if _nothing_at(settings.data_dir):
        # a mistyped SHIYI_HOME had got a new, empty store and "ok: every copy agrees"
        typer.echo(
            f"no shiyi data at {settings.data_dir}: nothing to check (is SHIYI_HOME or "
            "--config pointing at the right place? The first command that remembers "
            "creates a store there).",
            err=True,
        )
        raise typer.Exit(PROBLEMS_REMAIN)
    options = _options(settings, repair, rebuild_graph, rebuild_sqlite)
    try:
        report = examine(settings.memory_dir, options)
    except ShiyiError as exc:
        fail(str(exc))
    _summaries(settings.data_dir / SUMMARIES, report, options.repairing)
    check_session_log(settings, report, options)
    _knowledge(settings, report)
    _print(report, options.repairing)
    if report.remaining:
        raise typer.Exit(PROBLEMS_REMAIN)


def _nothing_at(data_dir: Path) -> bool:
    """No data dir, or one holding no store, session log or knowledge base yet."""
    if not data_dir.is_dir():
        return True
    stores = ("memory", "sessions.sqlite3", "knowledge.sqlite3")
    return not any((data_dir / name).exists() for name in stores)


def _options(
    settings: Settings, repair: bool, rebuild_graph: bool, rebuild_sqlite: bool
) -> DoctorOptions:
    from shiyi.memory.kuzu.doctor import DoctorOptions

    return DoctorOptions(
        dimension=settings.memory.embed_dimension,
        embedding_model=settings.memory.embed_model,
        lock_timeout=settings.memory.lock_timeout,
        repair=repair,
        rebuild_graph=rebuild_graph,
        rebuild_sqlite=rebuild_sqlite,
        sessions_db=settings.sessions_db,
        summaries_db=settings.data_dir / SUMMARIES,
        embeds=settings.memory.embedder != "none",
    )


def _summaries(path: Path, report: DoctorReport, repair: bool) -> None:
    """Only a cache: a damaged one is moved aside and recreated empty."""
    if not path.exists():
        return
    verdict, (rows,) = _checked(path, ("summaries",))
    if verdict == "ok":
        report.counts.append((SUMMARIES, f"{rows:,} cached summaries"))
        return

    def move() -> str:
        from shiyi.index.sqlite_file import move_aside

        return f"moved it aside to {move_aside(path, verdict).name} (rebuilt as needed)"

    report.add(SUMMARIES, f"the summary cache is damaged ({verdict})", move if repair else None)


def _knowledge(settings: Settings, report: DoctorReport) -> None:
    """The knowledge base has no other copy: damage is reported with the way out, never
    repaired here."""
    from shiyi.knowledge.base import FILE_NAME, KnowledgeBase
    from shiyi.knowledge.store import damaged_knowledge_message

    path = KnowledgeBase.path_for(settings)
    if not path.exists():
        return
    verdict, (documents, chunks) = _checked(path, ("kb_documents", "kb_chunks"))
    if verdict == "ok":
        report.counts.append((FILE_NAME, f"documents {documents:,}  chunks {chunks:,}"))
    else:
        report.add(FILE_NAME, damaged_knowledge_message(path, verdict))


def _checked(path: Path, tables: tuple[str, ...]) -> tuple[str, list[int]]:
    """SQLite's verdict on a file ("ok" when sound) and the row counts of ``tables``."""
    from shiyi.index.sqlite_file import file_damage

    damage = file_damage(path)
    if damage is not None:
        return damage, [0] * len(tables)
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            verdict = str(conn.execute("PRAGMA quick_check").fetchone()[0])
            counts = [
                int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]) for table in tables
            ]
        finally:
            conn.close()
    except sqlite3.Error as exc:
        return str(exc), [0] * len(tables)
    return verdict, counts


def _print(report: DoctorReport, repaired: bool) -> None:
    typer.echo(f"{'memory store':<20} {report.directory}")
    for name, value in report.counts:
        typer.echo(f"{name:<20} {value}")
    if not report.findings:
        typer.echo("ok: every copy agrees")
        return
    for finding in report.findings:
        if finding.fixed:
            typer.echo(f"repaired  {finding.where}: {finding.problem}; {finding.fixed}")
        else:
            typer.echo(f"problem   {finding.where}: {finding.problem}")
    remaining = report.remaining
    if any(f.fixed for f in report.findings):
        typer.echo("(counts are from before the repairs: run `shiyi doctor` again to check)")
    if any(f.where in ("graph.kuzu", "memory.sqlite3", "knowledge.sqlite3") for f in remaining):
        typer.echo(f"{len(remaining)} problem(s) remain; see the fix above")
    elif remaining and not repaired:
        typer.echo(f"{len(remaining)} problem(s); `shiyi doctor --repair` fixes what it can")
    elif remaining:
        typer.echo(f"{len(remaining)} problem(s) remain; see the messages above")
