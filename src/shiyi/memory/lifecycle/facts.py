"""Writing observed facts: confidence bands, dedup, confirmation, conflicts and supersession.

Candidates for "the same fact" are the versions in the observation's slot (see
:mod:`shiyi.memory.lifecycle.slots`: one attribute of one subject, however the model worded
the key or filled ``about``) or, for differently worded keys, facts about the same entities
whose text is nearly identical by embedding.  Versions are ordered by when they were *said*
(``said_at``: the stating turn's time), never by when a job happened to run.  In a slot:

* the same value again confirms the stored fact (evidence + 1, confidence combined; a
  pending fact becomes active), but only from independent evidence: an observation whose
  stating turn is already counted (``said_in``: a re-read window, the session's
  consolidation, a duplicate job) changes nothing;
* a different value said later contradicts the current one: a confident new fact supersedes
  it (the old one keeps its history with ``valid_to`` and a SUPERSEDES edge), a pending one
  is kept as an open conflict until a second observation confirms it;
* a different value said *before* the current version is history, never the current value:
  it confirms the older version that says it, or is kept as a superseded version.

Whatever order the jobs ran in, a slot ends with one active fact: the newest stated one.

A fact of no slot only deduplicates, with one exception: a statement that says its value
changed and is otherwise the earlier sentence ("I wake up at 7 now" after "I wake up at
6am", "... on Tuesdays now" after "... on Mondays":
:func:`~shiyi.memory.text.contrasts.replaces_value`), or that denies or ends it in its
words ("I don't eat meat anymore" after "I eat meat":
:func:`~shiyi.memory.text.contrasts.withdraws`), supersedes the earlier statement.  And a
statement that the user ended something ("I sold my motorbike", "I gave up tennis", "I quit
Google", "Chris and I broke up": :func:`~shiyi.memory.text.endings.ends`) supersedes the
same user's statements of holding it, keyless or of a slot where such statements land
(:data:`ENDABLE_KEYS`: "I work at Google" is ``works at``).

This module is what a write does to the store (:class:`FactWriter`).  Finding the slot and the
near duplicates is :mod:`shiyi.memory.lifecycle.fact_slots`'s; the observation, the report and
the comparisons that need no store are in :mod:`shiyi.memory.lifecycle.observations`.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence

from shiyi.config.settings import LifecycleSettings
from shiyi.memory.lifecycle.fact_slots import LIVE, Slot, SlotFinder, stored_key
from shiyi.memory.lifecycle.observations import (
    Observation,
    WriteReport,
    combine_confidence,
    independent,
    linkable,
    negated,
    normalize_value,
    said_before,
)
from shiyi.memory.lifecycle.resolution import EntityResolver, Mention
from shiyi.memory.lifecycle.said_instead import replaced_by_change
from shiyi.memory.lifecycle.slots import (
    AttributeResolver,
    key_owner,
    speaking_for,
)
from shiyi.memory.models import FactRecord, said_time
from shiyi.memory.protocol import Embedder, MemoryStore
from shiyi.memory.scopes import Viewer, Writers
from shiyi.memory.text.contrasts import replaces_value, withdraws
from shiyi.memory.text.endings import ended_thing, ends
from shiyi.memory.text.entities import normalize_name
from shiyi.memory.text.subjects import USER_NAMES, subject_of

__all__ = ["FactWriter"]

_NAME_KEYS = ["name", "user name", "my name", "full name"]
ENDABLE_KEYS = (
    "", "works at", "job", "studies at", "lives in", "partner", "girlfriend", "boyfriend",
    "wife", "husband", "fiance", "fiancee",
)  # fmt: skip
"""The keys of statements an ending may end: none, and the slots a plain statement of
working (at a place, or as a job there), studying, living somewhere or a partner (by any
name: "my girlfriend is Noor") lands in (:mod:`.stated_slots`)."""


class FactWriter:
    def __init__(
        self,
        store: MemoryStore,
        embedder: Embedder | None,
        settings: LifecycleSettings,
        resolver: EntityResolver | None = None,
        operator: str = "default",
    ) -> None:
        """``resolver`` links the people a key names ("Ana's city") as entities;
        ``operator``: the configured user (``memory.user_id``), whose agents the workspace
        writers' bare agent ids name."""
        self.resolver = resolver
        self.writers = Writers.of(settings.workspace_writers, operator)
        self.store = store
        self.embedder = embedder
        self.settings = settings
        self.attributes = AttributeResolver(embedder)
        self.slots = SlotFinder(store, embedder, settings, self.attributes)

    def write(
        self, observations: Sequence[Observation], viewer: Viewer, *, now: float | None = None
    ) -> WriteReport:
        report = WriteReport()
        now = time.time() if now is None else now
        users = self.user_names(viewer) if observations else set()
        for observation in observations:
            self._write_one(observation, viewer, now, report, users)
        return report

    def user_names(self, viewer: Viewer) -> set[str]:
        """Names that mean the user in ``about``: "user", "me", the user id, the aliases of
        the "user" entity and the values of the user's name facts."""
        names = set(USER_NAMES)
        if viewer.user_id != "default":
            names.add(normalize_name(viewer.user_id))
        for entity in self.store.find_entities(["user"]):
            names.update(normalize_name(n) for n in [entity.name, *entity.aliases])
        for fact in self.store.slot_candidates([], _NAME_KEYS, LIVE):
            mine = fact.scope == "user" and viewer.sees_fact(fact)
            if mine and not subject_of(fact.entities, fact.value, names):
                names.add(normalize_name(fact.value))
        return names

    # --- one observation ---------------------------------------------------------------

    def _write_one(
        self, obs: Observation, viewer: Viewer, now: float, report: WriteReport, users: set[str]
    ) -> None:
        status = self._band(obs.confidence)
        if status is None:
            report.dropped += 1
            return
        if not viewer.may_write(obs.scope, self.writers):
            obs.scope = "user"  # extraction may not share what this agent may not share
            report.downgraded += 1
        obs.about = list(dict.fromkeys(normalize_name(a) for a in obs.about if a.strip()))
        if owner := key_owner(obs.key, users):
            obs.about = list(dict.fromkeys([*obs.about, self._entity(owner)]))
        if obs.speaker:
            obs.about = speaking_for(obs.about, obs.value, obs.speaker, users)
        if obs.said_at is None:
            obs.said_at = now
        slot = self.slots.slot(obs, viewer, users, now)
        same = self.slots.same_value(slot.live, obs)
        if same is None:
            same = self.slots.near_duplicate(obs, viewer)
        if same is not None:
            self._confirm(same, obs, now, report)
            if slot.slotted:
                self._keep_wording(obs, same, slot, viewer, now)
                self._settle(self.slots.slot(obs, viewer, users, now), now, report)
            return
        current = slot.current() if slot.slotted else None
        if current is not None and said_before(obs, current, report.created):
            self._historical(obs, status, slot, viewer, now, report)
            return
        ended_before = len(report.superseded)
        fact = self._new_fact(obs, status, viewer, now, stored_key(obs, slot))
        if status == "pending" and current is not None:
            fact.conflicts_with = current.id
            report.conflicts.append(fact.id)
        self.store.upsert_facts([fact])
        report.created.append(fact.id)
        if slot.slotted:
            slot.versions.append(fact)
            self._settle(slot, now, report, prefer=fact.id)
        elif fact.status == "active":
            self._replace_changed_value(fact, slot, now, report)
        if fact.status == "active":
            self._end_what_it_ends(fact, viewer, now, report)
        if (
            fact.status == "active"
            and obs.source == "explicit"
            and not report.superseded[ended_before:]
        ):  # what no rule read: a chatty update of an earlier statement
            changed = replaced_by_change(
                self.store, self.embedder, fact, viewer, self.slots.other_attribute_of
            )
            if changed is not None:
                self._supersede(fact, [changed], now, report)

    def key_owner_entity(self, key: str, viewer: Viewer) -> str:
        """The stored entity a key's possessor names ("Ana's city": Ana, made if new); ""
        when the key names no one but the user (see :func:`key_owner`)."""
        owner = key_owner(key, self.user_names(viewer))
        return self._entity(owner) if owner else ""

    def _entity(self, name: str) -> str:
        """The stored entity ``name`` refers to (made if new), so the fact is linked ABOUT it
        and found with the rest of its slot; without a resolver, the name itself."""
        if self.resolver is None:
            return normalize_name(name)
        return self.resolver.resolve([Mention(name)]).get(name, normalize_name(name))

    def _band(self, confidence: float) -> str | None:
        if confidence >= self.settings.active_threshold:
            return "active"
        if confidence >= self.settings.pending_threshold:
            return "pending"
        return None

    def _keep_wording(
        self, obs: Observation, same: FactRecord, slot: Slot, viewer: Viewer, now: float
    ) -> None:
        """``obs`` repeats ``same`` from the same turn under another unlisted wording: keep
        that wording as a superseded version of the statement (history, never current), so
        that later statements worded this way find the slot (see :meth:`SlotFinder.reworded`)."""
        wording = slot.attribute
        if wording.name or self.attributes(same.key).same(wording):
            return
        if not set(obs.said_in) & set(same.said_in) or not linkable(normalize_value(obs.value)):
            return
        if any(self.attributes(f.key).same(wording) for f in slot.versions):
            return
        fact = self._new_fact(obs, "active", viewer, now, wording.canonical)
        fact.status, fact.valid_to = "superseded", fact.valid_from
        self.store.upsert_facts([fact])
        self.store.add_supersedes([(same.id, fact.id)])

    # --- outcomes ------------------------------------------------------------------------

    def _confirm(self, fact: FactRecord, obs: Observation, now: float, report: WriteReport) -> None:
        fresh = independent(fact, obs)
        fact.updated_at = now
        fact.source_events = list(dict.fromkeys([*fact.source_events, *obs.source_events]))
        if obs.long_term:
            self._make_long(fact)
        if obs.kind == "procedural" and obs.steps:
            fact.steps, fact.trigger = obs.steps, obs.trigger or fact.trigger
        if fresh:
            self._count(fact, obs)
            if fact.status == "pending" and fact.confidence >= self.settings.pending_threshold:
                fact.status, fact.conflicts_with = "active", ""
                report.activated.append(fact.id)
        self.store.upsert_facts([fact])
        (report.confirmed if fresh else report.repeated).append(fact.id)

    @staticmethod
    def _count(fact: FactRecord, obs: Observation) -> None:
        """One more independent statement: evidence, confidence and when it was last said."""
        fact.evidence_count += 1
        fact.confidence = combine_confidence(fact.confidence, obs.confidence)
        fact.said_in = list(dict.fromkeys([*fact.said_in, *obs.said_in]))
        if obs.said_at is not None and obs.said_at > said_time(fact):
            fact.said_at = obs.said_at

    def _historical(
        self,
        obs: Observation,
        status: str,
        slot: Slot,
        viewer: Viewer,
        now: float,
        report: WriteReport,
    ) -> None:
        """``obs`` was said before the slot's current value: it may confirm the older
        version that says the same, or be kept as a superseded version; the current value
        stays."""
        assert obs.said_at is not None
        older = [f for f in slot.versions if f.status == "superseded"]
        same = self.slots.same_value(older, obs)
        if same is not None:
            self._keep_wording(obs, same, slot, viewer, now)
            if independent(same, obs):
                self._count(same, obs)
                same.updated_at = now
                same.source_events = list(dict.fromkeys([*same.source_events, *obs.source_events]))
                self.store.upsert_facts([same])
                report.confirmed.append(same.id)
            else:
                report.repeated.append(same.id)
            return
        if status == "pending":  # an unsure statement about the past: not worth a version
            report.dropped += 1
            return
        # The version that followed it: the oldest said later (or, re-read from the turn
        # that stated the current value, the current one).
        later = [f for f in slot.versions if said_time(f) > obs.said_at]
        successor = min(later, key=said_time) if later else slot.current()
        assert successor is not None  # only called when the slot has a current version
        fact = self._new_fact(obs, "active", viewer, now, stored_key(obs, slot))
        fact.status = "superseded"
        fact.valid_to = successor.valid_from if successor.valid_from is not None else now
        self.store.upsert_facts([fact])
        self.store.add_supersedes([(successor.id, fact.id)])
        report.created.append(fact.id)
        report.historical.append(fact.id)

    def _settle(self, slot: Slot, now: float, report: WriteReport, prefer: str = "") -> None:
        """One active version per slot: the newest stated; older live versions (active, or
        pending contradictions said before it) are superseded by it."""
        current = slot.current(prefer)
        if current is None:
            return
        older = [f for f in slot.live if f.id != current.id and said_time(f) <= said_time(current)]
        if older:
            self._supersede(current, older, now, report)

    def _replace_changed_value(
        self, fact: FactRecord, slot: Slot, now: float, report: WriteReport
    ) -> None:
        """Supersede the slotless statements ``fact`` says it changed the value of."""
        older = [
            f
            for f in slot.live
            if f.id != fact.id
            and f.status == "active"
            and said_time(f) <= said_time(fact)
            and (
                (negated(f.value) == negated(fact.value) and replaces_value(fact.value, f.value))
                or withdraws(fact.value, f.value)
            )
        ]
        if older:
            self._supersede(fact, older, now, report)

    def _end_what_it_ends(
        self, fact: FactRecord, viewer: Viewer, now: float, report: WriteReport
    ) -> None:
        """Supersede the same user's statements of holding what ``fact`` says was ended."""
        if not ended_thing(fact.value):
            return
        older = [
            f
            for f in self.store.slot_candidates([], ENDABLE_KEYS, ["active"], fact.user_id)
            if f.id != fact.id
            and f.status == "active"
            and f.scope == fact.scope
            and f.user_id == fact.user_id
            and viewer.sees_fact(f)
            and said_time(f) <= said_time(fact)
            and ends(fact.value, f.value)
        ]
        if older:
            self._supersede(fact, older, now, report)

    def supersede(
        self, newer: FactRecord, older: Sequence[FactRecord], report: WriteReport
    ) -> None:
        """``newer`` replaces ``older``: a statement that takes them back in words no slot
        rule reads (:mod:`~shiyi.memory.lifecycle.taken_back`)."""
        if older:
            self._supersede(newer, older, time.time(), report)

    def _supersede(
        self, newer: FactRecord, older: Sequence[FactRecord], now: float, report: WriteReport
    ) -> None:
        ended = newer.valid_from or now
        for old in older:
            old.status, old.valid_to, old.updated_at = "superseded", ended, now
            old.conflicts_with = ""
        self.store.upsert_facts(list(older))
        self.store.add_supersedes([(newer.id, old.id) for old in older])
        report.superseded += [old.id for old in older]

    def _new_fact(
        self, obs: Observation, status: str, viewer: Viewer, now: float, key: str
    ) -> FactRecord:
        fact = FactRecord(
            id=f"fact_{uuid.uuid4().hex[:12]}",
            key=key,  # stored normalised: slot lookups match it exactly
            value=obs.value.strip(),
            kind=obs.kind,
            scope=obs.scope,
            confidence=obs.confidence,
            status="active" if status == "active" else "pending",
            created_at=now,
            updated_at=now,
            valid_from=obs.valid_from if obs.valid_from is not None else obs.said_at,
            trigger=obs.trigger,
            steps=list(obs.steps),
            source=obs.source,
            anchor=obs.anchor,
            entities=list(obs.about),
            source_events=list(obs.source_events),
            said_at=obs.said_at,
            said_in=list(obs.said_in),
        )
        viewer.owns(fact)
        if obs.long_term:
            self._make_long(fact)
        else:
            expires = self.expiry(obs.kind, now)
            fact.tier, fact.expires_at = ("long" if expires is None else "short"), expires
        return fact

    def expiry(self, kind: str, now: float) -> float | None:
        """Short-term kinds expire after their ``ttl_days``; long-term kinds (no TTL) never."""
        days = self.settings.ttl_days.get(kind)
        return None if days is None else now + days * 86400.0

    @staticmethod
    def _make_long(fact: FactRecord) -> None:
        fact.tier, fact.expires_at = "long", None
