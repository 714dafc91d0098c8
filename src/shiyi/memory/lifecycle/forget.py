"""Forgetting: a hard delete of memories from every place that holds them (seed 001).

Targets: event/fact ids, an entity (the facts about it, the events mentioning it and the node),
the hits of a search (every stored copy: superseded and expired facts too), or everything
of one user.  What :meth:`Forgetter.execute` removes:

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

This module plans and runs a forget (:class:`Forgetter`) and edits the job queue's payloads
(:func:`payload_editor`).  The plan and the report it returns are in
:mod:`~shiyi.memory.lifecycle.forget_report`; the erasing and scrubbing of the files beside
the store (the session log, the caches, the mem0 ledger) in
:mod:`~shiyi.memory.lifecycle.forget_files`.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any

from shiyi.errors import NothingToForget
from shiyi.index.embeddings.cache import content_hash
from shiyi.index.text import stem_word, tokenize
from shiyi.memory.intake.event_vectors import (
    event_vectors,
    followers,
    lead_in_texts,
    messages_before,
)
from shiyi.memory.intake.worker import EMBED
from shiyi.memory.jobs import JobQueue
from shiyi.memory.lifecycle.forget_echoes import echoes_of
from shiyi.memory.lifecycle.forget_files import (
    DataPaths,
    clear_summaries,
    erase_embeddings,
    erase_log,
    erase_mem0_ledger,
    scrub_files,
)
from shiyi.memory.lifecycle.forget_journal import ForgetEntry, ForgetJournal, unique
from shiyi.memory.lifecycle.forget_report import ForgetPlan, ForgetReport
from shiyi.memory.models import EventRecord, FactRecord, MemoryHit
from shiyi.memory.protocol import Embedder, MemoryStore
from shiyi.memory.text.contextual import indexed_texts

Search = Callable[[str, int], list[MemoryHit]]
_QUERY_POOL, _QUERY_POOL_MIN = 4, 20
"""A forget by query searches ``limit * 4`` (at least 20) hits and keeps the matching ones."""
_TEXT_KEYS = frozenset({"goal", "text", "content", "value", "message", "query"})
"""Job payload keys holding free text: a job whose such value is a forgotten text goes."""

EARLIER_WORDING = "~"
"""Between a fact's id and the id of a version an edit kept of it: ``fact_1a2b~9f8e7d``."""


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
        facts += self._earlier_wordings(facts)
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
        facts.update(dict.fromkeys(self._earlier_wordings(list(facts))))
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
        facts += self._earlier_wordings(facts)
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

    def _earlier_wordings(self, fact_ids: list[str]) -> list[str]:
        """What these facts said before they were edited by hand: the versions an edit kept
        (:func:`~shiyi.memory.operations.edits.patch_fact`), each replaced by its fact and
        named after it.  Forgetting a fact forgets them too, or an edit to "redacted" and a
        delete would leave the words in history."""
        replaced = self.store.supersedes(fact_ids) if fact_ids else {}
        return [
            old
            for new, olds in replaced.items()
            for old in olds
            if old.startswith(new + EARLIER_WORDING) and old not in fact_ids
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
        # Events are embedded in context (day and speaker, a short message after the end of
        # the one before): those texts are the cache's keys.
        # a forget by user takes every run of theirs whole: nothing of theirs is left to lead
        lead_ins = self.embedder is not None and plan.user_id is None
        led = followers(self.store, events) if lead_ins else []
        before = messages_before(self.store, [*events, *led], stored=lead_ins)
        leads = lead_in_texts([*events, *led], before)
        texts = [*(e.content for e in events), *indexed_texts(events), *leads]
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
            re_embed=[e.id for e in led],
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
        report.embeddings = erase_embeddings(self.embedder, self._memory_db(), hashes)
        self._embed_again(entry.re_embed)
        erase_log(self.paths.sessions_db, entry, report)
        erase_mem0_ledger(self.paths.mem0_ledger, entry)
        if entry.events or entry.user_id is not None:
            report.summaries = clear_summaries(self.paths.summaries_db)
        report.wal_busy += self.scrub_files()
        return report

    def _embed_again(self, ids: list[str]) -> None:
        """The messages a forgotten one led into, embedded without it (after the cache
        lost its texts); with no embedder at hand (a resumed forget), by the worker."""
        events = [e for e in self.store.get_events(ids) if not e.derived]
        if not events:
            return
        if self.embedder is None:
            self.jobs.enqueue(EMBED, {"node": "event", "ids": [e.id for e in events]})
            return
        vectors = event_vectors(self.embedder, events, messages_before(self.store, events))
        self.store.set_embeddings("event", list(zip([e.id for e in events], vectors, strict=True)))

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

    def scrub_files(self) -> list[str]:
        """VACUUM the SQLite files beside the store; returns those whose WAL stayed."""
        return scrub_files(self._memory_db(), self.paths)


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


def _terms(text: str) -> frozenset[str]:
    """Search terms of ``text`` as stems, so "passwords" matches "password"."""
    return frozenset(stem_word(term) for term in tokenize(text))
