"""Forgetting: a hard delete of memories from every place that holds them (seed 001).

Targets: event/fact ids, an entity (the facts about it, the events mentioning it and the node),
the hits of a search, or everything of one user.  What :meth:`Forgetter.execute` removes:

* the Kuzu graph: events and facts with their edges and vectors; the entity nodes asked for and
  entities nothing but the forgotten memories referred to (their names came from the forgotten
  text), with MENTIONS, ABOUT, RELATED_TO and EntityVec; for a user, their emptied sessions;
* the in-memory vector cache (through the store's ``delete``);
* the SQLite FTS5 keyword index, then ``optimize`` so the tokens leave the index segments;
* the embedding cache: rows keyed by the content hash of every forgotten text;
* the job queue: forgotten ids and events out of every payload (any status), empty jobs deleted;
* the echoes of what goes: derived turns quoting it (a ``query_memory`` result, a reply
  repeating it; :mod:`~shiyi.memory.lifecycle.forget_echoes`), with all of the below;
* facts derived from them: those every source of which is forgotten, and every run archive
  citing one of them (an archive quotes its run's goal and answer verbatim); a fact with
  other, remaining sources only loses its DERIVED_FROM edge to the forgotten event;
* the session log: the message rows behind forgotten events (:func:`logged_rows`, with the
  run goals and session titles quoting them) and, for a user, their sessions, runs and messages;
* the context summaries cache, cleared whenever events go (its summaries may quote them).

Every SQLite file touched is then VACUUMed and its WAL truncated (``secure_delete`` on), so the
text does not survive in the files' bytes.  Kuzu 0.11.3 has no VACUUM: deleted rows are masked
but their column bytes stay in ``graph.kuzu`` (measured, also after a CHECKPOINT), so a forget
with ``compact=True`` (the CLI's default) then rewrites the graph file through EXPORT/IMPORT
(:mod:`shiyi.memory.kuzu.compact`); without it the text is unreachable by every query but its
bytes remain until the file is compacted, which the report says (:meth:`ForgetReport.lines`,
``bytes_remain``) with the command that does it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shiyi.errors import NothingToForget, StorageError
from shiyi.index.embeddings.cache import CachedEmbedder, EmbeddingCache, content_hash
from shiyi.index.text import stem_word, tokenize
from shiyi.memory.intake.segments import logged_rows, parse_event_id
from shiyi.memory.jobs import JobQueue
from shiyi.memory.lifecycle.forget_echoes import echoes_of
from shiyi.memory.lifecycle.forget_journal import ForgetEntry, ForgetJournal, unique
from shiyi.memory.models import EventRecord, FactRecord, MemoryHit
from shiyi.memory.protocol import Embedder, MemoryStore
from shiyi.memory.text.contextual import indexed_texts
from shiyi.sessions.log import SessionLog
from shiyi.sessions.run_files import rewrite_run_files, runs_root

Search = Callable[[str, int], list[MemoryHit]]
_QUERY_POOL, _QUERY_POOL_MIN = 4, 20
"""A forget by query searches ``limit * 4`` (at least 20) hits and keeps the matching ones."""
_TEXT_KEYS = frozenset({"goal", "text", "content", "value", "message", "query"})
"""Job payload keys holding free text: a job whose such value is a forgotten text goes."""


COMPACT_HINT = (
    "no search finds the forgotten text any more, but its bytes remain on disk in {files} "
    "until compacted: stop `shiyi serve` (if it runs) and run `shiyi memory compact`"
)


MEM0_LEDGER = "mem0.sqlite3"
"""The mem0 API's ledger's file name in the memory folder (``shiyi.compat.mem0.ledger``)."""


@dataclass(slots=True, frozen=True)
class DataPaths:
    """Files outside the memory store that can hold memories' text."""

    sessions_db: Path | None = None
    summaries_db: Path | None = None
    journal_dir: Path | None = None
    """Where forgets are journaled before they delete (None: not journaled)."""
    mem0_ledger: Path | None = None
    """``shiyi.compat.mem0``'s ledger (metadata and change history by memory id), when the
    mem0-shaped API keeps it in its default place beside the store."""


@dataclass(slots=True)
class ForgetPlan:
    """What one forget will delete; shown to the user before :meth:`Forgetter.execute`."""

    target: str
    event_ids: list[str] = field(default_factory=list)
    fact_ids: list[str] = field(default_factory=list)
    queued_ids: list[str] = field(default_factory=list)
    """Requested ids not in the graph: maybe still queued, so taken out of the job queue."""
    entity_names: list[str] = field(default_factory=list)
    user_id: str | None = None
    texts: list[str] = field(default_factory=list)
    """Further texts whose embeddings go (the query of a forget by query)."""
    hits: list[MemoryHit] = field(default_factory=list)

    def describe(self) -> str:
        parts = [_count(len(self.event_ids), "event"), _count(len(self.fact_ids), "fact")]
        if self.entity_names:
            parts.append("entity " + ", ".join(self.entity_names))
        if self.user_id is not None:
            parts.append(f"every session of user {self.user_id!r}")
        return ", ".join(parts)


@dataclass(slots=True)
class ForgetReport:
    """How many records each store lost."""

    target: str
    events: int = 0
    facts: int = 0
    entities: int = 0
    graph_sessions: int = 0
    keyword_docs: int = 0
    embeddings: int = 0
    jobs_edited: int = 0
    jobs_deleted: int = 0
    messages: int = 0
    log_sessions: int = 0
    summaries: int = 0
    run_files: int = 0
    """Readable run files rendered again (or removed) without the forgotten messages."""
    archives: int = 0
    """Run archives among ``facts``: episodic memories quoting a forgotten message."""
    sessions: list[str] = field(default_factory=list)
    """Sessions whose events were forgotten: a live agent's transcript of them is stale."""
    graph_file: str = ""
    """The store file keeping deleted rows' bytes until compacted ("" if none does)."""
    compacted: bool = False
    """The graph file was rewritten, so no bytes of the deleted records remain in it."""
    wal_busy: list[str] = field(default_factory=list)
    """SQLite files whose WAL another connection kept from being truncated."""

    @property
    def bytes_remain(self) -> list[str]:
        """Files that may still hold the forgotten text's bytes (unreachable by any query)."""
        graph = [self.graph_file] if self.graph_file and self.total and not self.compacted else []
        return [*graph, *self.wal_busy]

    @property
    def total(self) -> int:
        """Events and facts deleted from the graph."""
        return self.events + self.facts

    def lines(self) -> list[str]:
        rows = [
            ("graph", f"{self.events} events, {self.facts} facts, {self.entities} entities, "
                      f"{self.graph_sessions} sessions"),
            ("keyword index", f"{self.keyword_docs} documents"),
            ("embedding cache", f"{self.embeddings} vectors"),
            ("job queue", f"{self.jobs_edited} jobs edited, {self.jobs_deleted} deleted"),
            ("session log", f"{self.messages} messages, {self.log_sessions} sessions"),
            ("run files", f"{self.run_files} rewritten"),
            ("summaries", f"{self.summaries} cached summaries"),
        ]  # fmt: skip
        if self.compacted:
            rows.append(("graph file", "rewritten without the deleted records"))
        if self.archives:
            rows.append(("run archives", f"{self.archives} quoting forgotten messages"))
        lines = [f"  {name:<16} {text}" for name, text in rows]
        lines += [f"  warning: {path} still has a WAL (another process reads it)"
                  for path in self.wal_busy]  # fmt: skip
        if self.bytes_remain:
            lines.append(f"  note: {COMPACT_HINT.format(files=', '.join(self.bytes_remain))}")
        return lines


class Forgetter:
    """Plans and executes hard deletes over the store and the files beside it."""

    def __init__(
        self,
        store: MemoryStore,
        jobs: JobQueue,
        embedder: Embedder | None,
        paths: DataPaths,
        search: Search,
        owners: Collection[str] | None = None,
    ) -> None:
        """``owners``: the owner tags of the memories the forgetting viewer sees (echoes
        are looked for among theirs); None: every owner's (maintenance)."""
        self.store = store
        self.jobs = jobs
        self.embedder = embedder
        self.paths = paths
        self.search = search
        self.owners = owners

    # --- planning ------------------------------------------------------------------------

    def plan_ids(self, ids: Sequence[str]) -> ForgetPlan:
        wanted = list(dict.fromkeys(ids))
        events = [e.id for e in self.store.get_events(wanted)]
        facts = [f.id for f in self.store.get_facts(wanted)]
        known = {*events, *facts}
        queued = [i for i in wanted if i not in known]
        events += self._echoes(events, facts)
        facts += self._derived_only_from(events, facts)
        return ForgetPlan(f"ids {', '.join(wanted)}", events, facts, queued_ids=queued)

    def plan_entity(self, name: str) -> ForgetPlan:
        entities = [e.name for e in self.store.find_entities([name])]
        if not entities:
            raise NothingToForget(
                f"no entity named {name!r} in memory; `shiyi memory search {name!r} --mode "
                "graph` shows what is stored about it, and --query forgets by search instead"
            )
        facts: dict[str, None] = {}
        events: dict[str, None] = {}
        for entity in entities:
            about, mentioning = self.store.entity_footprint(entity)
            facts.update(dict.fromkeys(about))
            events.update(dict.fromkeys(mentioning))
        events.update(dict.fromkeys(self._echoes(list(events), list(facts))))
        facts.update(dict.fromkeys(self._derived_only_from(list(events), list(facts))))
        return ForgetPlan(f"entity {name!r}", list(events), list(facts), entity_names=entities)

    def plan_query(self, query: str, limit: int = 5) -> ForgetPlan:
        """The search's hits that contain every word of ``query`` (up to ``limit``).

        A search ranks weak, unrelated hits too (a semantic neighbour, a recent turn) to
        fill its limit; a forget must take only what the words name, so each hit's text is
        checked for every search term of the query (stemmed as the keyword index stems)."""
        wanted = _terms(query)
        found = self.search(query, max(limit * _QUERY_POOL, _QUERY_POOL_MIN)) if wanted else []
        hits = [h for h in found if wanted <= _terms(h.text)][:limit]
        if not hits:
            near = f" ({len(found)} weaker hits do not contain them)" if found else ""
            raise NothingToForget(
                f"no memory contains every word of {query!r}{near}, so nothing was "
                "forgotten; `shiyi memory search` shows what is stored, and forgetting by "
                "id (`shiyi memory forget ID`) takes exactly the memories you name"
            )
        events = [h.id for h in hits if h.node == "event"]
        facts = [h.id for h in hits if h.node == "fact"]
        events += self._echoes(events, facts, query)
        facts += self._derived_only_from(events, facts)
        return ForgetPlan(f"query {query!r}", events, facts, texts=[query], hits=hits)

    def plan_user(self, user_id: str) -> ForgetPlan:
        facts, events = self.store.user_footprint(user_id)
        if not facts and not events:
            raise NothingToForget(
                f"no memories of user {user_id!r}; user ids come from memory.user_id in the "
                "configuration of the agent that recorded them"
            )
        return ForgetPlan(f"user {user_id!r}", events, facts, user_id=user_id)

    def _echoes(self, event_ids: list[str], fact_ids: list[str], *texts: str) -> list[str]:
        """Derived turns quoting what goes (:mod:`~shiyi.memory.lifecycle.forget_echoes`)."""
        # Echoes of echoes do not count: a derived turn's or a run archive's words would
        # take along other derived turns that only share the tool's name.
        said = [e.content for e in self.store.get_events(event_ids) if not e.derived]
        facts = self.store.get_facts(fact_ids)
        said += [f.text for f in facts if f.source != "archive"] + list(texts)
        return echoes_of(self.store, said, {*event_ids}, self.owners)

    def _derived_only_from(self, event_ids: list[str], fact_ids: list[str]) -> list[str]:
        """Facts that would repeat what is forgotten: those learned only from these events,
        and run archives citing any of them (an archive quotes the run's goal and answer).
        Other facts that remaining events also support stay."""
        if not event_ids:
            return []
        gone = set(event_ids)
        derived = [i for i in self.store.facts_derived_from(event_ids) if i not in fact_ids]
        return [
            f.id
            for f in self.store.get_facts(derived)
            if f.source == "archive" or set(f.source_events) <= gone
        ]

    # --- executing -----------------------------------------------------------------------

    def execute(self, plan: ForgetPlan) -> ForgetReport:
        """Delete what ``plan`` names from every store.  The whole of it is journaled first
        (:mod:`~shiyi.memory.lifecycle.forget_journal`): a process killed half way leaves
        an entry the next opening of the memory finishes, never a half-deleted memory."""
        entry = self._entry(plan)
        journal = self._journal()
        if journal is None:
            return self._apply(entry)
        started = journal.begin(entry)
        report = self._apply(entry)
        journal.finish(started)
        return report

    def resume_pending(self) -> list[ForgetReport]:
        """Finish the forgets a killed process left journaled (oldest first)."""
        journal = self._journal()
        if journal is None:
            return []
        done: list[ForgetReport] = []
        for path, entry in journal.pending():
            done.append(self._apply(entry))
            journal.finish(path)
        return done

    def _journal(self) -> ForgetJournal | None:
        where = self.paths.journal_dir
        return ForgetJournal(where) if where is not None else None

    def _entry(self, plan: ForgetPlan) -> ForgetEntry:
        """Everything the plan deletes, read from the stores while they still hold it."""
        events = self.store.get_events(plan.event_ids)
        facts = self.store.get_facts(plan.fact_ids)
        # Events are embedded in context (day and speaker): that text is the cache's key.
        texts = [*(e.content for e in events), *indexed_texts(events)]
        texts += [*(f.text for f in facts), *plan.texts]
        return ForgetEntry(
            target=plan.target,
            event_ids=list(plan.event_ids),
            fact_ids=list(plan.fact_ids),
            queued_ids=list(plan.queued_ids),
            entity_names=list(plan.entity_names),
            linked_entities=self._linked_entities(events, facts),
            user_id=plan.user_id,
            user_sessions=sorted({e.session_id for e in events}) if plan.user_id else [],
            sessions=sorted({e.session_id for e in events}),
            event_sessions={e.id: e.session_id for e in events},
            text_hashes=unique(content_hash(t) for t in texts),
            events=len(events),
            facts=len(facts),
            archives=sum(f.source == "archive" for f in facts),
        )

    def _apply(self, entry: ForgetEntry) -> ForgetReport:
        """Every step deletes by id or hash, so applying an entry again is harmless."""
        self._take_late_facts(entry)
        report = ForgetReport(entry.target, events=entry.events, facts=entry.facts)
        report.archives, report.sessions = entry.archives, list(entry.sessions)
        gone_entities = self._erase_graph(entry, report)
        report.graph_file = self._graph_file()
        edit = payload_editor(
            entry.ids, (), entry.user_sessions, entry.user_id, text_hashes=entry.text_hashes
        )
        report.jobs_edited, report.jobs_deleted = self.jobs.rewrite_payloads(edit)
        hashes = [*entry.text_hashes, *(content_hash(n) for n in gone_entities)]
        report.embeddings = self._erase_embeddings(hashes)
        self._erase_log(entry, report)
        self._erase_mem0_ledger(entry)
        if entry.events or entry.user_id is not None:
            report.summaries = self._clear_summaries()
        self._scrub_files(report)
        return report

    def _take_late_facts(self, entry: ForgetEntry) -> None:
        """Facts drawn from the forgotten turns after the plan was made go too: the worker
        may archive a run or extract from a turn between planning and deleting (or between
        a killed forget and its resumption), and such a fact quotes what is forgotten."""
        late = self.store.get_facts(self._derived_only_from(entry.event_ids, entry.fact_ids))
        if not late:
            return
        entry.fact_ids += [f.id for f in late]
        entry.text_hashes = unique([*entry.text_hashes, *(content_hash(f.text) for f in late)])
        entry.facts += len(late)
        entry.archives += sum(f.source == "archive" for f in late)

    def _linked_entities(self, events: list[EventRecord], facts: list[FactRecord]) -> list[str]:
        names = dict.fromkeys(self.store.mentioned_entities([e.id for e in events]))
        names.update(dict.fromkeys(n for f in facts for n in f.entities))
        return list(names)

    def _erase_graph(self, entry: ForgetEntry, report: ForgetReport) -> list[str]:
        """Delete from the graph, vectors and keyword index; returns the entities removed."""
        ids = entry.ids
        keywords = getattr(self.store, "keywords", None)  # both stores' keyword index
        if keywords is not None:
            report.keyword_docs = keywords.delete(ids)
        self.store.delete(ids)
        asked = entry.entity_names
        orphans = [n for n in entry.linked_entities if n not in asked and self._orphan(n)]
        names = [*asked, *orphans]
        if names:
            report.entities = self.store.delete_entities(names)
        if entry.user_id is not None:
            report.graph_sessions = self.store.delete_orphan_sessions(entry.user_id)
        return names

    def _orphan(self, entity: str) -> bool:
        facts, events = self.store.entity_footprint(entity)
        return not facts and not events

    def _erase_embeddings(self, text_hashes: list[str]) -> int:
        if isinstance(self.embedder, CachedEmbedder):
            return self.embedder.cache.delete_hashes(text_hashes)
        path = self._memory_db()
        if path is None or not path.exists():
            return 0
        cache = EmbeddingCache(path)  # no embedder now, but earlier runs may have cached
        try:
            return cache.delete_hashes(text_hashes)
        finally:
            cache.close()

    def _erase_log(self, entry: ForgetEntry, report: ForgetReport) -> None:
        event_ids, event_sessions = entry.event_ids, entry.event_sessions
        user_id, sessions = entry.user_id, entry.user_sessions
        path = self.paths.sessions_db
        if path is None or not path.exists():
            return
        log = SessionLog(path)
        try:
            report.messages = log.forget_messages(_log_rows(log, event_ids, event_sessions))
            if user_id is not None:
                report.log_sessions, messages = log.forget_sessions(sessions, user_id=user_id)
                report.messages += messages
            # The readable run files quote the log: render them again without what went.
            touched = [*report.sessions, *sessions]
            report.run_files = rewrite_run_files(log, runs_root(path.parent), touched)
        finally:
            log.close()

    def _erase_mem0_ledger(self, entry: ForgetEntry) -> None:
        """The mem0 API's rows of the forgotten memories: their metadata and the history
        of their texts (read here by table name: memory does not import the compat layer)."""
        path = self.paths.mem0_ledger
        if path is None or not path.exists():
            return
        with _connection(path) as conn:
            if not (_has_table(conn, "owners") and _has_table(conn, "history")):
                return
            ids = entry.ids
            if entry.user_id is not None:
                owned = conn.execute(
                    "SELECT memory_id FROM owners WHERE user_id = ?", (entry.user_id,)
                )
                ids = unique([*ids, *(str(row[0]) for row in owned)])
            for start in range(0, len(ids), 500):
                chunk = ids[start : start + 500]
                marks = ",".join("?" * len(chunk))
                conn.execute(f"DELETE FROM history WHERE memory_id IN ({marks})", chunk)
                conn.execute(f"DELETE FROM owners WHERE memory_id IN ({marks})", chunk)

    def _clear_summaries(self) -> int:
        path = self.paths.summaries_db
        if path is None or not path.exists():
            return 0
        with _connection(path) as conn:
            if not _has_table(conn, "summaries"):
                return 0
            return int(conn.execute("DELETE FROM summaries").rowcount)

    def _graph_file(self) -> str:
        """Where deleted rows' bytes stay until :meth:`MemoryStore.compact`: Kuzu's graph
        file (it masks deleted rows), or PostgreSQL's table files (dead tuples)."""
        path = getattr(getattr(self.store, "graph", None), "path", None)
        if isinstance(path, Path):
            return str(path)
        where = getattr(self.store, "where", None)
        return f"the tables of {where}" if isinstance(where, str) else ""

    def _memory_db(self) -> Path | None:
        # The local SQLite file beside either store (job queue, embedding cache, FTS).
        path = getattr(self.store, "sqlite_path", None)
        return path if isinstance(path, Path) else None

    def _scrub_files(self, report: ForgetReport) -> None:
        report.wal_busy += self.scrub_files()

    def scrub_files(self) -> list[str]:
        """VACUUM the SQLite files beside the store; returns those whose WAL stayed."""
        targets = [(self._memory_db(), ("kw_fts",)), (self.paths.sessions_db, ()),
                   (self.paths.summaries_db, ()), (self.paths.mem0_ledger, ())]  # fmt: skip
        return [
            str(path)
            for path, fts in targets
            if path is not None and path.exists() and not scrub_sqlite(path, fts)
        ]


def _log_rows(
    log: SessionLog, event_ids: list[str], sessions: dict[str, str]
) -> list[tuple[int, str]]:
    """The ``(row, session)`` of this log behind each event made from one of its rows (an
    event of an older log, moved aside, names no row of this one).  An event whose session
    the journal lacks is matched by its epoch alone, which names this log; a legacy id
    (no epoch) then needs its session, since an older log's row has the same number."""
    who = log.identity
    pairs: list[tuple[int, str]] = []
    unknown: list[int] = []
    for event_id in event_ids:
        for row in logged_rows([event_id], who.epoch, who.legacy_through):
            if event_id in sessions:
                pairs.append((row, sessions[event_id]))
            elif (parsed := parse_event_id(event_id)) is not None and parsed.epoch:
                unknown.append(row)
    pairs += list(log.sessions_of(unknown).items())
    return pairs


def payload_editor(
    ids: Sequence[str],
    texts: Sequence[str],
    sessions: Sequence[str],
    user_id: str | None,
    *,
    text_hashes: Sequence[str] = (),
) -> Callable[[dict[str, Any]], dict[str, Any] | None]:
    """A job payload editor for :meth:`JobQueue.rewrite_payloads`: forgotten ids and events
    leave every list; a job that names a forgotten id, session or text (given as is or by
    :func:`content_hash`), or whose list empties, is dropped (``None``)."""
    forgotten, gone_sessions = set(ids), set(sessions)
    hashes = {*(content_hash(t) for t in texts), *text_hashes}

    def quoted(value: object) -> bool:
        return isinstance(value, str) and content_hash(value) in hashes

    def forgotten_item(item: object) -> bool:
        if isinstance(item, str):
            return item in forgotten
        if isinstance(item, dict):
            return (
                item.get("id") in forgotten
                or quoted(item.get("content"))
                or item.get("session_id") in gone_sessions
                or (user_id is not None and item.get("user_id") == user_id)
            )
        return False

    def edit(payload: dict[str, Any]) -> dict[str, Any] | None:
        out: dict[str, Any] = {}
        for key, value in payload.items():
            if isinstance(value, list):
                kept = [item for item in value if not forgotten_item(item)]
                if value and not kept:
                    return None
                value = kept
            elif isinstance(value, str) and (
                value in forgotten
                or (key == "session_id" and value in gone_sessions)
                or (key in _TEXT_KEYS and quoted(value))
            ):
                return None
            out[key] = value
        return out

    return edit


def scrub_sqlite(path: Path, fts_tables: Sequence[str] = ()) -> bool:
    """Make deleted rows unrecoverable from a SQLite file: FTS5 ``optimize`` (deleted tokens
    leave the index segments), ``VACUUM`` (rewrites every page, truncates the rest) and a
    ``TRUNCATE`` checkpoint (empties the WAL, which holds old page images).

    Returns False when another connection's open read kept the WAL from being truncated.
    """
    with _connection(path) as conn:
        for table in fts_tables:
            if _has_table(conn, table):
                conn.execute(f"INSERT INTO {table}({table}) VALUES ('optimize')")
        conn.execute("VACUUM")
        busy = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
    return int(busy) == 0


@contextmanager
def _connection(path: Path) -> Iterator[sqlite3.Connection]:
    """An autocommit connection with ``secure_delete`` on; errors become StorageError."""
    try:
        conn = sqlite3.connect(path, timeout=30.0, isolation_level=None)
    except sqlite3.Error as exc:
        raise _scrub_error(path, exc) from exc
    try:
        conn.execute("PRAGMA secure_delete=ON")
        yield conn
    except sqlite3.Error as exc:
        raise _scrub_error(path, exc) from exc
    finally:
        conn.close()


def _scrub_error(path: Path, exc: sqlite3.Error) -> StorageError:
    return StorageError(
        f"could not scrub forgotten data from {path}: {exc}; the memories are deleted, but to "
        f"overwrite their bytes stop other shiyi processes and run: sqlite3 {path} VACUUM"
    )


def _terms(text: str) -> frozenset[str]:
    """Search terms of ``text`` as stems, so "passwords" matches "password"."""
    return frozenset(stem_word(term) for term in tokenize(text))


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _has_table(conn: sqlite3.Connection, name: str) -> bool:
    row = conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (name,)).fetchone()
    return row is not None
