"""The earlier statement a chatty update says is no longer so, found by topic and meaning.

The slot rules (:mod:`.stated_slots`) and the ending rules (:mod:`~shiyi.memory.text.endings`)
read plain shapes.  A user who chats says "Finally got a Pixel 8 in the sale, first time on
Android in years" after "My phone's an iPhone 12", or "These days I take the train home to
Dublin instead of flying" after "I fly home to Dublin about once a month"; no rule reads
either, and both statements stayed active.

A statement the user asked to remember replaces one earlier statement of theirs when:

* an ending ends something the earlier statement names ("Cancelled Spotify" after "I pay
  for Spotify Premium"; "I sold my Tesla shares" ends nothing of "I have a Tesla");
* it is said as a settled change (:func:`~shiyi.memory.text.change_cues.says_it_changed`: a
  word of change; no plan, wish, one-off, addition or other person);
* the two share a topic word (:func:`~shiyi.memory.text.change_cues.shared_topic`);
* they are not two known, different attributes (one of them has no slot);
* among several such statements, the ones sharing a name with it ("at the Oxfam shop
  now": the Oxfam statement, not "I work weekends on reception at the Premier Inn", which
  embeds nearer), then the ones holding what it is done "instead of" ("... instead of
  Saturdays");
* they mean nearly the same by embedding (:data:`CHANGE_SIMILARITY`), the nearest of the
  user's facts found by the keyword index; or the update moves "from" a name, or ends a
  thing, that only that statement names ("Moved my membership from PureGym to David
  Lloyd", "Left the Red Lion book club").

Measured on the statements bench's chat sets when it was written (``held-back-7``/``-8``;
``held-back-9`` was sealed until after): see ``docs/benchmarks.md``.
"""

from __future__ import annotations

from collections.abc import Callable

from shiyi.memory.lifecycle.observations import cosine
from shiyi.memory.models import FactRecord, said_time
from shiyi.memory.protocol import Embedder, MemoryStore
from shiyi.memory.scopes import Viewer
from shiyi.memory.text.change_cues import (
    left_behind,
    left_instead,
    said_as_a_change,
    says_it_changed,
    shared_names,
    shared_topic,
    topic_words,
)
from shiyi.memory.text.endings import ended_thing, ended_within

CHANGE_SIMILARITY = 0.5
"""Cosine (all-MiniLM-L6-v2) at or above which a settled change that shares a topic word
replaces the earlier statement.  On the bench's pairs with a word of change and a shared
topic, 0.5 kept 94 of 98 "both" pairs apart before the other-person test, which now stops
the rest; a lower bar let in a second car or a partner's job."""
_LOOKED_AT = 8
_STATED = ("semantic", "preference")


def replaced_by_change(
    store: MemoryStore,
    embedder: Embedder | None,
    fact: FactRecord,
    viewer: Viewer,
    other_attribute: Callable[[str, FactRecord], bool],
) -> FactRecord | None:
    """The user's one earlier active statement that ``fact`` says changed, if any."""
    if embedder is None or fact.kind not in _STATED or not said_as_a_change(fact.value):
        return None
    ending = bool(ended_thing(fact.value))
    found = store.keyword_search(fact.value, _LOOKED_AT, viewer.owners(), node="fact")
    candidates = [
        f
        for f in store.get_facts([s.id for s in found if s.id != fact.id])
        if f.status == "active"
        and f.kind in _STATED
        and f.scope == fact.scope
        and f.user_id == fact.user_id
        and viewer.sees_fact(f)
        and said_time(f) <= said_time(fact)
        and not (fact.key and f.key)  # a slot's versions are the slot rules' to settle
        and not other_attribute(fact.key, f)
        and says_it_changed(fact.value, f.value)
        and shared_topic(fact.value, f.value)
        and (not ending or ended_within(fact.value, f.value))
    ]
    if not candidates:
        return None
    # A name both hold says what the update is about ("my Barnardo's shifts": the Barnardo's
    # statement, not a weekend job that embeds nearer); then what it is done "instead of".
    candidates = [f for f in candidates if shared_names(fact.value, f.value)] or candidates
    if instead := left_instead(fact.value):
        candidates = [f for f in candidates if instead & topic_words(f.value)] or candidates
    # "from PureGym to David Lloyd", "Left the Red Lion book club": the one statement
    # naming what the update leaves or ends
    named = [
        f
        for f in candidates
        if left_behind(fact.value, f.value) or (ending and ended_within(fact.value, f.value))
    ]
    if len(named) == 1:
        return named[0]
    new, *olds = embedder.embed([fact.value, *(f.value for f in candidates)])
    score, best = max(
        ((cosine(new, old), f) for old, f in zip(olds, candidates, strict=True)),
        key=lambda pair: pair[0],
    )
    return best if score >= CHANGE_SIMILARITY else None
