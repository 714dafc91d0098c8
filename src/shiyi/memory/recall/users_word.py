"""What the user stated comes before what the assistant said about it.

A small model answered "Does my sister have kids?" with "No, your sister does not have kids"
although memory held "My sister Maya has two kids".  The answer was stored as a turn, and the
next time the question was asked, that turn shared more words with it than the fact did:
search ranked the assistant's wrong claim first (6.4 against 0.56), and a model reading the
top hit repeated it.

The user's own statement (a fact they asked to remember, still active) is the evidence; an
assistant turn on the same topic is at best a copy of it.  So each such fact takes the place
of the first assistant turn above it that shares two of its topic words
(:func:`~shiyi.memory.text.change_cues.topic_words`; all of them when it has fewer), and the
hits between move down one place.  Places keep their scores.  Nothing else moves: the
user's turns, other facts and assistant turns on other topics stay where they were, and a
store without such facts (an imported conversation) is ranked as before.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from shiyi.memory.models import EventRecord, FactRecord, MemoryHit
from shiyi.memory.text.change_cues import topic_words

_SHARED = 2
_ASSISTANT = "assistant"


def users_word_first(
    order: list[MemoryHit], facts: Mapping[str, FactRecord], turns: Mapping[str, EventRecord]
) -> list[MemoryHit]:
    """``order`` with each of the user's stated facts above the assistant turns on its
    topic."""
    reordered = list(order)
    for hit in order:
        fact = facts.get(hit.id) if hit.node == "fact" else None
        if fact is None or fact.source != "explicit" or fact.status != "active":
            continue
        topic = topic_words(fact.value)
        needed = min(_SHARED, len(topic))
        if not needed:
            continue
        place = reordered.index(hit)
        above = next(
            (
                i
                for i, other in enumerate(reordered[:place])
                if other.node == "event"
                and (turn := turns.get(other.id)) is not None
                and turn.role == _ASSISTANT
                and len(topic & topic_words(turn.content)) >= needed
            ),
            None,
        )
        if above is not None:
            reordered.insert(above, reordered.pop(place))
    return [replace(hit, score=order[i].score) for i, hit in enumerate(reordered)]
