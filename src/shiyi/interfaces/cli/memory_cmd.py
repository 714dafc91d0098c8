"""``shiyi memory ...``: inspect and edit long-term memory from the terminal."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from shiyi.memory.models import MemoryHit
    from shiyi.memory.service import Memory

memory_app = typer.Typer(
    help="Search, inspect and edit long-term memory.", no_args_is_help=True, rich_markup_mode=None
)
ConfigOption = Annotated[
    Path | None, typer.Option("--config", "-c", help="Config file (default: ./shiyi.yaml).")
]


@contextmanager
def opened(
    config: Path | None, *, worker: bool = False, switch_model: bool = False
) -> Iterator[Memory]:
    from shiyi.errors import ShiyiError
    from shiyi.interfaces.cli.app import fail, load
    from shiyi.memory.service import Memory

    settings = load(config)
    try:
        memory = Memory.open(settings, start_worker=worker, switch_model=switch_model)
    except ShiyiError as exc:
        fail(str(exc))
    try:
        yield memory
    except ShiyiError as exc:
        fail(str(exc))
    finally:
        memory.close()


def _hit_line(hit: MemoryHit) -> str:
    from shiyi.memory.present import age_text

    kind = hit.fact_kind or (hit.anchor.segment_type if hit.anchor else hit.node)
    where = f" [{hit.anchor.key()}]" if hit.anchor else ""
    paths = ",".join(hit.paths)
    text = " ".join(hit.text.split())
    text = text if len(text) <= 110 else text[:109] + "…"
    age = age_text(hit.ts, time.time())
    return f"{hit.score:.4f}  {hit.id:<20} {kind:<12} {age:>9}  {text}{where}  ({paths})"


@memory_app.command("search")
def search(
    query: Annotated[str, typer.Argument(help="What to look for.")],
    mode: Annotated[str, typer.Option(help="hybrid|semantic|graph|recent|keyword")] = "hybrid",
    kind: Annotated[list[str] | None, typer.Option("--kind", help="Only these kinds.")] = None,
    limit: Annotated[int, typer.Option(help="How many results.")] = 10,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON lines.")] = False,
    config: ConfigOption = None,
) -> None:
    """Search memory with the same retrieval the agent uses."""
    from dataclasses import asdict

    from shiyi.interfaces.cli.app import fail
    from shiyi.memory.retriever import MODES

    if mode not in MODES:
        fail(f"unknown --mode {mode!r}; use one of {', '.join(MODES)}")
    with opened(config) as memory:
        hits = memory.search(query, mode=mode, kinds=kind, limit=limit)
        for hit in hits:
            typer.echo(json.dumps(asdict(hit), ensure_ascii=False) if as_json else _hit_line(hit))
        if not hits and not as_json:
            typer.echo("No memories matched.")


@memory_app.command("add")
def add(
    text: Annotated[str, typer.Argument(help="What to remember.")],
    kind: Annotated[str, typer.Option(help="preference|semantic|procedural|...")] = "semantic",
    config: ConfigOption = None,
) -> None:
    """Remember a fact explicitly (long term, full confidence)."""
    with opened(config) as memory:
        fact = memory.remember(text, kind=kind)  # type: ignore[arg-type]
        memory.worker.drain(timeout=60)
        typer.echo(f"remembered {fact.id} ({fact.kind}): {fact.value}")


@memory_app.command("show")
def show(
    memory_id: Annotated[str, typer.Argument(help="An event or fact id.")],
    config: ConfigOption = None,
) -> None:
    """Everything stored about one memory."""
    from dataclasses import asdict

    from shiyi.interfaces.cli.app import fail

    with opened(config) as memory:
        events = memory.store.get_events([memory_id])
        facts = memory.store.get_facts([memory_id])
        if events:
            typer.echo(json.dumps(asdict(events[0]), ensure_ascii=False, indent=2))
        elif facts:
            typer.echo(json.dumps(asdict(facts[0]), ensure_ascii=False, indent=2))
        else:
            fail(f"no memory with id {memory_id!r}; `shiyi memory search` shows ids")


@memory_app.command("expand")
def expand(
    anchor: Annotated[str, typer.Argument(help="An anchor like run_abc:2:0.")],
    window: Annotated[int, typer.Option(help="Segments before and after.")] = 3,
    config: ConfigOption = None,
) -> None:
    """The turns around an anchored memory."""
    with opened(config) as memory:
        for event in memory.expand(anchor, window):
            typer.echo(f"[{event.anchor.key()}] {event.role}: {event.content}")


@memory_app.command("forget")
def forget(
    ids: Annotated[list[str], typer.Argument(help="Event or fact ids to delete for good.")],
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask.")] = False,
    config: ConfigOption = None,
) -> None:
    """Hard-delete memories (graph, vectors and keyword index)."""
    if not yes and not typer.confirm(f"Delete {len(ids)} memories for good?"):
        raise typer.Exit(1)
    with opened(config) as memory:
        typer.echo(f"deleted {memory.forget(ids)} of {len(ids)}")


@memory_app.command("import")
def import_(
    path: Annotated[Path, typer.Argument(help="JSONL messages or a LoCoMo JSON file.")],
    wait: Annotated[bool, typer.Option(help="Process (embed, link) before returning.")] = True,
    config: ConfigOption = None,
) -> None:
    """Import past conversations; original timestamps are kept."""
    from shiyi.memory.importers import detect_and_load

    with opened(config) as memory:
        conversations = detect_and_load(path)
        events = [e for c in conversations for e in c.events]
        started = time.perf_counter()
        memory.import_events(events)
        if wait:
            memory.worker.drain(timeout=3600)
        took = time.perf_counter() - started
        typer.echo(
            f"imported {len(events)} turns from {len(conversations)} conversations in {took:.1f} s"
        )


@memory_app.command("export")
def export(
    out: Annotated[Path | None, typer.Option("--out", "-o", help="File (default: stdout).")] = None,
    config: ConfigOption = None,
) -> None:
    """Every event and fact as JSON lines (events oldest first, then facts)."""
    from dataclasses import asdict

    with opened(config) as memory:
        events = memory.store.recent_events(10**9)[::-1]
        facts = memory.store.get_facts(memory.store.fact_ids(10**9))
        lines = [json.dumps({"node": "event", **asdict(e)}, ensure_ascii=False) for e in events]
        lines += [json.dumps({"node": "fact", **asdict(f)}, ensure_ascii=False) for f in facts]
        _write_lines(lines, out)


def _write_lines(lines: list[str], out: Path | None) -> None:
    if out is None:
        for line in lines:
            typer.echo(line)
    else:
        out.write_text("\n".join(lines) + "\n", encoding="utf-8")
        typer.echo(f"wrote {len(lines)} records to {out}")


@memory_app.command("stats")
def stats(config: ConfigOption = None) -> None:
    """Counts of events, entities, facts, vectors and queued jobs."""
    with opened(config) as memory:
        for name, value in memory.stats().items():
            typer.echo(f"{name:<18} {value}")


@memory_app.command("jobs")
def jobs(
    retry: Annotated[bool, typer.Option(help="Queue failed jobs again.")] = False,
    run: Annotated[bool, typer.Option(help="Process queued jobs now.")] = False,
    config: ConfigOption = None,
) -> None:
    """The background queue: what is pending, running, done or failed (with errors)."""
    with opened(config) as memory:
        if retry:
            typer.echo(f"re-queued {memory.jobs.retry_failed()} failed jobs")
        if run:
            memory.worker.drain(timeout=3600)
        for row in memory.jobs.summary():
            typer.echo(f"{row.kind:<10} {row.status:<8} {row.count}")
        for failed in memory.jobs.failed():
            typer.echo(
                f"failed #{failed.id} {failed.kind} after {failed.attempts}: {failed.last_error}"
            )


@memory_app.command("reindex")
def reindex(
    all_: Annotated[
        bool, typer.Option("--all", help="Drop every vector first (e.g. after a model change).")
    ] = False,
    config: ConfigOption = None,
) -> None:
    """Embed every event that has no vector for the configured model.

    After changing memory.embed_model, run with --all: the store refuses to mix models.
    """
    with opened(config, switch_model=all_) as memory:
        count = memory.reindex(progress=_progress)
        typer.echo(f"re-embedded {count} events")


def _progress(done: int) -> None:
    typer.echo(f"  {done} embedded", err=True)


__all__ = ["memory_app"]
