"""``shiyi kb ...``: add documents to the knowledge base, search it, list and remove them.

The knowledge base is its own SQLite file in the data dir, so these commands work while
``shiyi chat`` or ``shiyi serve`` holds the memory store.  Modules are imported inside the
commands (asyncio alone costs ~35 ms of every ``shiyi`` start-up).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from shiyi.knowledge import IngestReport, KnowledgeBase
    from shiyi.knowledge.ingest import IngestProgress

kb_app = typer.Typer(
    help="The document knowledge base: add, search, list, remove.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
ConfigOption = Annotated[
    Path | None, typer.Option("--config", "-c", help="Config file (default: ./shiyi.yaml).")
]


@contextmanager
def opened(config: Path | None, *, create: bool = False) -> Iterator[KnowledgeBase]:
    """The data dir's knowledge base; only ``kb add`` creates one (an empty one would make
    the agent offer a search over nothing)."""
    from shiyi.app import open_knowledge
    from shiyi.interfaces.cli.common import fail, load, opened_or_fail
    from shiyi.knowledge import KnowledgeBase

    settings = load(config)
    if not create and not KnowledgeBase.exists(settings):
        where = settings.knowledge_dir
        fail(f"no knowledge base in {where} yet: add documents with shiyi kb add PATH...", 1)
    with opened_or_fail(lambda: open_knowledge(settings)) as kb:
        yield kb


def _shown(path: str) -> str:
    from shiyi.knowledge.base import display_path

    return display_path(path, Path.cwd())


@kb_app.command("add")
def add(
    paths: Annotated[list[Path], typer.Argument(help="Files or directories to ingest.")],
    force: Annotated[
        bool, typer.Option("--force", help="Re-ingest files whose content is unchanged.")
    ] = False,
    config: ConfigOption = None,
) -> None:
    """Ingest Markdown, text, HTML, PDF and source files (unchanged files are skipped)."""
    import asyncio

    def progress(status: IngestProgress) -> None:
        typer.echo(f"{progress_line(status)}  {status.message}  {_shown(status.path)}", err=True)

    with opened(config, create=True) as kb:
        typer.echo(f"summaries: {_summaries_by(kb)}", err=True)
        try:
            report = asyncio.run(kb.add(paths, progress, force=force))
        except KeyboardInterrupt:
            typer.echo(
                "shiyi: interrupted: the files finished before stay added; the one under way "
                "was not stored (run the same command again to go on)",
                err=True,
            )
            raise typer.Exit(130) from None
        _print_report(report)
    read = report.added + report.updated + report.unchanged + [p for p, _ in report.failed]
    if not read and not report.protected:  # "0 added" alone had looked like a quiet success
        typer.echo(
            "shiyi: note: nothing there the knowledge base reads (Markdown, text, HTML, PDF "
            "and source files)",
            err=True,
        )
    if report.failed:
        raise typer.Exit(1)


def _summaries_by(kb: KnowledgeBase) -> str:
    if kb.summary_model is not None:
        return kb.summary_model.model_name
    if kb.settings.summarize_with_model:
        return "extractive (configure models.fast to summarise with a model)"
    return "extractive"


def progress_line(status: IngestProgress) -> str:
    """``[███░░░░░░░] 3/17 files · 1.2/2.1 MB · 420 chunks · 37 sections · 512 embedded ·
    ETA 12 s``: the bar fills with the bytes read."""
    from shiyi.interfaces.cli.render import progress_bar

    eta = "" if status.eta_seconds is None else f" · ETA {status.eta_seconds:.0f} s"
    return (
        f"[{progress_bar(status.bytes_done, status.bytes_total)}] "
        f"{status.files_done}/{status.files_total} files · "
        f"{_bytes(status.bytes_done)}/{_bytes(status.bytes_total)} · {status.chunks} chunks · "
        f"{status.sections} sections · {status.embedded} embedded{eta}"
    )


def _bytes(count: int) -> str:
    if count < 1_000_000:
        return f"{count / 1000:.0f} KB" if count >= 1000 else f"{count} B"
    return f"{count / 1_000_000:.1f} MB"


def _print_report(report: IngestReport) -> None:
    for _path, reason in report.failed:
        typer.echo(f"shiyi: error: {reason}", err=True)
    for path in report.protected:
        typer.echo(f"shiyi: not read (protected: config or secrets): {_shown(path)}", err=True)
    rate = report.chunks / report.seconds if report.seconds and report.chunks else 0.0
    typer.echo(
        f"{len(report.added)} added, {len(report.updated)} updated, "
        f"{len(report.unchanged)} unchanged, {len(report.failed)} failed, "
        f"{len(report.skipped)} skipped (unsupported) · {report.chunks} chunks in "
        f"{report.seconds:.1f} s ({rate:.0f} chunks/s)"
    )


@kb_app.command("search")
def search(
    query: Annotated[str, typer.Argument(help="What to look for.")],
    limit: Annotated[int, typer.Option(min=1, max=50, help="How many passages.")] = 5,
    rewrite: Annotated[
        bool | None,
        typer.Option("--rewrite/--no-rewrite", help="Multi-query rewriting (fast model)."),
    ] = None,
    hyde: Annotated[
        bool | None, typer.Option("--hyde/--no-hyde", help="Search with a hypothetical answer.")
    ] = None,
    expand: Annotated[
        bool | None,
        typer.Option("--expand/--no-expand", help="Widen hits to section or neighbours."),
    ] = None,
    summaries: Annotated[
        bool | None,
        typer.Option("--summaries/--no-summaries", help="Summary-first routing path."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON lines.")] = False,
    config: ConfigOption = None,
) -> None:
    """Search the knowledge base with the retrieval search_knowledge uses."""
    import asyncio
    import json
    from dataclasses import asdict

    from shiyi.interfaces.cli.common import fail
    from shiyi.knowledge import format_passages

    if not query.strip():
        fail("the query is empty: say what to look for")
    with opened(config) as kb:
        options = kb.options(
            limit=max(1, limit), rewrite=rewrite, hyde=hyde, expand=expand, summaries=summaries
        )
        result = asyncio.run(kb.search(query, options))
    if as_json:
        for passage in result.passages:
            typer.echo(json.dumps(asdict(passage), ensure_ascii=False))
        return
    for extra in result.queries[1:]:
        typer.echo(f"rewrite: {extra}")
    if result.hypothetical:
        typer.echo(f"hyde: {result.hypothetical[:150]}")
    typer.echo(format_passages(result.passages, Path.cwd(), max_chars=100_000))


@kb_app.command("list")
def list_documents(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON lines.")] = False,
    config: ConfigOption = None,
) -> None:
    """Every document with its chunks, sections and how it was summarised."""
    import json
    import time
    from dataclasses import asdict

    from shiyi.interfaces.cli.common import load
    from shiyi.knowledge import KnowledgeBase

    if not KnowledgeBase.exists(load(config)):
        if not as_json:
            typer.echo("The knowledge base is empty: shiyi kb add PATH...")
        return
    with opened(config) as kb:
        documents = kb.documents()
    for doc in documents:
        if as_json:
            typer.echo(json.dumps(asdict(doc), ensure_ascii=False))
            continue
        missing = "" if Path(doc.path).exists() else "  [file missing: shiyi kb remove it]"
        added = time.strftime("%Y-%m-%d %H:%M", time.localtime(doc.added_at))
        typer.echo(
            f"{doc.id}  {doc.format:<8} {doc.chunks:>5} chunks {doc.sections:>4} sections  "
            f"{added}  {doc.summary_method:<12} {_shown(doc.path)}{missing}"
        )
    if not documents and not as_json:
        typer.echo("The knowledge base is empty: shiyi kb add PATH...")


@kb_app.command("remove")
def remove(
    targets: Annotated[
        list[str], typer.Argument(help="Document paths, directories (everything below) or ids.")
    ],
    config: ConfigOption = None,
) -> None:
    """Remove documents (also ones whose files are gone) with their chunks and summaries."""
    with opened(config) as kb:
        removed, unmatched = kb.remove(targets)
    for doc in removed:
        typer.echo(f"removed {doc.id} ({doc.chunks} chunks) {_shown(doc.path)}")
    for target in unmatched:
        typer.echo(f"shiyi: error: no document in the knowledge base matches {target}", err=True)
    if unmatched:
        raise typer.Exit(1)
