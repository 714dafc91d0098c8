"""The user's slot a yes-no question asks after, and the facts that answer it.

"Am I vegetarian?" shares no word with "diet: I started eating meat again", so a keyword
prefetch never offered the fact, and the model answered from nothing.  The question's words
said as a statement ("I'm vegetarian") name the slot (:func:`stated_slot`: ``diet``); the
user's active facts of that slot answer it, whatever words they use.
"""

from __future__ import annotations

import re

from shiyi.memory.lifecycle.slots import normalize_key
from shiyi.memory.lifecycle.stated_slots import stated_slot
from shiyi.memory.models import FactRecord
from shiyi.memory.protocol import MemoryStore
from shiyi.memory.scopes import Viewer

# "Am I vegetarian?", "Am I still single?", "Do I live in Leeds?", "Do I have a car?"
_YES_NO = re.compile(
    r"^\W*(?P<verb>am|do)\s+i\s+(?:still\s+)?(?P<rest>[^?]{1,80})\?*\s*$", re.IGNORECASE
)
_MOST = 3


def asked_slot(question: str) -> str:
    """The user's own slot ``question`` asks after ("Am I still single?": marital status);
    "" when it is no yes-no question about the user or its words state no slot."""
    found = _YES_NO.match(question)
    if found is None:
        return ""
    lead = "I'm " if found.group("verb").lower() == "am" else "I "
    slot = stated_slot(lead + found.group("rest").strip())
    return slot.key if slot is not None and not slot.about else ""


def held_in_slot(store: MemoryStore, viewer: Viewer, key: str) -> list[FactRecord]:
    """The viewer's own active facts of slot ``key`` about themselves, newest first."""
    facts = [
        f
        for f in store.slot_candidates([], [key], ["active"])
        if normalize_key(f.key) == key
        and f.user_id == viewer.user_id
        and viewer.sees_fact(f)
        and _about_the_user(f)
    ]
    return sorted(facts, key=lambda f: f.updated_at or f.created_at, reverse=True)[:_MOST]


def _about_the_user(fact: FactRecord) -> bool:
    """A fact stated of someone else ("my sister is vegan") answers nothing about the user."""
    stated = stated_slot(fact.value)
    return stated is None or not stated.about
