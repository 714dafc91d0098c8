"""Entity resolution: one node per real-world thing, however it is written.

A name is matched, in order, by its normalised form, by an alias, and (with an embedder) by
embedding similarity to known entities of a compatible type; a match merges the new spelling
in as an alias instead of creating a duplicate.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from shiyi.memory.models import EntityRecord
from shiyi.memory.protocol import Embedder, MemoryStore
from shiyi.memory.text.entities import normalize_name

GENERIC_TYPES = frozenset({"concept", "thing", "other", ""})


@dataclass(slots=True, frozen=True)
class Mention:
    name: str
    type: str = "concept"
    aliases: tuple[str, ...] = ()


def compatible(a: str, b: str) -> bool:
    a, b = a.lower(), b.lower()
    return a == b or a in GENERIC_TYPES or b in GENERIC_TYPES


class EntityResolver:
    def __init__(
        self, store: MemoryStore, embedder: Embedder | None, *, similarity: float = 0.85
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.similarity = similarity
        self._embedded: set[str] = set()
        """Entities given a vector by this process: each is embedded once, not per mention."""

    def resolve(self, mentions: Sequence[Mention]) -> dict[str, str]:
        """Written name (as given, and normalised) -> canonical entity name; stores the
        entities (new ones with a vector, matched ones with the new aliases)."""
        canonical: dict[str, str] = {}
        records: dict[str, EntityRecord] = {}
        spoken: dict[str, str] = {}
        for mention in mentions:
            key = normalize_name(mention.name)
            if not key:
                continue
            name = canonical.get(key) or self._known(mention, key) or self._similar(mention)
            aliases = [normalize_name(a) for a in mention.aliases if normalize_name(a)]
            spoken.setdefault(name or key, mention.name if name is None else name)
            if name is None:
                name = key
                record = EntityRecord(key, mention.type or "concept", mention.name, aliases)
            else:
                extra = [a for a in (key, *aliases) if a != name]
                record = EntityRecord(name, mention.type or "concept", "", extra)
            records[name] = _merge(records.get(name), record)
            for written in (mention.name, key, *aliases):
                canonical[written] = name
                canonical[normalize_name(written)] = name
        if records:
            self.store.upsert_entities(list(records.values()))
        # Every resolved entity gets a vector, also those the heuristic linker created
        # without one, so later spellings can be matched by similarity.
        self._embed(spoken)
        return canonical

    def _known(self, mention: Mention, key: str) -> str | None:
        names = [key, *(normalize_name(a) for a in mention.aliases)]
        found = self.store.find_entities([n for n in names if n])
        exact = [e for e in found if e.name == key]
        chosen = exact or [e for e in found if compatible(e.type, mention.type)]
        return chosen[0].name if chosen else None

    def _similar(self, mention: Mention) -> str | None:
        if self.embedder is None:
            return None
        vector = self.embedder.embed([mention.name])[0]
        hits = self.store.vector_search("entity", vector, 5)
        good = [h for h in hits if h.score >= self.similarity]
        if not good:
            return None
        candidates = {e.name: e for e in self.store.find_entities([h.id for h in good])}
        for hit in good:
            entity = candidates.get(hit.id)
            if entity is not None and compatible(entity.type, mention.type):
                return entity.name
        return None

    def _embed(self, spoken: dict[str, str]) -> None:
        todo = {name: text for name, text in spoken.items() if name not in self._embedded}
        if self.embedder is None or not todo:
            return
        vectors = self.embedder.embed(list(todo.values()))
        self.store.set_embeddings("entity", list(zip(todo, vectors, strict=True)))
        self._embedded.update(todo)


def _merge(old: EntityRecord | None, new: EntityRecord) -> EntityRecord:
    if old is None:
        return new
    kind = new.type if old.type in GENERIC_TYPES else old.type
    aliases = list(dict.fromkeys([*old.aliases, *new.aliases]))
    return EntityRecord(old.name, kind, old.display or new.display, aliases)
