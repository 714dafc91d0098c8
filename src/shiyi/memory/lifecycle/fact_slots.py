"""Finding the stored facts an observation is compared with: its slot and its near duplicates.

A slot is one attribute of one subject (:mod:`shiyi.memory.lifecycle.slots` names both): the
versions stored under any wording of the attribute, plus those under another unlisted wording
that the conversation showed to mean the same (:meth:`SlotFinder.reworded`).  Keyless and
accumulating kinds only deduplicate against facts with exactly their key.  A differently keyed
fact about the same entities that says the same thing by embedding is a near duplicate.  This
module reads the store only; what a write then does is :mod:`shiyi.memory.lifecycle.facts`'s.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from shiyi.config.settings import LifecycleSettings
from shiyi.index.english import embedding_says_little
from shiyi.memory.lifecycle.observations import (
    Observation,
    alike,
    cosine,
    linkable,
    normalize_value,
)
from shiyi.memory.lifecycle.slots import (
    Attribute,
    AttributeResolver,
    many_valued,
    normalize_key,
)
from shiyi.memory.lifecycle.stated_slots import restates, states_another_value
from shiyi.memory.models import FactRecord, said_time
from shiyi.memory.protocol import Embedder, MemoryStore
from shiyi.memory.scopes import Viewer
from shiyi.memory.text.contrasts import says_again
from shiyi.memory.text.endings import ends, ends_alike
from shiyi.memory.text.subjects import KIN, named_kin, subject_of

# Kinds where a new value adds to the old ones rather than replacing them.
ACCUMULATING_KINDS = frozenset({"todo", "episodic", "procedural"})
LIVE = ("active", "pending")
VERSIONS = (*LIVE, "superseded")


@dataclass(slots=True)
class Slot:
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


class SlotFinder:
    """The store's facts one observation is compared with (the fact writer's lookups)."""

    def __init__(
        self,
        store: MemoryStore,
        embedder: Embedder | None,
        settings: LifecycleSettings,
        attributes: AttributeResolver,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.settings = settings
        self.attributes = attributes

    def slot(self, obs: Observation, viewer: Viewer, users: set[str], now: float) -> Slot:
        key = normalize_key(obs.key)
        if not key or obs.kind in ACCUMULATING_KINDS:
            return Slot(Attribute("", key), (), self.same_key(obs, key, viewer), False)
        attribute = self.attributes(key)
        multi = not attribute.name and many_valued(key)
        subject = subject_of(obs.about, obs.value, users, keep_objects=multi)
        if subject:  # every fact about the subject; their keys decide below
            candidates = self.store.slot_candidates(list(subject), [], VERSIONS)
        else:
            candidates = self.store.slot_candidates([], attribute.lookup_keys, VERSIONS)

        def whose(f: FactRecord) -> tuple[str, ...]:
            return subject_of(f.entities, f.value, users, keep_objects=multi)

        def here(f: FactRecord) -> bool:
            return f.kind not in ACCUMULATING_KINDS and f.scope == obs.scope and viewer.sees_fact(f)

        def fits(f: FactRecord) -> bool:
            return here(f) and whose(f) == subject

        versions = [f for f in candidates if self.attributes(f.key).same(attribute) and fits(f)]
        if not attribute.name:
            versions += self.reworded(obs, versions, attribute, subject, fits, now)
        known = {f.id for f in versions}
        for other in self.other_names(obs, subject, attribute, whose, here):
            if other.id not in known:
                versions.append(other)
        return Slot(attribute, subject, versions, True)

    def other_names(
        self,
        obs: Observation,
        subject: tuple[str, ...],
        attribute: Attribute,
        whose: Callable[[FactRecord], tuple[str, ...]],
        here: Callable[[FactRecord], bool],
    ) -> list[FactRecord]:
        """Versions stored under the subject's other name: "my sister lives in Porto" is a
        version of "my sister Ana moved to Madrid", and the other way round once Ana was
        named so.  Only one person may answer to the relation: with two sisters named,
        "my sister" is neither."""
        relation = named_kin(obs.value, subject[0]) if len(subject) == 1 else ""
        if not relation and (len(subject) != 1 or subject[0] not in KIN):
            return []
        pool = [
            f
            for f in self.store.slot_candidates([], attribute.lookup_keys, VERSIONS)
            if here(f) and self.attributes(f.key).same(attribute)
        ]
        if relation:  # "my sister Ana ...": the slot's unnamed "my sister" versions
            unnamed = {(relation,), (relation.split()[-1],)}
            return [f for f in pool if whose(f) in unnamed]
        named = {
            found
            for f in pool
            if len(found := whose(f)) == 1
            and named_kin(f.value, found[0]).split()[-1:] == subject[0].split()[-1:]
        }
        if len(named) != 1:
            return []
        return [f for f in pool if whose(f) in named]

    def reworded(
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
        turns = sorted({t for said, value in ours if linkable(value) for t in said})
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

    def same_key(self, obs: Observation, key: str, viewer: Viewer) -> list[FactRecord]:
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

    def same_value(self, slot: Sequence[FactRecord], obs: Observation) -> FactRecord | None:
        """The slot's fact that says what ``obs`` says (same words, or nearly by meaning)."""
        wanted = normalize_value(obs.value)
        exact = next((f for f in slot if normalize_value(f.value) == wanted), None)
        if exact is not None:
            return exact
        # "I still live in Berlin" after "I live in Berlin": the same value in other words
        restated = next((f for f in slot if restates(obs.value, f.value)), None)
        if restated is not None:
            return restated
        # "I still go climbing every Saturday" after "I go climbing on Saturdays"
        again = next((f for f in slot if says_again(obs.value, f.value)), None)
        if again is not None:
            return again
        # "I stopped smoking" after "I gave up smoking": one thing ended, said twice
        ended = next((f for f in slot if ends_alike(obs.value, f.value)), None)
        if ended is not None:
            return ended
        # "likes sushi" / "hates sushi" embed 0.87 apart: negation never repeats a fact;
        # nor do other numbers ("85kg" / "82kg", "9:45 pm" / "10:30 pm" embed alike).
        near = [
            f
            for f in slot
            if alike(f.value, obs.value) and not states_another_value(obs.value, f.value)
        ]
        return self.most_similar(obs.value, near, lambda f: f.value)

    def near_duplicate(self, obs: Observation, viewer: Viewer) -> FactRecord | None:
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
            and not self.other_attribute(mine, f)
        ]
        # another stated value, or an ending of it, is never the same thing said again
        # ("My uncle sold his boat last summer" embeds 0.9 alike "My uncle owns a boat")
        near = [
            f
            for f in others
            if alike(f.value, obs.value)
            and not states_another_value(obs.value, f.value)
            and not ends(obs.value, f.value)
        ]
        return self.most_similar(text, near, lambda f: f.text)

    def other_attribute_of(self, key: str, fact: FactRecord) -> bool:
        """Whether ``key`` and ``fact``'s key are two known, different attributes."""
        return self.other_attribute(self.attributes(key).name, fact)

    def other_attribute(self, mine: str, fact: FactRecord) -> bool:
        """Two known, different attributes ("lives in: Berlin", "works in: Berlin") read
        alike but never repeat each other."""
        theirs = self.attributes(fact.key).name
        return bool(mine and theirs and mine != theirs)

    def most_similar(
        self, text: str, facts: Sequence[FactRecord], field: Callable[[FactRecord], str]
    ) -> FactRecord | None:
        """The fact most similar to ``text`` if at least ``duplicate_similarity`` (one
        embedding call for all of them; texts seen before come from the cache)."""
        if self.embedder is None or not facts:
            return None
        if embedding_says_little(text, self.embedder.model_id):
            return None  # two Chinese sentences embed alike: a new value was lost as a repeat
        query, *vectors = self.embedder.embed([text, *(field(f) for f in facts)])
        scored = [(cosine(query, v), f) for v, f in zip(vectors, facts, strict=True)]
        score, best = max(scored, key=lambda pair: pair[0])
        return best if score >= self.settings.duplicate_similarity else None


def stored_key(obs: Observation, slot: Slot) -> str:
    """The key a new version is stored under: the slot's current key, else the
    attribute's canonical one for the user's own attributes (lookups by key then find
    every version), else the key as written (normalised)."""
    current = slot.current() if slot.slotted else None
    if current is not None:
        return normalize_key(current.key)
    if slot.slotted and not slot.subject:
        return slot.attribute.canonical
    return normalize_key(obs.key)
