"""``shiyi memory ...``: inspect and edit long-term memory from the terminal."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from shiyi.interfaces.cli import memory_remote as remote
from shiyi.interfaces.cli.doctor_cmd import doctor
from shiyi.interfaces.cli.memory_import import import_
from shiyi.interfaces.cli.memory_migrate import migrate
from shiyi.interfaces.cli.memory_open import opened
from shiyi.interfaces.cli.memory_remote import connected

if TYPE_CHECKING:
    from shiyi.memory.lifecycle.forget import ForgetPlan, Forgetter
    from shiyi.memory.models import MemoryHit

memory_app = typer.Typer(
    help="Search, inspect and edit long-term memory.", no_args_is_help=True, rich_markup_mode=None
)
memory_app.command("migrate")(migrate)
memory_app.command("import")(import_)
memory_app.command("check")(doctor)  # the same as `shiyi doctor`
ConfigOption = Annotated[
    Path | None, typer.Option("--config", "-c", help="Config file (default: ./shiyi.yaml).")
]


def _hit_line(hit: MemoryHit) -> str:
    from shiyi.memory.present import age_text

    kind = hit.fact_kind or (hit.anchor.segment_type if hit.anchor else hit.node)
    where = f" [{hit.anchor.key()}]" if hit.anchor else ""
    paths = ",".join(hit.paths)
    text = " ".join(hit.text.split())
    text = text if len(text) <= 110 else text[:109] + "…"
    age = age_text(hit.ts, time.time())
    state = f" [{hit.status}]" if hit.node == "fact" and hit.status != "active" else ""
    return f"{hit.score:.4f}  {hit.id:<20} {kind:<12} {age:>9}  {text}{state}{where}  ({paths})"


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

    from shiyi.interfaces.cli.common import fail
    from shiyi.memory.retriever import MODES

    if mode not in MODES:
        fail(f"unknown --mode {mode!r}; use one of {', '.join(MODES)}")
    with connected(config) as client:
        if client is not None:
            return remote.search(client, query, mode, kind, limit, as_json)
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
    key: Annotated[
        str, typer.Option(help="The slot it sets (a new value supersedes the old one).")
    ] = "",
    scope: Annotated[str, typer.Option(help="user | agent | workspace (shared).")] = "user",
    config: ConfigOption = None,
) -> None:
    """Remember a fact explicitly (long term, full confidence)."""
    from shiyi.interfaces.cli.common import fail
    from shiyi.memory.models import FACT_KINDS

    if kind not in FACT_KINDS:
        fail(f"--kind {kind!r} is not a memory kind; use one of {', '.join(FACT_KINDS)}")
    if scope not in ("user", "agent", "workspace"):
        fail(f"--scope {scope!r} is not a scope; use user, agent or workspace")
    with connected(config) as client:
        if client is not None:
            return remote.add(client, text, kind, key, scope)
    with opened(config) as memory:
        fact = memory.remember(text, kind=kind, key=key, scope=scope)  # type: ignore[arg-type]
        memory.worker.drain(timeout=60)
        typer.echo(f"remembered {fact.id} ({fact.kind}): {fact.text}")


@memory_app.command("show")
def show(
    memory_id: Annotated[str, typer.Argument(help="An event or fact id.")],
    config: ConfigOption = None,
) -> None:
    """Everything stored about one memory."""
    from dataclasses import asdict

    from shiyi.interfaces.cli.common import fail

    with connected(config) as client:
        if client is not None:
            return remote.show(client, memory_id)
    with opened(config) as memory:
        found = memory.get(memory_id)  # another user's or agent's: not found either
        if found is None:
            fail(f"no memory with id {memory_id!r}; `shiyi memory search` shows ids")
        typer.echo(json.dumps(asdict(found), ensure_ascii=False, indent=2))


@memory_app.command("expand")
def expand(
    anchor: Annotated[str, typer.Argument(help="An anchor like run_abc:2:0.")],
    window: Annotated[int, typer.Option(help="Segments before and after.")] = 3,
    config: ConfigOption = None,
) -> None:
    """The turns around an anchored memory."""
    with connected(config) as client:
        if client is not None:
            return remote.expand(client, anchor, window)
    with opened(config) as memory:
        for event in memory.expand(anchor, window):
            typer.echo(f"[{event.anchor.key()}] {event.role}: {event.content}")


@memory_app.command("forget")
def forget(
    ids: Annotated[
        list[str] | None, typer.Argument(help="Event or fact ids to delete for good.")
    ] = None,
    entity: Annotated[
        str | None,
        typer.Option("--entity", help="An entity: its facts, the events mentioning it, the node."),
    ] = None,
    query: Annotated[
        str | None, typer.Option("--query", help="What this search finds (listed first).")
    ] = None,
    limit: Annotated[int, typer.Option("--limit", min=1, help="Hits of --query to delete.")] = 5,
    user: Annotated[
        str | None, typer.Option("--user", help="Every memory and session of this user id.")
    ] = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask.")] = False,
    compact: Annotated[
        bool,
        typer.Option(help="Rewrite the graph file so no bytes of the memories remain in it."),
    ] = True,
    config: ConfigOption = None,
) -> None:
    """Hard-delete memories from every store: graph, vectors, keyword index, embedding cache,
    job queue, session log and cached summaries."""
    from shiyi.interfaces.cli.common import fail

    given = [("IDs", ids), ("--entity", entity), ("--query", query), ("--user", user)]
    chosen = [name for name, value in given if value]
    if len(chosen) != 1:
        got = f" (got {' and '.join(chosen)})" if chosen else ""
        fail(f"give exactly one of: IDs, --entity NAME, --query TEXT or --user ID{got}")
    if ids:
        with connected(config) as client:
            if client is not None:
                if not yes and not typer.confirm(f"Delete {len(ids)} memories for good?"):
                    raise typer.Exit(1)
                return remote.forget(client, ids)
    if entity or query:
        with connected(config) as client:
            if client is not None:
                by, text = ("entity", entity) if entity else ("query", query)
                assert text is not None
                return remote.forget_matching(client, by, text, limit, yes)
    with opened(config) as memory:
        forgetter = memory.forgetter()
        plan = _forget_plan(forgetter, ids, entity, query, limit, user)
        if user is None:  # --user erases a whole user on purpose; the rest is the config's
            plan = memory.within_scope(plan)
        for hit in plan.hits:
            typer.echo(_hit_line(hit))
        if not yes and not typer.confirm(f"Forget {plan.describe()} for good?"):
            raise typer.Exit(1)
        report = forgetter.execute(plan)
        if compact and report.total:
            memory.compact()
            report.compacted = True
        typer.echo(f"deleted {report.total} of {len(ids)}" if ids else f"forgot {plan.target}")
        for line in report.lines():
            typer.echo(line)


@memory_app.command("compact")
def compact_(config: ConfigOption = None) -> None:
    """Rewrite the memory files so no bytes of forgotten memories remain in them (the graph
    file, then VACUUM of the SQLite files); needs `shiyi serve` stopped."""
    with opened(config) as memory:
        started = time.perf_counter()
        memory.compact()
        busy = memory.forgetter().scrub_files()
        typer.echo(f"compacted the memory files in {time.perf_counter() - started:.1f} s")
        for path in busy:
            typer.echo(f"  warning: {path} still has a WAL (another process reads it)")


def _forget_plan(
    forgetter: Forgetter,
    ids: list[str] | None,
    entity: str | None,
    query: str | None,
    limit: int,
    user: str | None,
) -> ForgetPlan:
    if ids:
        return forgetter.plan_ids(ids)
    if entity:
        return forgetter.plan_entity(entity)
    if query:
        return forgetter.plan_query(query, limit)
    assert user is not None
    return forgetter.plan_user(user)


@memory_app.command("export")
def export(
    out: Annotated[Path | None, typer.Option("--out", "-o", help="File (default: stdout).")] = None,
    config: ConfigOption = None,
) -> None:
    """Every event and fact the configured user and agent may see, as JSON lines (events
    oldest first, then facts)."""
    from shiyi.memory.export import export_lines

    with connected(config) as client:
        if client is not None:
            return _write_lines(client.memory_export(), out)
    with opened(config) as memory:
        _write_lines(list(export_lines(memory.store, memory.viewer)), out)


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
    with connected(config) as client:
        if client is not None:
            return remote.stats(client)
    with opened(config) as memory:
        for name, value in memory.stats().items():
            typer.echo(f"{name:<18} {value}")


@memory_app.command("health")
def health(
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    config: ConfigOption = None,
) -> None:
    """Facts by kind, tier, scope and status; conflicts, expiry, vectors, the job queue and
    each cache's hit rate (the server's, when one owns the data dir: its caches are the
    ones working)."""
    from dataclasses import asdict

    from shiyi.memory.lifecycle.health import health_lines

    with connected(config) as client:
        if client is not None:
            return remote.health(client, as_json)
    with opened(config) as memory:
        report = memory.health()
        if as_json:
            typer.echo(json.dumps(asdict(report), ensure_ascii=False))
        else:
            for line in health_lines(report):
                typer.echo(line)


@memory_app.command("history")
def history(
    key: Annotated[str, typer.Option("--key", help="The fact slot, e.g. 'lives in'.")] = "",
    entity: Annotated[str, typer.Option("--entity", help="Facts about this entity.")] = "",
    config: ConfigOption = None,
) -> None:
    """Every version of a fact, oldest first: what was true when, and what replaced it."""
    from shiyi.interfaces.cli.common import fail

    if not key and not entity:
        fail("give --key SLOT and/or --entity NAME (see `shiyi memory search` for fact keys)")
    with connected(config) as client:
        if client is not None:
            return remote.history(client, key, entity)
    with opened(config) as memory:
        facts = memory.history(key=key, entity=entity)
        if not facts:
            typer.echo("no facts for that slot")
        for fact in facts:
            typer.echo(remote.history_line(fact))


@memory_app.command("jobs")
def jobs(
    retry: Annotated[bool, typer.Option(help="Queue failed jobs again.")] = False,
    run: Annotated[bool, typer.Option(help="Process queued jobs now.")] = False,
    config: ConfigOption = None,
) -> None:
    """The background queue per kind: pending, running, failed and done; how long the oldest
    has waited and why (no extraction model, a retry delay); failed jobs' errors."""
    from shiyi.interfaces.cli.memory_work import queue_lines

    with connected(config) as client:
        if client is not None:
            return remote.jobs(client, retry, run)
    with opened(config) as memory:
        if retry:
            typer.echo(f"re-queued {memory.jobs.retry_failed()} failed jobs")
        if run:
            memory.worker.drain(timeout=3600)
        runnable = memory.worker.ready_kinds()
        for line in queue_lines(memory.jobs.summary(), memory.jobs.backlog(), runnable):
            typer.echo(line)
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


@memory_app.command("relink")
def relink(config: ConfigOption = None) -> None:
    """Link every stored turn to its names and topics again (after an upgrade that links
    more: older turns reach the graph path only after this)."""
    started = time.monotonic()

    def progress(done: int, total: int) -> None:
        rate = done / max(time.monotonic() - started, 1e-6)
        eta = (total - done) / rate if rate else 0.0
        typer.echo(
            f"  {done:,} of {total:,} turns linked ({rate:,.0f}/s, ETA {eta:.0f} s)", err=True
        )

    with opened(config) as memory:
        count = memory.relink(progress=progress)
        entities = memory.stats().get("entities", 0)
        typer.echo(f"linked {count:,} turns; the graph has {entities:,} entities")


def _progress(done: int) -> None:
    typer.echo(f"  {done} embedded", err=True)


__all__ = ["memory_app"]
