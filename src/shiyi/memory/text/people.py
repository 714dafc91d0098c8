"""Who a question names: speakers matched through nicknames, short forms, near-spellings and
what the conversation itself calls them.

People ask about each other the way they talk: "What did *Bex* adopt?" of a chat whose speaker
field says ``rebecca``, "Mel" for Melanie, "Jonh" typed for John.  An exact match of the
query's words against the speaker field finds none of these, so the speaker boost
(:mod:`shiyi.memory.recall.boosts`) never fires for them.  A query name (a capitalised word
that is not a question or function word) names a speaker when

* it is the speaker's name, or a nickname of it or of the same given name (``Bob`` /
  ``Robert`` / ``Bobby``: the hand-curated table of the ``nicknames`` package);
* it is a short form: one name begins with the other and the shorter has 3+ letters
  (``Mel`` / ``Melanie``, ``Chris`` / ``Christopher``);
* it is a near-spelling: same first letter, 4+ letters, one edit apart (a letter missing,
  added, changed or two swapped: ``Jonh`` / ``John``, ``Carolin`` / ``Caroline``);
* the conversation calls that speaker so: another speaker addresses them by it ("Thanks,
  Bex!", "Hey Mel, ...") or they say it of themselves ("call me Bex").

A name that matches two speakers by any rule but the exact one names neither: guessing between
them would favour a wrong person's turns.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nicknames import NickNamer

MIN_SHORT_FORM = 3
MIN_NEAR_SPELLING = 4

_CAPITALISED = re.compile(r"\b[A-Z][a-z]+(?:'s)?\b")
_NOT_NAME_WORDS = """a an the i i'm i've i'd what when where who whom whose why how which did
    does do done is are was were be been has have had will would can could should shall may
    might must if and or but so then than that this these those there here it its he she they we you
    his her their our your my me him them us of in on at to for from by with about after
    before during since until into over under between tell say said give list name describe
    explain remind recall remember yes no not ok okay also just please
    monday tuesday wednesday thursday friday saturday sunday january february march april
    june july august september october november december"""
_NOT_NAMES = frozenset(_NOT_NAME_WORDS.split())
"""Capitalised words that start questions or name days and months, never a person."""

_GREETINGS = (
    r"hey|hi|hiya|hello|heya|yo|morning|thanks|thank you|thx|congrats|congratulations|"
    r"bye|goodbye|oh|wow|aw+|yes|yeah|sorry|love you|miss you|good morning|good night|"
    r"good luck|happy birthday|dear|welcome back|see you"
)
_ADDRESSED = [
    # "Hey Mel," / "Thanks, Bex!" at the start of a sentence
    re.compile(rf"(?:^|[.!?]\s+)(?i:{_GREETINGS})\s*,?\s+([A-Z][a-z]+)\b"),
    # "..., Bex!" / "... you, Mel." closing a sentence
    re.compile(r",\s+([A-Z][a-z]+)\s*[!?.]+(?:\s|$)"),
]
_SELF_NAMED = re.compile(
    r"\b(?i:call me|known as|my friends call me|everyone calls me|i go by)\s+([A-Z][a-z]+)\b"
)


def query_names(query: str) -> frozenset[str]:
    """The words of ``query`` that may name a person, lower-cased: capitalised words inside a
    sentence that are not question or function words ("What did Mel paint?" -> ``{"mel"}``).
    A sentence's first word is capitalised anyway ("Car trouble: who ..."), so it is left
    out; an exact speaker name there is still matched by the caller's plain word match."""
    names = set()
    for match in _CAPITALISED.finditer(query):
        before = query[: match.start()].rstrip()
        if not before or before[-1] in ".!?:;\"'(\n":
            continue
        word = match.group().lower().removesuffix("'s")
        if word not in _NOT_NAMES:
            names.add(word)
    return frozenset(names)


def called(turns: Iterable[tuple[str, str]], speakers: Iterable[str]) -> dict[str, set[str]]:
    """What the conversation calls each speaker, from ``(speaker, text)`` turns: names they
    are addressed by (when only one other speaker can be meant) or give themselves."""
    everyone = set(speakers)
    names: dict[str, set[str]] = {}
    for speaker, text in turns:
        for match in _SELF_NAMED.finditer(text):
            names.setdefault(speaker, set()).add(match.group(1).lower())
        others = everyone - {speaker}
        if len(others) != 1:
            continue  # a group chat: whom "Thanks, Bex!" thanks is not known
        (addressed,) = others
        for pattern in _ADDRESSED:
            for match in pattern.finditer(text):
                word = match.group(1).lower()
                if word not in _NOT_NAMES and word not in everyone:
                    names.setdefault(addressed, set()).add(word)
    return names


def named_speakers(
    names: Iterable[str],
    speakers: Iterable[str],
    called_names: Mapping[str, set[str]] | None = None,
) -> set[str]:
    """The ``speakers`` (lower-cased speaker fields) that query ``names`` name."""
    everyone = set(speakers)
    found: set[str] = set()
    for name in names:
        if name in everyone:
            found.add(name)
            continue
        matches = {s for s in everyone if _same_person(name, s, (called_names or {}).get(s))}
        if len(matches) == 1:
            found |= matches
    return found


def _same_person(name: str, speaker: str, calls: set[str] | None) -> bool:
    if calls and name in calls:
        return True
    if _nicknamed(name, speaker):
        return True
    short, long = sorted((name, speaker), key=len)
    if len(short) >= MIN_SHORT_FORM and long.startswith(short):
        return True
    return (
        min(len(name), len(speaker)) >= MIN_NEAR_SPELLING
        and name[0] == speaker[0]
        and _one_edit_apart(name, speaker)
    )


def _nicknamed(a: str, b: str) -> bool:
    return bool(_given_names(a) & _given_names(b))


@cache
def _given_names(name: str) -> frozenset[str]:
    """``name`` with the given names it is a nickname of (``bob`` -> bob, robert)."""
    return frozenset({name, *_namer().canonicals_of(name)})


@cache
def _namer() -> NickNamer:
    from nicknames import NickNamer  # reads its table (2,700 rows) once, when first asked

    return NickNamer()


def _one_edit_apart(a: str, b: str) -> bool:
    """One insertion, deletion, substitution or swap of neighbours turns ``a`` into ``b``."""
    if abs(len(a) - len(b)) > 1 or a == b:
        return False
    start = 0
    while start < min(len(a), len(b)) and a[start] == b[start]:
        start += 1
    if len(a) == len(b):
        rest_a, rest_b = a[start + 1 :], b[start + 1 :]
        if rest_a == rest_b:
            return True  # one letter changed
        pair_a, pair_b = a[start : start + 2], b[start : start + 2]
        return a[start + 2 :] == b[start + 2 :] and pair_a == pair_b[::-1]  # two swapped
    longer, shorter = (a, b) if len(a) > len(b) else (b, a)
    return longer[start + 1 :] == shorter[start:]
