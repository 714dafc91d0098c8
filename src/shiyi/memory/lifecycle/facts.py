"""Writing observed facts: confidence bands, dedup, confirmation, conflicts and supersession.

Candidates for "the same fact" are only facts in the same slot — about the same entities
with the same (normalised) key — or, for differently worded keys, facts about the same
entities whose text is nearly identical by embedding.  In a slot:

* the same value again confirms the stored fact (evidence + 1, confidence combined; a
  pending fact becomes active) instead of adding a duplicate;
* a different value contradicts it: a confident new fact supersedes the old one (the old
  one keeps its history with ``valid_to`` and a SUPERSEDES edge), a pending one is kept as
  an open conflict until a second observation confirms it.
"""

from __future__ import annotations

import math
import re
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from shiyi.config.settings import LifecycleSettings
from shiyi.memory.entities import normalize_name
from shiyi.memory.models import FactKind, FactRecord, Scope
from shiyi.memory.protocol import Embedder, MemoryStore
from shiyi.memory.scopes import Viewer

# Kinds where a new value adds to the old ones rather than replacing them.
ACCUMULATING_KINDS = frozenset({"todo", "episodic", "procedural"})
LIVE = ("active", "pending")


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


@dataclass(slots=True)
class WriteReport:
    created: list[str] = field(default_factory=list)
    confirmed: list[str] = field(default_factory=list)
    activated: list[str] = field(default_factory=list)
    superseded: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    dropped: int = 0
    downgraded: int = 0

    @property
    def written(self) -> list[str]:
        return [*self.created, *self.confirmed]


def normalize_key(key: str) -> str:
    """``Lives_In``, ``lives in`` and `` lives-in `` are one slot, stored as ``lives in``
    (words, so the keyword path can match them)."""
    return " ".join(re.sub(r"[\W_]+", " ", key.lower(), flags=re.UNICODE).split())


def normalize_value(value: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", value.lower(), flags=re.UNICODE).split())


_NEGATIONS = re.compile(
    r"\b(not|no|never|don'?t|doesn'?t|isn'?t|won'?t|can'?t|hates?|dislikes?)\b|不|没|别|讨厌",
    re.IGNORECASE,
)


def negated(text: str) -> bool:
    return bool(_NEGATIONS.search(text))


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


def combine_confidence(a: float, b: float) -> float:
    """Two independent observations: 1 - (1-a)(1-b), capped below certainty."""
    return min(0.99, 1.0 - (1.0 - a) * (1.0 - b))


class FactWriter:
    def __init__(
        self, store: MemoryStore, embedder: Embedder | None, settings: LifecycleSettings
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.settings = settings

    def write(
        self, observations: Sequence[Observation], viewer: Viewer, *, now: float | None = None
    ) -> WriteReport:
        report = WriteReport()
        now = time.time() if now is None else now
        for observation in observations:
            self._write_one(observation, viewer, now, report)
        return report

    # --- one observation ---------------------------------------------------------------

    def _write_one(self, obs: Observation, viewer: Viewer, now: float, report: WriteReport) -> None:
        status = self._band(obs.confidence)
        if status is None:
            report.dropped += 1
            return
        if not viewer.may_write(obs.scope, self.settings.workspace_writers):
            obs.scope = "user"  # extraction may not share what this agent may not share
            report.downgraded += 1
        obs.about = list(dict.fromkeys(normalize_name(a) for a in obs.about if a.strip()))
        slot = self._slot(obs, viewer)
        same = self._same_value(slot, obs)
        if same is None:
            same = self._near_duplicate(obs, viewer)
        if same is not None:
            self._confirm(same, obs, now, report)
            return
        # Without a key there is no slot to contradict: keyless facts only deduplicate.
        keyed = bool(normalize_key(obs.key))
        rivals = [f for f in slot if keyed and obs.kind not in ACCUMULATING_KINDS]
        fact = self._new_fact(obs, status, viewer, now)
        active_rivals = [f for f in rivals if f.status == "active"]
        if status == "pending" and active_rivals:
            fact.conflicts_with = active_rivals[0].id
            report.conflicts.append(fact.id)
        self.store.upsert_facts([fact])
        report.created.append(fact.id)
        if status == "active" and rivals:
            self._supersede(fact, rivals, now, report)

    def _band(self, confidence: float) -> str | None:
        if confidence >= self.settings.active_threshold:
            return "active"
        if confidence >= self.settings.pending_threshold:
            return "pending"
        return None

    def _slot(self, obs: Observation, viewer: Viewer) -> list[FactRecord]:
        """Live facts with the same key about the same entities, visible to this writer."""
        key = normalize_key(obs.key)
        candidates = self.store.slot_candidates(obs.about, [key], LIVE)
        return [
            f
            for f in candidates
            if normalize_key(f.key) == key
            and set(f.entities) == set(obs.about)
            and f.scope == obs.scope
            and viewer.sees_fact(f)
        ]

    def _same_value(self, slot: Sequence[FactRecord], obs: Observation) -> FactRecord | None:
        """The slot's fact that says what ``obs`` says (same words, or nearly by meaning)."""
        wanted = normalize_value(obs.value)
        exact = next((f for f in slot if normalize_value(f.value) == wanted), None)
        if exact is not None:
            return exact
        # "likes sushi" / "hates sushi" embed 0.87 apart: negation never repeats a fact.
        near = [f for f in slot if negated(f.value) == negated(obs.value)]
        return self._most_similar(obs.value, near, lambda f: f.value)

    def _near_duplicate(self, obs: Observation, viewer: Viewer) -> FactRecord | None:
        """A differently keyed fact about the same entities that says the same thing."""
        if self.embedder is None or not obs.about:
            return None
        text = f"{obs.key}: {obs.value}"
        others = [
            f
            for f in self.store.slot_candidates(obs.about, [], LIVE)
            if set(f.entities) == set(obs.about) and f.scope == obs.scope and viewer.sees_fact(f)
        ]
        near = [f for f in others if negated(f.value) == negated(obs.value)]
        return self._most_similar(text, near, lambda f: f.text)

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
        fact.evidence_count += 1
        fact.confidence = combine_confidence(fact.confidence, obs.confidence)
        fact.updated_at = now
        fact.source_events = list(dict.fromkeys([*fact.source_events, *obs.source_events]))
        if obs.long_term:
            self._make_long(fact)
        if obs.kind == "procedural" and obs.steps:
            fact.steps, fact.trigger = obs.steps, obs.trigger or fact.trigger
        rivals: list[FactRecord] = []
        if fact.status == "pending" and fact.confidence >= self.settings.pending_threshold:
            fact.status = "active"
            report.activated.append(fact.id)
            if fact.conflicts_with:
                rivals = self.store.get_facts([fact.conflicts_with])
                fact.conflicts_with = ""
        self.store.upsert_facts([fact])
        report.confirmed.append(fact.id)
        live = [r for r in rivals if r.status == "active"]
        if live:
            self._supersede(fact, live, now, report)

    def _supersede(
        self, newer: FactRecord, older: Sequence[FactRecord], now: float, report: WriteReport
    ) -> None:
        ended = newer.valid_from or now
        for old in older:
            old.status, old.valid_to, old.updated_at = "superseded", ended, now
        self.store.upsert_facts(list(older))
        self.store.add_supersedes([(newer.id, old.id) for old in older])
        report.superseded += [old.id for old in older]

    def _new_fact(self, obs: Observation, status: str, viewer: Viewer, now: float) -> FactRecord:
        fact = FactRecord(
            id=f"fact_{uuid.uuid4().hex[:12]}",
            key=normalize_key(obs.key),  # stored normalised: slot lookups match it exactly
            value=obs.value.strip(),
            kind=obs.kind,
            scope=obs.scope,
            confidence=obs.confidence,
            status="active" if status == "active" else "pending",
            created_at=now,
            updated_at=now,
            valid_from=obs.valid_from if obs.valid_from is not None else now,
            trigger=obs.trigger,
            steps=list(obs.steps),
            source=obs.source,
            anchor=obs.anchor,
            entities=list(obs.about),
            source_events=list(obs.source_events),
        )
        viewer.owns(fact)
        if obs.long_term:
            self._make_long(fact)
        else:
            fact.tier, fact.expires_at = "short", self.expiry(obs.kind, now)
        return fact

    def expiry(self, kind: str, now: float) -> float | None:
        days = self.settings.ttl_days.get(kind)
        return None if days is None else now + days * 86400.0

    @staticmethod
    def _make_long(fact: FactRecord) -> None:
        fact.tier, fact.expires_at = "long", None
