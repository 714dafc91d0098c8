"""``shiyi memory ...``: inspect and edit long-term memory from the terminal.

Each command calls memory's operations (:mod:`shiyi.memory.operations`) once: through the
API of the ``shiyi serve``/``shiyi chat`` owning the data dir, or over the store opened here.
``compact``, ``reindex``, ``relink``, ``migrate`` and ``forget --user`` are the operator's:
they open the store here.
"""

from __future__ import annotations

import json
import shlex
import time
from pathlib import Path
from typing import Annotated

import typer

from shiyi.api.schemas import EventOut
from shiyi.errors import NotFound
from shiyi.interfaces.cli.doctor_cmd import doctor
from shiyi.interfaces.cli.memory_import import import_
from shiyi.interfaces.cli.memory_migrate import migrate
from shiyi.interfaces.cli.memory_open import opened, operations
from shiyi.memory.operations.interface import MemoryOperations

memory_app = typer.Typer(
    help="Search, inspect and edit long-term memory.", no_args_is_help=True, rich_markup_mode=None
)
memory_app.command("migrate")(migrate)
memory_app.command("import")(import_)
memory_app.command("check")(doctor)  # the same as `shiyi doctor`
ConfigOption = Annotated[
    Path | None, typer.Option("--config", "-c", help="Config file (default: ./shiyi.yaml).")
]


@memory_app.command("search")
def search(
    query: Annotated[str, typer.Argument(help="What to look for.")],
    mode: Annotated[str, typer.Option(help="hybrid|semantic|graph|recent|keyword")] = "hybrid",
    kind: Annotated[list[str] | None, typer.Option("--kind", help="Only these kinds.")] = None,
    limit: Annotated[int, typer.Option(min=1, max=500, help="How many results.")] = 10,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON lines.")] = False,
    config: ConfigOption = None,
) -> None:
    """Search memory with the same retrieval the agent uses."""
    from shiyi.index.spelling import reading_note
    from shiyi.interfaces.cli.common import fail
    from shiyi.interfaces.cli.memory_lines import hit_line
    from shiyi.memory.models import FACT_KINDS
    from shiyi.memory.recall.config import MODES

    if not query.strip():
        fail("the query is empty: say what to look for")
    if mode not in MODES:
        fail(f"unknown --mode {mode!r}; use one of {', '.join(MODES)}")
    for wrong in [k for k in kind or [] if k not in FACT_KINDS]:
        fail(f"--kind {wrong!r} is not a memory kind; use one of {', '.join(FACT_KINDS)}")
    with operations(config) as ops:
        hits = ops.search(query, mode=mode, kinds=kind, limit=limit)  # type: ignore[arg-type]
        read = ops.read_as(query)
    if read and not as_json:
        typer.echo(reading_note(read), nl=False)
    for hit in hits:
        typer.echo(hit.model_dump_json() if as_json else hit_line(hit))
    if not hits and not as_json:
        typer.echo("No memories matched.")


@memory_app.command("list")
def list_(
    kind: Annotated[list[str] | None, typer.Option("--kind", help="Only these kinds.")] = None,
    scope: Annotated[
        list[str] | None,
        typer.Option("--scope", help="Only these scopes (user, agent, workspace)."),
    ] = None,
    status: Annotated[
        list[str] | None,
        typer.Option(
            "--status", help="active|pending|superseded|expired (default: active and pending)."
        ),
    ] = None,
    limit: Annotated[int, typer.Option(min=1, max=500, help="How many facts.")] = 50,
    offset: Annotated[int, typer.Option(min=0, help="Skip this many first.")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON lines.")] = False,
    config: ConfigOption = None,
) -> None:
    """Facts, newest change first: kind, status, scope, age and text."""
    from shiyi.interfaces.cli.common import fail
    from shiyi.interfaces.cli.memory_lines import fact_line
    from shiyi.memory.models import FACT_KINDS

    choices = (
        ("--kind", kind, FACT_KINDS),
        ("--scope", scope, ("user", "agent", "workspace")),
        ("--status", status, ("active", "pending", "superseded", "expired")),
    )
    for option, given, known in choices:
        for wrong in [g for g in given or [] if g not in known]:
            fail(f"{option} {wrong!r} is not known; use one of {', '.join(known)}")
    with operations(config) as ops:
        page = ops.list_facts(
            kinds=kind or (),  # type: ignore[arg-type]
            scopes=scope or (),  # type: ignore[arg-type]
            statuses=status or (),
            limit=limit,
            offset=offset,
        )
    for fact in page.facts:
        typer.echo(fact.model_dump_json() if as_json else fact_line(fact))
    if as_json:
        return
    if not page.facts:
        typer.echo("No facts matched.")
    shown = f"{offset + 1}-{offset + len(page.facts)}" if page.facts else "none"
    more = "" if page.complete else " (of the newest facts scanned)"
    typer.echo(f"{shown} of {page.total}{more}", err=True)


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
    from shiyi.api.schemas import too_long
    from shiyi.interfaces.cli.common import fail
    from shiyi.memory.models import FACT_KINDS

    if kind not in FACT_KINDS:
        fail(f"--kind {kind!r} is not a memory kind; use one of {', '.join(FACT_KINDS)}")
    if scope not in ("user", "agent", "workspace"):
        fail(f"--scope {scope!r} is not a scope; use user, agent or workspace")
    if why := too_long(text):  # said the same whether a server runs or not
        fail(why)
    with operations(config) as ops:
        fact = ops.add(text, kind=kind, key=key, scope=scope)  # type: ignore[arg-type]
    shown = _echoed(f"{fact.key}: {fact.value}" if fact.key else fact.value)
    if fact.outcome == "confirmed":
        typer.echo(f"already remembered {fact.id} ({fact.kind}): {shown} (confirmed, no copy made)")
        return
    typer.echo(f"remembered {fact.id} ({fact.kind}): {shown}")
    for old in fact.replaces:
        typer.echo(f"  replaces {old.id}: {_echoed(old.value)}")
    if fact.replaces and fact.key:
        typer.echo(f"  (kept in history: shiyi memory history --key {shlex.quote(fact.key)})")
    elif fact.replaces:  # a statement of no slot: no key to ask the history by
        typer.echo("  (kept in history: shiyi memory list --status superseded)")


@memory_app.command("show")
def show(
    memory_id: Annotated[str, typer.Argument(help="An event or fact id.")],
    config: ConfigOption = None,
) -> None:
    """Everything stored about one memory."""
    from shiyi.interfaces.cli.common import fail

    with operations(config) as ops:
        try:
            found = ops.get(memory_id)  # another user's or agent's: not found either
        except NotFound:
            fail(f"no memory with id {memory_id!r}; `shiyi memory search` shows ids")
    typer.echo(found.model_dump_json(indent=2))


@memory_app.command("edit")
def edit(
    memory_id: Annotated[str, typer.Argument(help="A fact id (`shiyi memory list` shows them).")],
    value: Annotated[str | None, typer.Option(help="The new text.")] = None,
    key: Annotated[str | None, typer.Option(help="The slot ('' for none).")] = None,
    kind: Annotated[str | None, typer.Option(help="preference|semantic|procedural|...")] = None,
    confidence: Annotated[float | None, typer.Option(min=0.0, max=1.0)] = None,
    config: ConfigOption = None,
) -> None:
    """Edit a fact: its text, slot, kind or confidence.  What it said before is kept as a
    superseded version (`shiyi memory history --key ...`)."""
    from shiyi.api.schemas import too_long
    from shiyi.interfaces.cli.common import fail
    from shiyi.memory.models import FACT_KINDS

    if value is None and key is None and kind is None and confidence is None:
        fail("give what to change: --value, --key, --kind and/or --confidence")
    if value is not None and not value.strip():
        fail("--value is empty: give the fact's new text (or forget it: shiyi memory forget ID)")
    if value is not None and (why := too_long(value)):
        fail(why)
    if kind is not None and kind not in FACT_KINDS:
        fail(f"--kind {kind!r} is not a memory kind; use one of {', '.join(FACT_KINDS)}")
    with operations(config) as ops:
        fact = ops.update(
            memory_id,
            key=key,
            value=value,
            kind=kind,
            confidence=confidence,
        )
    shown = _echoed(f"{fact.key}: {fact.value}" if fact.key else fact.value)
    typer.echo(f"edited {fact.id} ({fact.kind}, confidence {fact.confidence:.2f}): {shown}")


@memory_app.command("expand")
def expand(
    anchor: Annotated[str, typer.Argument(help="An anchor like run_abc:2:0.")],
    window: Annotated[int, typer.Option(help="Segments before and after.")] = 3,
    config: ConfigOption = None,
) -> None:
    """The turns around an anchored memory."""
    with operations(config) as ops:
        events = ops.expand(anchor, window)
    for event in events:
        typer.echo(
            f"[{event.run_id}:{event.iteration}:{event.segment}] {event.role}: {event.content}"
        )


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
    from shiyi.interfaces.cli.memory_lines import forget_lines, hit_line

    given = [("IDs", ids), ("--entity", entity), ("--query", query), ("--user", user)]
    for name, text in (("--entity", entity), ("--query", query), ("--user", user)):
        if text is not None and not text.strip():  # "--query ''" had read as not given
            fail(f"{name} is empty: say what to forget")
    chosen = [name for name, value in given if value]
    if len(chosen) != 1:
        got = f" (got {' and '.join(chosen)})" if chosen else ""
        fail(f"give exactly one of: IDs, --entity NAME, --query TEXT or --user ID{got}")
    if user is not None:
        return forget_user(config, user, yes=yes, compact=compact)
    with operations(config, compact=compact) as ops:
        if ids:
            _list_or_fail(ops, ids)
            if not yes and not typer.confirm(f"Delete {_count(len(ids), 'memory')} for good?"):
                raise typer.Exit(1)
            done = ops.forget_ids(ids)
            typer.echo(f"deleted {len(done.forgotten_ids)} of {len(ids)}")
        else:
            by, text = ("entity", entity) if entity else ("query", query)
            assert text is not None
            try:
                found = ops.forget(by, text, limit=limit, dry_run=True)  # type: ignore[arg-type]
            except NotFound as exc:
                fail(str(exc))
            for hit in found.hits:
                typer.echo(hit_line(hit))
            described = f"{_count(found.events, 'event')}, {_count(found.facts, 'fact')}"
            if not yes and not typer.confirm(f"Forget {described} for good?"):
                raise typer.Exit(1)
            forgotten = ops.forget(by, text, limit=limit).forgotten  # type: ignore[arg-type]
            assert forgotten is not None
            done = forgotten
            typer.echo(f"forgot {found.target}")
    for line in forget_lines(done):
        typer.echo(line)


_ECHOED = 300


def _echoed(text: str) -> str:
    """``text`` as an answer repeats it: whole when short, else its start and its length (a
    50,000-character memory was printed back in full)."""
    if len(text) <= _ECHOED:
        return text
    return f"{text[:_ECHOED]}… ({len(text):,} characters, `shiyi memory show` for all)"


def _count(n: int, noun: str) -> str:
    if noun.endswith("y"):
        return f"{n} {noun[:-1]}{'y' if n == 1 else 'ies'}"
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _list_or_fail(ops: MemoryOperations, ids: list[str]) -> None:
    """Each memory about to be deleted, one line each; a clear error and nothing deleted
    when an id names none of the caller's memories (a typo said "deleted 0 of 1")."""
    from shiyi.interfaces.cli.common import fail

    missing: list[str] = []
    for memory_id in ids:
        try:
            found = ops.get(memory_id)
        except NotFound:
            missing.append(memory_id)
            continue
        text = found.content if isinstance(found, EventOut) else found.value
        typer.echo(f"  {memory_id}  {' '.join(text.split())[:100]}")
    if missing:
        names = ", ".join(repr(m) for m in missing)
        fail(f"no memory with id {names}; nothing was deleted (`shiyi memory search` shows ids)")


def forget_user(config: Path | None, user: str, *, yes: bool, compact: bool) -> None:
    """Every memory and session of one user: the store's operator's erasure, so it opens
    the store here (not through a server, whose callers act as themselves)."""
    with opened(config) as memory:
        forgetter = memory.forgetter()
        plan = forgetter.plan_user(user)
        if not yes and not typer.confirm(f"Forget {plan.describe()} for good?"):
            raise typer.Exit(1)
        report = memory.forget_user(user, compact=compact)
        typer.echo(f"forgot {plan.target}")
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


@memory_app.command("export")
def export(
    out: Annotated[Path | None, typer.Option("--out", "-o", help="File (default: stdout).")] = None,
    config: ConfigOption = None,
) -> None:
    """Every event and fact the configured user and agent may see, as JSON lines (events
    oldest first, then facts); a file is written readable by its owner only (0600)."""
    from shiyi.interfaces.cli.common import fail

    if out is not None and (why := _cannot_write(out)):
        fail(why)
    with operations(config) as ops:
        lines = ops.export()
    if out is None:
        for line in lines:
            typer.echo(line)
    else:
        _write_private(out, "\n".join(lines) + "\n")
        typer.echo(f"wrote {len(lines)} records to {out}")


def _cannot_write(out: Path) -> str:
    """Why the export cannot go to ``out`` (said before the store is read), or ""."""
    if out.is_dir():
        return f"{out} is a folder: give a file name, like -o {out / 'memories.jsonl'}"
    if not out.parent.is_dir():
        return f"the folder {out.parent} does not exist: make it first, or write elsewhere"
    return ""


def _write_private(out: Path, text: str) -> None:
    """``text`` into ``out``, mode 0600: an export holds every memory (it had been 0644 beside
    a 0700 data dir)."""
    import os

    fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)


@memory_app.command("stats")
def stats(config: ConfigOption = None) -> None:
    """Counts of events, entities, facts, vectors and queued jobs."""
    from shiyi.interfaces.cli.memory_lines import counts

    with operations(config) as ops:
        detail = ops.health()
    for name, value in counts(detail).items():
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

    from shiyi.interfaces.cli.memory_lines import health_report
    from shiyi.memory.lifecycle.health import health_lines

    with operations(config) as ops:
        report = health_report(ops.health())
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
    from shiyi.interfaces.cli.memory_lines import history_line

    if not key and not entity:
        fail("give --key SLOT and/or --entity NAME (see `shiyi memory search` for fact keys)")
    with operations(config) as ops:
        facts = ops.history(key=key, entity=entity)
    if not facts:
        typer.echo("no facts for that slot")
    for fact in facts:
        typer.echo(history_line(fact))


@memory_app.command("jobs")
def jobs(
    retry: Annotated[bool, typer.Option(help="Queue failed jobs again.")] = False,
    run: Annotated[bool, typer.Option(help="Process queued jobs now.")] = False,
    config: ConfigOption = None,
) -> None:
    """The background queue per kind: pending, running, failed and done; how long the oldest
    has waited and why (no extraction model, a retry delay); failed jobs' errors."""
    from shiyi.interfaces.cli.memory_work import queue_lines
    from shiyi.memory.jobs import JobBacklog, JobSummary

    with operations(config) as ops:
        if retry:
            typer.echo(f"re-queued {ops.retry_jobs().requeued} failed jobs")
        queue = ops.run_jobs(3600) if run else ops.jobs()
    for line in queue_lines(
        [JobSummary(r.kind, r.status, r.count) for r in queue.summary],
        [JobBacklog(**w.model_dump()) for w in queue.waiting],
        queue.runnable,
        served=queue.worker_running,
    ):
        typer.echo(line)
    for failed in queue.failed:
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
    """Link every stored turn to its names and topics again and index its words again (after
    an upgrade that links more or reads text differently: older turns and facts reach the
    graph and keyword paths as new ones do only after this)."""
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
