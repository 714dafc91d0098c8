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
"""

from __future__ import annotations

import math
import re
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from shiyi.config.settings import LifecycleSettings
from shiyi.memory.lifecycle.slots import (
    USER_NAMES,
    Attribute,
    AttributeResolver,
    many_valued,
    normalize_key,
    speaking_for,
    subject_of,
)
from shiyi.memory.models import FactKind, FactRecord, Scope, said_time
from shiyi.memory.protocol import Embedder, MemoryStore
from shiyi.memory.scopes import Viewer
from shiyi.memory.text.entities import normalize_name

__all__ = ["FactWriter", "Observation", "WriteReport", "normalize_key", "normalize_value"]

# Kinds where a new value adds to the old ones rather than replacing them.
ACCUMULATING_KINDS = frozenset({"todo", "episodic", "procedural"})
LIVE = ("active", "pending")
VERSIONS = (*LIVE, "superseded")
_NAME_KEYS = ["name", "user name", "my name", "full name"]


@dataclass(slots=True)
class Observation:
    key: str
    value: str
    confidence: float
    kind: FactKind = "semantic"
    scope: Scope = "user"
    about: list[str] = field(default_factory=list)
    valid_from: float | None = None
    trigger: str = ""
    steps: list[str] = field(default_factory=list)
    source: str = "extraction"
    anchor: str = ""
    source_events: list[str] = field(default_factory=list)
    long_term: bool = False
    """Confirmed by the user ("remember this"): long term at once, no expiry."""
    said_at: float | None = None
    """When the stating turn was said (None: now, e.g. an explicit ``remember``)."""
    said_in: list[str] = field(default_factory=list)
    """The stating turn(s); empty: no turn (explicit), always independent evidence."""
    speaker: str = ""
    """The stating turn's named speaker (an imported conversation between people), if not
    the user: a fact about "I" or "the user" in that turn is about the speaker."""


@dataclass(slots=True)
class WriteReport:
    created: list[str] = field(default_factory=list)
    confirmed: list[str] = field(default_factory=list)
    activated: list[str] = field(default_factory=list)
    superseded: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    repeated: list[str] = field(default_factory=list)
    """Facts observed again from turns already counted: no confirmation."""
    historical: list[str] = field(default_factory=list)
    """Created as superseded versions: said before the slot's current value."""
    dropped: int = 0
    downgraded: int = 0

    @property
    def written(self) -> list[str]:
        return [*self.created, *self.confirmed, *self.repeated]


def normalize_value(value: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", value.lower(), flags=re.UNICODE).split())


_NEGATIONS = re.compile(
    r"\b(not|no|never|don'?t|doesn'?t|isn'?t|won'?t|can'?t|hates?|dislikes?)\b|不|没|别|讨厌",
    re.IGNORECASE,
)


_UNINFORMATIVE = frozenset({"yes", "no", "true", "false", "none", "n a", "unknown", "0", "1"})


def _linkable(value: str) -> bool:
    """A value distinctive enough that two wordings giving it in one turn are one attribute
    ("yes" for "has pets" and "owns a car" is not)."""
    return len(value) > 1 and value not in _UNINFORMATIVE


def negated(text: str) -> bool:
    return bool(_NEGATIONS.search(text))


_NUMBER = re.compile(r"\d+(?:[.,:]\d+)*")


def alike(a: str, b: str) -> bool:
    """Whether two values may say the same thing (then embeddings decide): not when one is
    negated and the other not, nor when they name different numbers."""
    return negated(a) == negated(b) and _NUMBER.findall(a) == _NUMBER.findall(b)


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


def combine_confidence(a: float, b: float) -> float:
    """Two independent observations: 1 - (1-a)(1-b), capped below certainty."""
    return min(0.99, 1.0 - (1.0 - a) * (1.0 - b))


def _counted(fact: FactRecord) -> set[str]:
    """Turns already counted for ``fact`` (facts stored before ``said_in``: their window)."""
    return set(fact.said_in) if fact.said_in else set(fact.source_events)


def independent(fact: FactRecord, obs: Observation) -> bool:
    """Whether ``obs`` is new evidence for ``fact``: it names a stating turn not counted yet."""
    return not obs.said_in or not set(obs.said_in) <= _counted(fact)


def said_before(obs: Observation, current: FactRecord, batch: Sequence[str]) -> bool:
    """Whether ``obs`` was said before ``current``'s last statement, or by a turn that
    already stated ``current`` in an earlier write (re-read, it cannot replace what that
    turn said).  Within one write (``batch``: the ids it created), values one turn gives
    one attribute follow each other in the order the extraction listed them."""
    assert obs.said_at is not None
    last = said_time(current)
    if obs.said_at != last:
        return obs.said_at < last
    repeated = bool(obs.said_in) and set(obs.said_in) <= _counted(current)
    return repeated and current.id not in batch


@dataclass(slots=True)
class _Slot:
    """Where one observation lands: its attribute, subject and the slot's versions."""

    attribute: Attribute
    subject: tuple[str, ...]
    versions: list[FactRecord]
    slotted: bool
    """False for keyless and accumulating kinds: they deduplicate, never supersede."""

    @property
    def live(self) -> list[FactRecord]:
        return [f for f in self.versions if f.status in LIVE]

    def current(self, prefer: str = "") -> FactRecord | None:
        """The newest stated active version (on a tie, ``prefer``: the one just written)."""
        active = [f for f in self.versions if f.status == "active"]
        return max(active, key=lambda f: (said_time(f), f.id == prefer, f.created_at), default=None)


class FactWriter:
    def __init__(
        self, store: MemoryStore, embedder: Embedder | None, settings: LifecycleSettings
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.settings = settings
        self.attributes = AttributeResolver(embedder)

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
        if not viewer.may_write(obs.scope, self.settings.workspace_writers):
            obs.scope = "user"  # extraction may not share what this agent may not share
            report.downgraded += 1
        obs.about = list(dict.fromkeys(normalize_name(a) for a in obs.about if a.strip()))
        if obs.speaker:
            obs.about = speaking_for(obs.about, obs.value, obs.speaker, users)
        if obs.said_at is None:
            obs.said_at = now
        slot = self._slot(obs, viewer, users, now)
        same = self._same_value(slot.live, obs)
        if same is None:
            same = self._near_duplicate(obs, viewer)
        if same is not None:
            self._confirm(same, obs, now, report)
            if slot.slotted:
                self._keep_wording(obs, same, slot, viewer, now)
                self._settle(self._slot(obs, viewer, users, now), now, report)
            return
        current = slot.current() if slot.slotted else None
        if current is not None and said_before(obs, current, report.created):
            self._historical(obs, status, slot, viewer, now, report)
            return
        fact = self._new_fact(obs, status, viewer, now, self._stored_key(obs, slot))
        if status == "pending" and current is not None:
            fact.conflicts_with = current.id
            report.conflicts.append(fact.id)
        self.store.upsert_facts([fact])
        report.created.append(fact.id)
        if slot.slotted:
            slot.versions.append(fact)
            self._settle(slot, now, report, prefer=fact.id)

    def _band(self, confidence: float) -> str | None:
        if confidence >= self.settings.active_threshold:
            return "active"
        if confidence >= self.settings.pending_threshold:
            return "pending"
        return None

    def _slot(self, obs: Observation, viewer: Viewer, users: set[str], now: float) -> _Slot:
        key = normalize_key(obs.key)
        if not key or obs.kind in ACCUMULATING_KINDS:
            return _Slot(Attribute("", key), (), self._same_key(obs, key, viewer), False)
        attribute = self.attributes(key)
        multi = not attribute.name and many_valued(key)
        subject = subject_of(obs.about, obs.value, users, keep_objects=multi)
        if subject:  # every fact about the subject; their keys decide below
            candidates = self.store.slot_candidates(list(subject), [], VERSIONS)
        else:
            candidates = self.store.slot_candidates([], attribute.lookup_keys, VERSIONS)

        def fits(f: FactRecord) -> bool:
            return (
                f.kind not in ACCUMULATING_KINDS
                and f.scope == obs.scope
                and viewer.sees_fact(f)
                and subject_of(f.entities, f.value, users, keep_objects=multi) == subject
            )

        versions = [f for f in candidates if self.attributes(f.key).same(attribute) and fits(f)]
        if not attribute.name:
            versions += self._reworded(obs, versions, attribute, subject, fits, now)
        return _Slot(attribute, subject, versions, True)

    def _reworded(
        self,
        obs: Observation,
        versions: list[FactRecord],
        attribute: Attribute,
        subject: tuple[str, ...],
        fits: Callable[[FactRecord], bool],
        now: float,
    ) -> list[FactRecord]:
        """Versions stored under another unlisted wording of this attribute.  Two wordings
        that extractions gave the same value stated in the same turn ("marital status" and
        "relationship status": married, both from "I'm married") name one attribute: no
        table of synonyms, the conversation shows it."""
        ours = [(set(f.said_in), normalize_value(f.value)) for f in versions]
        ours.append((set(obs.said_in), normalize_value(obs.value)))
        turns = sorted({t for said, value in ours if _linkable(value) for t in said})
        if not turns:
            return []
        cores: set[str] = set()
        apart: set[str] = set()
        ours_at = {f.created_at for f in versions} | {now}
        for peer in self.store.get_facts(self.store.facts_derived_from(turns)):
            other = self.attributes(peer.key)
            if other.name or other.same(attribute) or peer.status not in VERSIONS:
                continue
            value = normalize_value(peer.value)
            if any(said & set(peer.said_in) and v == value for said, v in ours) and fits(peer):
                cores.add(other.core)
                if peer.created_at in ours_at:
                    # One extraction named both: a model does not state one fact twice in
                    # one answer, so these are two attributes ("sister", "best friend": Anna).
                    apart.add(other.core)
        cores -= apart
        if not cores:
            return []
        if subject:
            pool = self.store.slot_candidates(list(subject), [], VERSIONS)
        else:
            keys = [k for core in sorted(cores) for k in Attribute("", core).lookup_keys]
            pool = self.store.slot_candidates([], keys, VERSIONS)
        known = {f.id for f in versions}
        return [
            f
            for f in pool
            if f.id not in known
            and f.status in VERSIONS
            and not self.attributes(f.key).name
            and self.attributes(f.key).core in cores
            and fits(f)
        ]

    def _keep_wording(
        self, obs: Observation, same: FactRecord, slot: _Slot, viewer: Viewer, now: float
    ) -> None:
        """``obs`` repeats ``same`` from the same turn under another unlisted wording: keep
        that wording as a superseded version of the statement (history, never current), so
        that later statements worded this way find the slot (see :meth:`_reworded`)."""
        wording = slot.attribute
        if wording.name or self.attributes(same.key).same(wording):
            return
        if not set(obs.said_in) & set(same.said_in) or not _linkable(normalize_value(obs.value)):
            return
        if any(self.attributes(f.key).same(wording) for f in slot.versions):
            return
        fact = self._new_fact(obs, "active", viewer, now, wording.canonical)
        fact.status, fact.valid_to = "superseded", fact.valid_from
        self.store.upsert_facts([fact])
        self.store.add_supersedes([(same.id, fact.id)])

    def _same_key(self, obs: Observation, key: str, viewer: Viewer) -> list[FactRecord]:
        """Live facts with exactly this key about exactly these entities (keyless and
        accumulating kinds: the slot only deduplicates)."""
        candidates = self.store.slot_candidates(obs.about, [key], LIVE)
        return [
            f
            for f in candidates
            if normalize_key(f.key) == key
            and set(f.entities) == set(obs.about)
            and f.scope == obs.scope
            and viewer.sees_fact(f)
        ]

    @staticmethod
    def _stored_key(obs: Observation, slot: _Slot) -> str:
        """The key a new version is stored under: the slot's current key, else the
        attribute's canonical one for the user's own attributes (lookups by key then find
        every version), else the key as written (normalised)."""
        current = slot.current() if slot.slotted else None
        if current is not None:
            return normalize_key(current.key)
        if slot.slotted and not slot.subject:
            return slot.attribute.canonical
        return normalize_key(obs.key)

    def _same_value(self, slot: Sequence[FactRecord], obs: Observation) -> FactRecord | None:
        """The slot's fact that says what ``obs`` says (same words, or nearly by meaning)."""
        wanted = normalize_value(obs.value)
        exact = next((f for f in slot if normalize_value(f.value) == wanted), None)
        if exact is not None:
            return exact
        # "likes sushi" / "hates sushi" embed 0.87 apart: negation never repeats a fact;
        # nor do other numbers ("85kg" / "82kg", "9:45 pm" / "10:30 pm" embed alike).
        near = [f for f in slot if alike(f.value, obs.value)]
        return self._most_similar(obs.value, near, lambda f: f.value)

    def _near_duplicate(self, obs: Observation, viewer: Viewer) -> FactRecord | None:
        """A differently keyed fact about the same entities that says the same thing."""
        if self.embedder is None or not obs.about:
            return None
        text = f"{obs.key}: {obs.value}"
        mine = self.attributes(obs.key).name
        others = [
            f
            for f in self.store.slot_candidates(obs.about, [], LIVE)
            if set(f.entities) == set(obs.about)
            and f.scope == obs.scope
            and viewer.sees_fact(f)
            and not self._other_attribute(mine, f)
        ]
        near = [f for f in others if alike(f.value, obs.value)]
        return self._most_similar(text, near, lambda f: f.text)

    def _other_attribute(self, mine: str, fact: FactRecord) -> bool:
        """Two known, different attributes ("lives in: Berlin", "works in: Berlin") read
        alike but never repeat each other."""
        theirs = self.attributes(fact.key).name
        return bool(mine and theirs and mine != theirs)

    def _most_similar(
        self, text: str, facts: Sequence[FactRecord], field: Callable[[FactRecord], str]
    ) -> FactRecord | None:
        """The fact most similar to ``text`` if at least ``duplicate_similarity`` (one
        embedding call for all of them; texts seen before come from the cache)."""
        if self.embedder is None or not facts:
            return None
        query, *vectors = self.embedder.embed([text, *(field(f) for f in facts)])
        scored = [(_cosine(query, v), f) for v, f in zip(vectors, facts, strict=True)]
        score, best = max(scored, key=lambda pair: pair[0])
        return best if score >= self.settings.duplicate_similarity else None

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
        slot: _Slot,
        viewer: Viewer,
        now: float,
        report: WriteReport,
    ) -> None:
        """``obs`` was said before the slot's current value: it may confirm the older
        version that says the same, or be kept as a superseded version; the current value
        stays."""
        assert obs.said_at is not None
        older = [f for f in slot.versions if f.status == "superseded"]
        same = self._same_value(older, obs)
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
        fact = self._new_fact(obs, "active", viewer, now, self._stored_key(obs, slot))
        fact.status = "superseded"
        fact.valid_to = successor.valid_from if successor.valid_from is not None else now
        self.store.upsert_facts([fact])
        self.store.add_supersedes([(successor.id, fact.id)])
        report.created.append(fact.id)
        report.historical.append(fact.id)

    def _settle(self, slot: _Slot, now: float, report: WriteReport, prefer: str = "") -> None:
        """One active version per slot: the newest stated; older live versions (active, or
        pending contradictions said before it) are superseded by it."""
        current = slot.current(prefer)
        if current is None:
            return
        older = [f for f in slot.live if f.id != current.id and said_time(f) <= said_time(current)]
        if older:
            self._supersede(current, older, now, report)

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
