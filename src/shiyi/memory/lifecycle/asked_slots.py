"""The user's slot a yes-no question asks after, and the facts that answer it.

"Am I vegetarian?" shares no word with "diet: I started eating meat again", nor "Where do I
live?" with "lives in: I moved to Porto last month", so a keyword prefetch never offered
the fact, and the model answered from nothing.  The statement the question asks to complete
("I'm vegetarian", "I live in Somewhere") names the slot (:func:`stated_slot`: ``diet``,
``lives in``); the user's active facts of that slot answer it, whatever words they use.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from shiyi.memory.lifecycle.slots import normalize_key
from shiyi.memory.lifecycle.stated_slots import stated_slot
from shiyi.memory.models import FactRecord, MemoryHit
from shiyi.memory.protocol import MemoryStore
from shiyi.memory.recall.hits import kind_matches
from shiyi.memory.recall.prefetch import fact_hit
from shiyi.memory.scopes import Viewer

# Questions asking for the value of one of the user's slots, each with the statement its
# answer would be ("Where do I live?": "I live in Somewhere").  The statement's slot
# (:func:`stated_slot`) is the slot asked after, so no list of slots is kept here.
_STILL = r"(?:\s+(?:still|now|currently|usually))?"
_ASKS: tuple[tuple[re.Pattern[str], tuple[str, ...]], ...] = tuple(
    (re.compile(pattern + r"(?:\s+(?:now|these days|nowadays|currently))?\W*$", re.I), templates)
    for pattern, templates in (
        # "Am I vegetarian?", "Am I still single?": the words, said as the user's
        (r"^\W*am\s+i(?:\s+still)?\s+(?P<rest>[^?]{1,80}?)", ("I'm {rest}",)),
        (r"^\W*do\s+i(?:\s+still)?\s+(?P<rest>[^?]{1,80}?)", ("I {rest}",)),
        # "Where do I live?", "Who do I work for?", "Where am I based?"
        (rf"^\W*(?:where|who|whom)\s+do\s+i{_STILL}\s+(?P<rest>\w+(?:\s+(?:for|at|in|with|to))?)",
         ("I {rest} Somewhere", "I {rest} in Somewhere", "I {rest} at Somewhere")),
        (rf"^\W*where\s+am\s+i{_STILL}\s+(?P<rest>living|based|working|studying)",
         ("I'm {rest} in Somewhere", "I'm {rest} at Somewhere")),
        # "What city do I live in?", "Which company do I work for?"
        (rf"^\W*(?:what|which)\s+\w+\s+do\s+i{_STILL}\s+(?P<rest>\w+\s+(?:for|at|in))",
         ("I {rest} Somewhere",)),
        # "What's my job?", "Who is my manager?", "What is my sister's address?"
        (r"^\W*(?:what|who|where|when|which)(?:['’]s|\s+is|\s+are)\s+(?P<rest>(?:my|our)\s+[^?]{1,60}?)",
         ("{rest} is Something",)),
        # "Who am I married to?", "How old am I?", "What do I do for a living?"
        (rf"^\W*who\s+am\s+i{_STILL}\s+(?P<rest>married\s+to|engaged\s+to|dating|seeing"
         r"|going\s+out\s+with)", ("I'm {rest} Someone",)),
        # "Which company am I working for?", "Which city am I in?"
        (rf"^\W*(?:what|which)\s+\w+\s+am\s+i{_STILL}\s+(?P<rest>\w+ing\s+(?:for|at|in))",
         ("I'm {rest} Somewhere",)),
        (rf"^\W*(?:what|which)\s+(?:city|town|country)\s+am\s+i{_STILL}\s+in",
         ("I live in Somewhere",)),
        (r"^\W*how\s+old\s+am\s+i", ("I'm 30 years old",)),
        (r"^\W*what\s+do\s+i\s+do\s+for\s+(?:a\s+living|work)", ("I work as a nurse",)),
        # "How many cats do I have?"
        (r"^\W*how\s+many\s+(?P<rest>[a-z]+(?:\s+[a-z]+)?)\s+do\s+i(?:\s+still)?\s+(?:have|own)",
         ("I have 2 {rest}",)),
    )
) + tuple(
    (re.compile(pattern + r"[？?吗呢啊。！!\s]*$"), templates)
    for pattern, templates in (
        # "我住在哪里？", "我现在在哪儿上班？", "我多大了？", "我叫什么名字？", "我的生日是哪天？"
        (r"^我(?:现在|目前|如今)?住(?:在)?哪(?:里|儿)?", ("我住在某地",)),
        (r"^我(?:现在|目前|如今)?在哪(?:里|儿|家公司)?(?:工作|上班)", ("我在某公司工作",)),
        (r"^我(?:今年)?(?:多大|几岁)(?:了)?", ("我今年30岁",)),
        (r"^我叫什么(?:名字)?", ("我叫某某",)),
        (r"^(?P<rest>我(?:的|最喜欢的)\S{1,10}?)(?:现在|目前)?是(?:什么|谁|哪(?:里|儿|个|天))",
         ("{rest}是某物",)),
    )
)  # fmt: skip
_MOST = 3
_LOOKED_AT = 8


def asked_slot(question: str) -> str:
    """The user's own slot ``question`` asks after ("Am I still single?": marital status;
    "Where do I live?": lives in); "" when it asks after none."""
    for pattern, templates in _ASKS:
        if (found := pattern.match(question)) is None:
            continue
        words = {name: value.strip() for name, value in found.groupdict().items() if value}
        for template in templates:
            slot = stated_slot(template.format(**words))
            if slot is not None and not slot.about:
                return slot.key
        return ""
    return ""


def slot_facts_first(
    question: str,
    hits: Sequence[MemoryHit],
    store: MemoryStore,
    viewer: Viewer,
    kinds: Sequence[str] | None = None,
    keep: Callable[[MemoryHit], bool] = lambda hit: True,
) -> list[MemoryHit]:
    """``hits`` with the viewer's current facts of the slot ``question`` asks after first
    ("Where do I live?": lives in), above the user's own earlier askings of it; ``hits``
    unchanged when it asks after none."""
    key = asked_slot(question)
    if not key:
        return list(hits)
    hits_held = (fact_hit(fact, path="slot") for fact in held_in_slot(store, viewer, key))
    held = [hit for hit in hits_held if kind_matches(hit, kinds) and keep(hit)]
    taken = {hit.id for hit in held}
    return [*held, *(hit for hit in hits if hit.id not in taken)]


def held_in_slot(store: MemoryStore, viewer: Viewer, key: str) -> list[FactRecord]:
    """The viewer's own active facts of slot ``key`` about themselves, newest first.

    Found through the keyword index (a fact's indexed text starts with its key) among the
    viewer's own facts: on the reply path, where a scan of every fact by key took 46 ms
    beside 50,000 facts."""
    keys = _spellings(key)
    found = store.keyword_search(key, _LOOKED_AT, viewer.owners(), node="fact")
    facts = [
        f
        for f in store.get_facts([s.id for s in found])
        if f.status == "active"
        and normalize_key(f.key) in keys
        and f.user_id == viewer.user_id
        and viewer.sees_fact(f)
        and _about_the_user(f)
    ]
    return sorted(facts, key=lambda f: f.updated_at or f.created_at, reverse=True)[:_MOST]


def in_slot(fact_text: str, key: str) -> bool:
    """Whether a fact's text ("number of cat: I have a cat") is of slot ``key``."""
    said_key, colon, value = fact_text.partition(": ")
    return bool(colon) and normalize_key(said_key) in _spellings(key) and _of_the_user(value)


def _spellings(key: str) -> list[str]:
    """``key`` and its other number: "number of cats" is "number of cat" ("I have a cat")."""
    other = key.removesuffix("s") if key.endswith("s") else f"{key}s"
    return [key, other] if key.startswith("number of ") else [key]


def _about_the_user(fact: FactRecord) -> bool:
    return _of_the_user(fact.value)


def _of_the_user(value: str) -> bool:
    """A value stated of someone else ("my sister is vegan") answers nothing about the user."""
    stated = stated_slot(value)
    return stated is None or not stated.about
