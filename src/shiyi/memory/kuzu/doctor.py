"""``shiyi doctor`` for the embedded store: count every copy of the memory, find where they
disagree, and repair what can be rebuilt.

The graph (``graph.kuzu``) is the source of truth; ``memory.sqlite3`` holds copies made from
it (the event mirror, the keyword index) beside things of its own (the job queue, the
embedding cache).  What a copy lacks is copied again; what a copy holds that the graph lost
is copied back into the graph (the mirror is never stale: deletes clear it first).  Missing
vectors are queued for the worker.  Nothing is deleted except keyword documents of nodes
that no longer exist, and a damaged graph is only moved aside on ``--rebuild-graph``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from shiyi.errors import StorageError
from shiyi.index.embeddings.cache import EmbeddingCache
from shiyi.index.sqlite_file import EMPTY, file_damage, quick_check
from shiyi.memory.intake.worker import EMBED, INGEST
from shiyi.memory.kuzu.guard import damaged_sqlite_message
from shiyi.memory.kuzu.jobs import SqliteJobQueue
from shiyi.memory.kuzu.rebuild import graph_damage, move_damaged, rebuild_graph
from shiyi.memory.kuzu.store import GRAPH_NAME, SQLITE_NAME, EmbeddedStore
from shiyi.memory.lifecycle.forget import Forgetter
from shiyi.memory.lifecycle.forget_files import DataPaths
from shiyi.memory.lifecycle.forget_journal import ForgetJournal, journal_dir, tombstones
from shiyi.memory.lock import StoreLock
from shiyi.memory.models import EventRecord
from shiyi.memory.scopes import owner_of
from shiyi.memory.text.contextual import indexed_texts

_EMBED_CHUNK = 64


@dataclass(slots=True)
class Finding:
    """One disagreement; ``fixed`` says what the repair did ("" while it remains)."""

    where: str
    problem: str
    fixed: str = ""


@dataclass(slots=True)
class DoctorReport:
    directory: Path
    counts: list[tuple[str, str]] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)

    @property
    def remaining(self) -> list[Finding]:
        return [f for f in self.findings if not f.fixed]

    def add(self, where: str, problem: str, repair: Callable[[], str] | None = None) -> None:
        self.findings.append(Finding(where, problem, repair() if repair is not None else ""))


@dataclass(frozen=True, slots=True)
class DoctorOptions:
    dimension: int
    embedding_model: str
    lock_timeout: float = 5.0
    repair: bool = False
    rebuild_graph: bool = False
    rebuild_sqlite: bool = False
    sessions_db: Path | None = None
    """The session log a pending forget still deletes messages from."""
    summaries_db: Path | None = None
    embeds: bool = True
    """An embedder is configured (``memory.embedder`` is not ``none``): only then is a turn
    without a vector a problem; with none, no process would ever embed it."""

    @property
    def repairing(self) -> bool:
        return self.repair or self.rebuild_graph or self.rebuild_sqlite


def examine(directory: Path, options: DoctorOptions) -> DoctorReport:
    """Check (and with ``options.repair`` fix) the embedded store in ``directory``."""
    report = DoctorReport(directory)
    sqlite_path = directory / SQLITE_NAME
    lock = StoreLock(directory)
    lock.acquire(timeout=options.lock_timeout)
    try:
        if not _sqlite_usable(sqlite_path, report, options) or not _graph_usable(report, options):
            lock.release()
            return report
        store = EmbeddedStore(
            directory,
            dimension=options.dimension,
            embedding_model=options.embedding_model,
            lock=lock,
        )
    except BaseException:
        lock.release()
        raise
    try:
        jobs = SqliteJobQueue(sqlite_path)
        try:
            forgotten = _check_forgets(store, jobs, report, options)
            _examine_open(store, jobs, report, options, forgotten)
        finally:
            jobs.close()
        _examine_cache(sqlite_path, report)
    finally:
        store.close()
    return report


def _sqlite_usable(path: Path, report: DoctorReport, options: DoctorOptions) -> bool:
    damage = _sqlite_damage(path)
    if damage is None:
        return True
    graph = path.with_name(GRAPH_NAME)
    if not options.rebuild_sqlite:
        report.add(SQLITE_NAME, damaged_sqlite_message(path, damage))
        return False
    if not graph.exists() or graph.stat().st_size == 0:
        report.add(
            SQLITE_NAME,
            f"{path} is damaged ({damage}) and {graph} is missing or empty, so neither can "
            "be rebuilt from the other: restore them from a backup (nothing was moved)",
        )
        return False

    def move() -> str:
        moved = move_damaged(path)
        name = moved.name if moved is not None else "nowhere"
        return (
            f"moved it to {name}; the mirror is copied again from the graph as the store "
            "opens, and the checks below re-index it"
        )

    report.add(SQLITE_NAME, f"{path} is damaged ({damage})", move)
    return True


def _sqlite_damage(path: Path) -> str | None:
    """SQLite's own verdict on the file (``quick_check``), or None when it is sound."""
    if not path.exists():
        return None
    damage = file_damage(path)
    graph = path.with_name(GRAPH_NAME)
    if damage == EMPTY and not (graph.exists() and graph.stat().st_size > 0):
        damage = None  # a first start cut off: no graph either
    if damage is not None:
        return damage
    try:
        verdict = quick_check(path)
    except sqlite3.Error as exc:
        verdict = [str(exc)]
    return None if verdict == ["ok"] else "; ".join(verdict[:3])


def _graph_usable(report: DoctorReport, options: DoctorOptions) -> bool:
    graph_path = report.directory / GRAPH_NAME
    sqlite_path = report.directory / SQLITE_NAME
    damage = graph_damage(graph_path, sqlite_path)
    if damage is None:
        return True
    if not options.rebuild_graph:
        report.add(GRAPH_NAME, damage)
        return False

    def rebuild() -> str:
        done = rebuild_graph(
            graph_path,
            sqlite_path,
            dimension=options.dimension,
            embedding_model=options.embedding_model,
            forgotten=tombstones(report.directory),
        )
        aside = f"moved the damaged file to {done.moved_to.name}; " if done.moved_to else ""
        return (
            f"{aside}rebuilt {done.events:,} turns, {done.mentions:,} entity links, "
            f"{done.facts:,} facts and {done.relations:,} relations from {SQLITE_NAME}"
        )

    report.add(GRAPH_NAME, damage.split(". ")[0], rebuild)
    return True


def _check_forgets(
    store: EmbeddedStore, jobs: SqliteJobQueue, report: DoctorReport, options: DoctorOptions
) -> set[str]:
    """Forgets a killed process left unfinished: finished on repair, else reported.

    Returns the ids the other checks must leave out (a pending forget's tombstones), so
    no repair copies a half-forgotten memory back from a store that still holds it."""
    journal = ForgetJournal(journal_dir(report.directory))
    pending = journal.pending()
    if not pending:
        return set()
    ids = {i for _, entry in pending for i in entry.ids}

    def finish() -> str:
        paths = DataPaths(options.sessions_db, options.summaries_db, journal.directory)
        done = Forgetter(store, jobs, None, paths, lambda _q, _n: []).resume_pending()
        return f"finished them: {len(ids):,} memories are gone from every store" + (
            " (their bytes stay in graph.kuzu until `shiyi memory compact`)"
            if any(r.bytes_remain for r in done)
            else ""
        )

    what = (
        f"{len(pending):,} forget(s) of {len(ids):,} memories did not finish (the process "
        "was stopped half way): some stores may still hold them"
    )
    report.add("forget journal", what, finish if options.repairing else None)
    return set() if options.repairing else ids


def _examine_open(
    store: EmbeddedStore,
    jobs: SqliteJobQueue,
    report: DoctorReport,
    options: DoctorOptions,
    forgotten: set[str],
) -> None:
    repair = options.repairing
    counts = store.graph.counts()
    graph_events = {
        e.id: e for batch in store.graph.all_events() for e in batch if e.id not in forgotten
    }
    mirrored = store.event_rows.ids() - forgotten
    fact_ids = set(store.graph.fact_ids(10**9)) - forgotten
    keyword = {i: n for i, n in _keyword_docs(store).items() if i not in forgotten}
    report.counts += [
        (GRAPH_NAME, _spread(counts, ("events", "facts", "entities", "relations", "sessions"))),
        ("  vectors", _vectors(counts)),
        (SQLITE_NAME, f"mirror {len(mirrored):,} events  {store.fact_rows.count():,} facts"),
        ("  keyword index", f"events {_count(keyword, 'event')}  facts {_count(keyword, 'fact')}"),
        ("  jobs", f"queued {jobs.pending_count():,}  failed {_failed(jobs):,}"),
    ]
    _check_mirror(store, graph_events, mirrored, report, repair)
    _check_fact_copy(store, fact_ids, forgotten, report, repair)
    # Turns only the mirror holds are not stale for the index: a repair puts them back.
    _check_keywords(store, set(graph_events) | mirrored, fact_ids, keyword, report, repair)
    if options.embeds:
        _check_vectors(store, jobs, report, repair)
    _check_jobs(jobs, report, repair)


def _check_mirror(
    store: EmbeddedStore,
    graph_events: dict[str, EventRecord],
    mirrored: set[str],
    report: DoctorReport,
    repair: bool,
) -> None:
    short = [i for i in graph_events if i not in mirrored]
    if short:
        events = store.graph.get_events(short)
        report.add(
            "event mirror",
            f"{len(short):,} turns of the graph are missing from the mirror",
            (lambda: _mirror_add(store, events)) if repair else None,
        )
    lost = sorted(mirrored - set(graph_events))
    if lost:
        records = list(store.event_rows.get(lost).values())
        report.add(
            GRAPH_NAME,
            f"{len(lost):,} turns the mirror holds are missing from the graph",
            (lambda: _graph_add(store, records)) if repair else None,
        )


def _check_fact_copy(
    store: EmbeddedStore,
    fact_ids: set[str],
    forgotten: set[str],
    report: DoctorReport,
    repair: bool,
) -> None:
    """Facts of the graph the SQLite copy lacks (a crash between the two writes: a graph
    rebuilt now would lose them), and facts the copy holds that the graph lost."""
    copied = store.fact_rows.ids() - forgotten
    short = sorted(fact_ids - copied)
    if short:

        def copy() -> str:
            store.fact_rows.put(store.graph.get_facts(short))
            return f"copied {len(short):,} facts into {SQLITE_NAME}"

        what = f"{len(short):,} facts of the graph are missing from {SQLITE_NAME}'s copy"
        report.add("fact copy", what, copy if repair else None)
    lost = copied - fact_ids
    if lost:
        what = f"{len(lost):,} facts {SQLITE_NAME} holds are missing from the graph"
        report.add(GRAPH_NAME, what, (lambda: _facts_back(store, lost)) if repair else None)


def _facts_back(store: EmbeddedStore, lost: set[str]) -> str:
    facts = [f for batch in store.fact_rows.all() for f in batch if f.id in lost]
    store.upsert_facts(facts)  # the graph, the copy and the keyword index
    store.add_supersedes([p for p in store.fact_rows.supersedes() if lost.intersection(p)])
    return f"put {len(facts):,} facts back into the graph (the worker embeds them again)"


def _mirror_add(store: EmbeddedStore, events: list[EventRecord]) -> str:
    store.event_rows.add(events)
    return f"copied {len(events):,} turns into the mirror"


def _graph_add(store: EmbeddedStore, records: list[EventRecord]) -> str:
    added = store.add_events(records)
    return f"copied {added:,} turns back into the graph (their vectors are queued below)"


def _check_keywords(
    store: EmbeddedStore,
    event_ids: set[str],
    fact_ids: set[str],
    keyword: dict[str, str],
    report: DoctorReport,
    repair: bool,
) -> None:
    events = sorted(event_ids - {i for i, n in keyword.items() if n == "event"})
    facts = sorted(fact_ids - {i for i, n in keyword.items() if n == "fact"})
    stale = sorted(i for i in keyword if i not in event_ids and i not in fact_ids)
    if events or facts:

        def index() -> str:
            records = store.get_events(events)
            texts = indexed_texts(records)
            store.keywords.add(
                [(e.id, "event", t) for e, t in zip(records, texts, strict=True)],
                {e.id: owner_of(e) for e in records},
            )
            found = store.get_facts(facts)
            store.keywords.add(
                [(f.id, "fact", f.text) for f in found], {f.id: owner_of(f) for f in found}
            )
            return f"indexed {_turns_and_facts(events, facts)} again"

        what = f"{_turns_and_facts(events, facts)} are missing from it"
        report.add("keyword index", what, index if repair else None)
    if stale:

        def drop() -> str:
            return f"removed {store.keywords.delete(stale):,} documents"

        what = f"{len(stale):,} documents name turns or facts that no longer exist"
        report.add("keyword index", what, drop if repair else None)


def _check_vectors(
    store: EmbeddedStore, jobs: SqliteJobQueue, report: DoctorReport, repair: bool
) -> None:
    missing = [e.id for e in store.graph.events_missing_embeddings(10**9)]
    facts = store.graph.facts_missing_embeddings(10**9)
    if not (missing or facts) or jobs.pending_count([INGEST, EMBED]):
        return  # none missing, or the worker still owes them

    def queue() -> str:
        for node, ids in (("event", missing), ("fact", facts)):
            for start in range(0, len(ids), _EMBED_CHUNK):
                jobs.enqueue(EMBED, {"node": node, "ids": ids[start : start + _EMBED_CHUNK]})
        what = _turns_and_facts(missing, facts)
        return f"queued {what} for embedding (the next shiyi process does it)"

    what = f"{_turns_and_facts(missing, facts)} have no vector and no job will embed them"
    report.add("vectors", what, queue if repair else None)


def _check_jobs(jobs: SqliteJobQueue, report: DoctorReport, repair: bool) -> None:
    failed = _failed(jobs)
    if failed:

        def retry() -> str:
            return f"queued {jobs.retry_failed():,} failed jobs again"

        what = f"{failed:,} jobs failed (see `shiyi memory jobs`)"
        report.add("jobs", what, retry if repair else None)


def _examine_cache(sqlite_path: Path, report: DoctorReport) -> None:
    try:
        cache = EmbeddingCache(sqlite_path)  # rebuilds a damaged table by itself
    except StorageError as exc:
        report.add("embedding cache", str(exc))
        return
    try:
        if cache.disabled:
            report.add("embedding cache", f"damaged and could not be rebuilt ({cache.disabled})")
        else:
            report.counts.append(("  embedding cache", f"{cache.count():,} vectors"))
    finally:
        cache.close()


def _turns_and_facts(events: list[str], facts: list[str]) -> str:
    parts = [(len(events), "turns"), (len(facts), "facts")]
    return " and ".join(f"{n:,} {what}" for n, what in parts if n)


def _keyword_docs(store: EmbeddedStore) -> dict[str, str]:
    with store.sqlite.errors("read the keyword index"):
        rows = store.sqlite.conn().execute("SELECT id, node FROM kw_docs")
        return {str(r[0]): str(r[1]) for r in rows}


def _failed(jobs: SqliteJobQueue) -> int:
    return sum(row.count for row in jobs.summary() if row.status == "failed")


def _count(keyword: dict[str, str], node: str) -> str:
    return f"{sum(1 for n in keyword.values() if n == node):,}"


def _spread(counts: dict[str, int], keys: tuple[str, ...]) -> str:
    return "  ".join(f"{key} {counts.get(key, 0):,}" for key in keys)


def _vectors(counts: dict[str, int]) -> str:
    kinds = ("events", "facts", "entities")
    return "  ".join(f"{k} {counts.get(f'embedded_{k}', 0):,}/{counts.get(k, 0):,}" for k in kinds)
