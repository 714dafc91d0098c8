"""Asked about themself ("where do I live?"), the user's own facts come before others'.

"My sister lives in Porto" shares more words and meaning with "where do I live?" than "I
moved to Munich" does, so by score alone the sister's city came first (2.7 against 1.0), and
a model reading the top hit answered Porto.  A question in the first person that names no
one else (no name, no "my sister") asks about the user; where the candidates hold the same
attribute for the user and for someone else ("lives in": the user's and the sister's), the
user's own versions take that attribute's places first.  Nothing else moves: the positions
the attribute's facts held stay theirs (with their scores), only which fact stands where
changes, and an
attribute held only by someone else keeps its place (it may be what the user means).

Whose a fact is comes from :func:`~shiyi.memory.text.subjects.subject_of`, the same rule the
fact writer uses for slots.  Conversation turns and facts without a key are left alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import replace

from shiyi.memory.models import FactRecord, MemoryHit
from shiyi.memory.text.subjects import KIN, ZH_KIN, subject_of, words

_FIRST_PERSON = re.compile(r"\b(?:i|me|my|mine|myself)\b|\bi['’](?:m|ve|d|ll)\b", re.IGNORECASE)
_KIN_WORDS = frozenset(word for phrase in KIN for word in phrase.split()) - {"best", "big"}


def asks_about_me(query: str, people: Iterable[str] = ()) -> bool:
    """Whether ``query`` asks about the user alone: the first person ("I", "my", "我"), no
    relation ("my sister", "我妹妹") and none of ``people`` (names it holds)."""
    if "我" in query.replace("我们", ""):  # Chinese "people" are any few characters
        return not any(kin in query for kin in ZH_KIN)
    if any(True for _ in people):
        return False
    if not _FIRST_PERSON.search(query):
        return False
    return not _KIN_WORDS.intersection(words(query))


def own_facts_first(
    order: list[MemoryHit], facts: Mapping[str, FactRecord], users: Iterable[str]
) -> list[MemoryHit]:
    """``order`` with, per attribute held both by the user and by someone else, the user's
    facts in that attribute's first places."""
    names = list(users)
    by_key: dict[str, list[int]] = {}
    for place, hit in enumerate(order):
        fact = facts.get(hit.id) if hit.node == "fact" else None
        if fact is not None and fact.key:
            by_key.setdefault(fact.key, []).append(place)
    reordered = list(order)
    for places in by_key.values():
        hits = [order[p] for p in places]
        mine = [h for h in hits if not _someone_elses(facts[h.id], names)]
        if len(mine) in (0, len(hits)):
            continue
        theirs = [h for h in hits if h not in mine]
        for place, hit in zip(places, [*mine, *theirs], strict=True):
            reordered[place] = replace(hit, score=order[place].score)  # the place's score
    return reordered


def _someone_elses(fact: FactRecord, users: list[str]) -> bool:
    return bool(subject_of(fact.entities, fact.value, users))
