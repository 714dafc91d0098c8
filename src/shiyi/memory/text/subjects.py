"""Whom a stored statement is about: the user, or someone the user talks about.

``about`` names the entities a fact mentions; :func:`subject_of` keeps those the statement
is *about*: "my sister Ana lives in Porto" is Ana's, "I visited Ana in Porto" the user's
(Ana is its object).  The fact writer uses it to find a fact's slot
(:mod:`shiyi.memory.lifecycle.slots`); recall uses it to put the user's own facts first when
the user asks about themself (:mod:`shiyi.memory.recall.own_facts`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from shiyi.memory.text.entities import normalize_name

USER_NAMES = frozenset({"user", "the user", "me", "i", "myself", "my", "you"})
"""``about`` entries that mean the user (plus the user id and name:
:meth:`~shiyi.memory.lifecycle.facts.FactWriter.user_names`)."""
DETERMINERS = frozenset({"my", "our", "the", "a", "an", "his", "her", "their", "your"})
KIN = frozenset(
    {"mother", "mum", "mom", "father", "dad", "parents", "sister", "brother", "son",
     "daughter", "wife", "husband", "partner", "girlfriend", "boyfriend", "fiance", "fiancee",
     "friend", "best friend", "cousin", "aunt", "uncle", "grandmother", "grandfather",
     "grandma", "grandpa", "niece", "nephew", "boss", "manager", "colleague", "coworker",
     "roommate", "flatmate", "neighbour", "neighbor", "kid", "child", "children", "kids",
     "family", "older sister", "younger sister", "older brother", "younger brother",
     "little sister", "little brother", "big sister", "big brother", "twin", "dog", "cat",
     "puppy", "kitten"}
)  # fmt: skip
"""People (and pets) someone calls "my X": whose home, work or age a sentence can state."""
ZH_KIN = (
    "妈妈", "母亲", "爸爸", "父亲", "父母", "姐姐", "妹妹", "哥哥", "弟弟", "儿子", "女儿",
    "老婆", "妻子", "老公", "丈夫", "男朋友", "女朋友", "朋友", "老板", "同事", "室友",
)  # fmt: skip
_MINE = frozenset({"my", "our"})
# Words that may stand before or beside a name in a sentence about that person ("my sister
# Ana lives in Porto", "Ana, my sister, lives in Porto").
_TITLES = DETERMINERS | {word for phrase in KIN for word in phrase.split()}
# After an entity at the start of a value, these make it the value's subject ("Tofu is 7",
# "Tofu's age is 7"), not its object.
_SUBJECT_VERBS = frozenset(
    {"is", "was", "are", "were", "has", "had", "have", "s", "will", "likes", "loves",
     "lives", "works", "turned", "got", "moved", "relocated", "studies", "lived", "worked",
     "became", "started", "married", "does", "did", "now", "currently", "still", "just",
     "recently", "finally", "no", "never", "also", "actually", "live", "work", "study",
     "like", "love", "own", "turn", "get", "do", "sold", "gave", "quit", "left", "broke",
     "split", "goes", "plays", "owns", "drives", "smokes", "drinks", "eats", "uses"}
)  # fmt: skip


def subject_of(
    about: Iterable[str], value: str, user_names: Iterable[str], *, keep_objects: bool = False
) -> tuple[str, ...]:
    """The statement's subject: the ``about`` entities that are neither the user nor the
    value's object (an entity named inside the value, unless the value starts with it
    followed by a verb: "Tofu is 7"; ``keep_objects``: objects count too, for many-valued
    keys).  Empty: the user."""
    value_words = words(value)
    users = {normalize_name(n) for n in user_names}
    subject = []
    for name in dict.fromkeys(normalize_name(a) for a in about):
        if not name or name in users:
            continue
        if not keep_objects and _is_object(words(name), value_words):
            continue
        subject.append(name)
    return tuple(sorted(subject))


def named_kin(value: str, name: str) -> str:
    """The relation ``value`` introduces ``name`` by: "sister" in "my sister Ana moved to
    Madrid" or "Ana, my sister, moved"; '' when it names no relation of the user's.  The
    conversation itself says that "my sister" and Ana are one person."""
    value_words, name_words = words(value), words(name)
    width = len(name_words)
    for at in (i for i in range(len(value_words)) if value_words[i : i + width] == name_words):
        before = _kin_after_my(value_words[:at], reverse=True)
        if before:
            return before
        after = _kin_after_my(value_words[at + width :], reverse=False)
        if after:
            return after
    return ""


def _kin_after_my(side: list[str], *, reverse: bool) -> str:
    """The kin phrase right beside a name: "my older sister" before it (``reverse``: read
    back from the name) or ", my sister," after it."""
    if reverse:
        for start in range(len(side) - 1, max(len(side) - 4, -1), -1):
            if side[start] in _MINE:
                phrase = " ".join(side[start + 1 :])
                return phrase if phrase in KIN else ""
        return ""
    if side[:1] and side[0] in _MINE:
        for end in range(min(len(side), 4), 1, -1):
            phrase = " ".join(side[1:end])
            if phrase in KIN:
                return phrase
    return ""


def words(text: str) -> list[str]:
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower(), flags=re.UNICODE).split()).split()


def _is_object(name: list[str], value: list[str]) -> bool:
    if not name:
        return False
    width = len(name)
    at = [i for i in range(len(value) - width + 1) if value[i : i + width] == name]
    if not at:
        return False
    # "Tofu is 7", "my sister lives in Porto", "my sister Ana lives in Porto", "Ana, my
    # sister, lives in Porto": the value is a sentence about the entity, its subject.
    first, after = at[0], at[0] + width
    leads = all(w in _TITLES for w in value[:first])
    if after < len(value) and value[after] in DETERMINERS:  # an apposition: "Ana, my sister,"
        after += 1
        while after < len(value) and value[after] in _TITLES:
            after += 1
    # ... and so is one followed by a verb in the past: "my sister cancelled her plan"
    verb = value[after] if len(value) > after else ""
    return not (leads and (verb in _SUBJECT_VERBS or (len(verb) > 4 and verb.endswith("ed"))))
