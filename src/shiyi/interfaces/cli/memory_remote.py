"""``shiyi memory ...`` through the API of the process that owns the data dir.

Used when ``shiyi serve`` or ``shiyi chat`` has the store open (see
:mod:`shiyi.interfaces.cli.remote`); prints what the local commands print.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:  # imported lazily: `shiyi --help` must stay fast
    from shiyi.api.schemas import MemoryHitOut
    from shiyi.client import Client
    from shiyi.memory.models import FactRecord


@contextmanager
def connected(config: Path | None) -> Iterator[Client | None]:
    """The owner's client (None: nobody owns the data dir, open the store here)."""
    from shiyi.client import ClientError
    from shiyi.interfaces.cli.common import fail, load
    from shiyi.interfaces.cli.remote import service_client

    client = service_client(load(config))
    if client is None:
        yield None
        return
    try:
        yield client
    except ClientError as exc:
        fail(str(exc))
    finally:
        client.close()


def hit_line(hit: MemoryHitOut) -> str:
    from shiyi.memory.present import age_text

    # The local command's line (memory_cmd._hit_line), from the wire's fields.
    kind = hit.fact_kind or hit.segment_type or hit.node
    where = f" [{hit.anchor}]" if hit.anchor else ""
    text = " ".join(hit.text.split())
    text = text if len(text) <= 110 else text[:109] + "…"
    age = age_text(hit.ts, time.time())
    state = f" [{hit.status}]" if hit.node == "fact" and hit.status != "active" else ""
    paths = ",".join(hit.paths)
    return f"{hit.score:.4f}  {hit.id:<20} {kind:<12} {age:>9}  {text}{state}{where}  ({paths})"


def search(
    client: Client, query: str, mode: str, kinds: list[str] | None, limit: int, as_json: bool
) -> None:
    hits = client.memory_search(query, mode=mode, limit=limit, kinds=kinds)
    for hit in hits:
        typer.echo(hit.model_dump_json() if as_json else hit_line(hit))
    if not hits and not as_json:
        typer.echo("No memories matched.")


def add(client: Client, text: str, kind: str, key: str, scope: str) -> None:
    fact = client.memory_add(text, kind=kind, key=key, scope=scope)
    shown = f"{fact.key}: {fact.value}" if fact.key else fact.value  # FactRecord.text
    typer.echo(f"remembered {fact.id} ({fact.kind}): {shown}")


def show(client: Client, memory_id: str) -> None:
    from shiyi.client import NotFoundError

    try:
        record = client.memory_get(memory_id)
    except NotFoundError:
        from shiyi.interfaces.cli.common import fail

        fail(f"no memory with id {memory_id!r}; `shiyi memory search` shows ids")
    typer.echo(record.model_dump_json(indent=2))


def expand(client: Client, anchor: str, window: int) -> None:
    for event in client.memory_expand(anchor, window):
        anchor = f"{event.run_id}:{event.iteration}:{event.segment}"
        typer.echo(f"[{anchor}] {event.role}: {event.content}")


def forget(client: Client, ids: list[str]) -> None:
    from shiyi.client import NotFoundError

    deleted, notes = 0, dict[str, None]()
    for memory_id in ids:
        try:
            done = client.memory_delete(memory_id)
        except NotFoundError:
            continue
        deleted += 1
        if done.note:
            notes[done.note] = None
    typer.echo(f"deleted {deleted} of {len(ids)}")
    for note in notes:  # the server cannot compact while it serves: say how to
        typer.echo(f"  note: {note}")


def forget_matching(client: Client, by: str, text: str, limit: int, yes: bool) -> None:
    """``forget --query/--entity`` through the running service: list, ask, forget."""
    from shiyi.client import NotFoundError
    from shiyi.interfaces.cli.common import fail

    try:
        found = client.memory_forget(by, text, limit=limit, dry_run=True)
    except NotFoundError as exc:
        fail(str(exc))
    for hit in found.hits:
        typer.echo(f"{hit.id}  {hit.text[:100]}")
    described = f"{found.events} events, {found.facts} facts ({found.target})"
    if not yes and not typer.confirm(f"Forget {described} for good?"):
        raise typer.Exit(1)
    done = client.memory_forget(by, text, limit=limit).forgotten
    typer.echo(f"forgot {found.target}: {done.deleted if done else 0} deleted")
    if done is not None and done.note:  # the server cannot compact while it serves
        typer.echo(f"  note: {done.note}")


def stats(client: Client) -> None:
    for name, value in client.memory_health().counts.items():
        typer.echo(f"{name:<18} {value}")


def health(client: Client, as_json: bool) -> None:
    from dataclasses import asdict

    from shiyi.index.cache_stats import CacheRate
    from shiyi.memory.lifecycle.health import MemoryHealth, health_lines

    detail = client.memory_health().detail
    if detail is None:
        typer.echo("memory is disabled on the server (memory.enabled is false)")
        return
    fields = detail.model_dump()
    # The server's answer as the report this process would have made (its caches' rates).
    caches = [CacheRate(**rate) for rate in fields.pop("caches", [])]
    report = MemoryHealth(**fields, caches=caches)
    if as_json:
        typer.echo(json.dumps(asdict(report), ensure_ascii=False))
    else:
        for line in health_lines(report):
            typer.echo(line)


def history(client: Client, key: str, entity: str) -> None:
    from dataclasses import fields

    from shiyi.memory.models import FactRecord

    facts = client.memory_history(key=key, entity=entity)
    if not facts:
        typer.echo("no facts for that slot")
    # The wire carries what the page shows too (source counts, successor): not record fields.
    known = {f.name for f in fields(FactRecord)}
    for fact in facts:
        values = {k: v for k, v in fact.model_dump().items() if k in known}
        typer.echo(history_line(FactRecord(**values)))


def history_line(fact: FactRecord) -> str:
    """One version of a fact slot: when it held, its status, its text."""
    since = _day(fact.valid_from or fact.created_at)
    until = _day(fact.valid_to) if fact.valid_to else "now"
    return f"{since} → {until:<10}  {fact.status:<10}  {fact.text}  ({fact.id})"


def _day(ts: float) -> str:
    return time.strftime("%Y-%m-%d", time.localtime(ts))


def jobs(client: Client, retry: bool, run: bool) -> None:
    """Like the local command; ``--run`` waits until the service's worker (which processes
    jobs anyway) has done every job that is due; deferred ones keep their turn there."""
    from shiyi.interfaces.cli.memory_work import queue_lines
    from shiyi.memory.jobs import JobBacklog, JobSummary

    if retry:
        typer.echo(f"re-queued {client.memory_retry_jobs().requeued} failed jobs")
    queue = client.memory_jobs()
    deadline = time.monotonic() + 3600
    while run and queue.ready:
        if time.monotonic() > deadline:
            break
        time.sleep(0.2)
        queue = client.memory_jobs()
    for line in queue_lines(
        [JobSummary(r.kind, r.status, r.count) for r in queue.summary],
        [JobBacklog(**w.model_dump()) for w in queue.waiting],
        queue.runnable,
        served=True,
    ):
        typer.echo(line)
    for failed in queue.failed:
        typer.echo(
            f"failed #{failed.id} {failed.kind} after {failed.attempts}: {failed.last_error}"
        )
