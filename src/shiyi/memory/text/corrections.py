"""Statements that take back what the user said before: corrections and changes of mind.

"Sorry, I meant 4pm" after "The meeting with Priya is at 3pm"; "Actually it's Wednesday,
not Tuesday" after "My dentist appointment is on Tuesday"; "We changed our plans, we're
going to Greece instead" after "I'm going to Spain for the summer holiday".  Neither names
the slot or repeats the topic, so the slot and change rules left both statements active.

* A **correction** opens with a cue ("sorry, I meant", "correction:", "actually", "no
  wait", "make that") and gives a value: one that says what it is "not" ("Wednesday, not
  Tuesday"), or one of a shape the earlier statement holds exactly one of (a weekday, a
  clock time, a day of the month, a month, a year, an amount, a name).  The earlier
  statement is then read with that value in its place: "The meeting with Priya is at 4pm".
* A **change of mind** ("changed my mind", "change of plans", "we changed our plans", "on
  second thought") takes back a plan: a statement of what the user is going to do.

These are word tests only; which earlier statement is meant (the user's latest ones) is
:mod:`shiyi.memory.lifecycle.taken_back`'s.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

LONGEST = 300

_LEAD = r"^\s*(?:(?:oh|oops|ah|sorry|no|wait|hmm|er|um|ugh)\b[\s,.!:;-]*)*"
_CORRECTION = re.compile(
    _LEAD + r"(?:sorry|oops|whoops|i\s+meant|i\s+mean|correction|actually|make\s+that|my\s+mistake"
    r"|my\s+bad|typo|no\s+wait|wait\s+no|scratch\s+that|not\s+(?=[^,]{1,30},))\b[\s,.!:;-]*",
    re.IGNORECASE,
)
_MIND = re.compile(
    _LEAD + r"(?:(?:we|i)(?:['’]ve|\s+have)?\s+)?(?:changed\s+(?:my|our)\s+minds?"
    r"|change\s+of\s+plans?|changed\s+(?:my|our|the)\s+plans?|plans?\s+(?:have\s+)?changed"
    r"|on\s+second\s+thoughts?)\b[\s,.!:;-]*",
    re.IGNORECASE,
)
# What a correction may add that makes it another statement: "Actually, I also have a dog".
_ADDED = re.compile(r"\b(?:also|too|as\s+well|another|second|again)\b", re.IGNORECASE)
_PLAN = re.compile(
    r"\b(?:going\s+to|gonna|planning|plan\s+to|plans?\s+(?:is|are)\s+to|will|['’]ll"
    r"|thinking\s+(?:of|about)|want\s+to|hoping\s+to|intend\s+to|booked|signing\s+up"
    r"|about\s+to|next\s+(?:week|month|year|summer|spring|autumn|winter)|this\s+(?:summer"
    r"|winter|spring|autumn|year)|(?:i['’]m|we['’]re|i\s+am|we\s+are)\s+\w+ing\b)",
    re.IGNORECASE,
)

_WEEKDAY = r"(?:mon|tues|wednes|thurs|fri|satur|sun)day"
_MONTH = (
    r"(?:january|february|march|april|may|june|july|august|september|october|november"
    r"|december)"
)
_SHAPES: dict[str, re.Pattern[str]] = {
    "weekday": re.compile(rf"\b{_WEEKDAY}s?\b", re.IGNORECASE),
    "clock": re.compile(
        r"\b(?:\d{1,2}(?::\d{2})?\s*(?:am|pm|a\.m\.|p\.m\.)|\d{1,2}:\d{2}|noon|midnight)",
        re.IGNORECASE,
    ),
    "day": re.compile(r"\b\d{1,2}(?:st|nd|rd|th)\b", re.IGNORECASE),
    "month": re.compile(rf"\b{_MONTH}\b", re.IGNORECASE),
    "year": re.compile(r"\b(?:19|20)\d{2}\b"),
    "amount": re.compile(r"[$€£¥]\s?\d[\d,.]*|\b\d[\d,.]*\s?(?:k|%|dollars|euros|pounds)\b"),
    "number": re.compile(r"(?<![\w:$€£¥])\d+(?:\.\d+)?(?![\w:%])"),
}
# A capitalised word after the sentence's start: a name the value may be ("Priya, not Maya").
_NAME = re.compile(r"(?<=\s)(?-i:[A-Z])[\w'’&-]+")
_NOT = re.compile(r"\bnot\s+(?:the\s+|on\s+|at\s+|in\s+)?(?P<old>[\w:.'’$€£-]+)", re.IGNORECASE)
_NAME_STOP = frozenset({"I", "I'm", "I’m", "It's", "It’s", "The"})


@dataclass(frozen=True, slots=True)
class TakingBack:
    """How a statement takes back an earlier one, and what it says instead."""

    how: Literal["correction", "change of mind"]
    rest: str
    """The statement after its cue: what is so instead."""


def taking_back(text: str) -> TakingBack | None:
    """Whether ``text`` opens as a correction or a change of mind (before any earlier
    statement is looked at)."""
    if len(text) > LONGEST:
        return None
    if found := _MIND.match(text):
        return TakingBack("change of mind", text[found.end() :].strip())
    found = _CORRECTION.match(text)
    if found is None or _ADDED.search(text):
        return None
    if found.group().strip().lower().startswith("not"):
        return TakingBack("correction", text.strip())  # "Not Tuesday, Wednesday"
    return TakingBack("correction", text[found.end() :].strip())


def corrected(correction: str, earlier: str) -> str:
    """``earlier`` with the value ``correction`` gives in place of the one it corrects; ""
    when ``correction`` names nothing ``earlier`` holds once.

    "Actually it's Wednesday, not Tuesday" and "My dentist appointment is on Tuesday":
    "My dentist appointment is on Wednesday"."""
    if max(len(correction), len(earlier)) > LONGEST:
        return ""
    denied = _NOT.search(correction)
    if denied is not None:
        old = denied.group("old").strip(".,;:!?'’")
        if spot := _word_at(earlier, old):
            # "Wednesday, not Tuesday" or "not the 3rd, the 5th"
            said = correction[: denied.start()] + " " + correction[denied.end() :]
            new = _value_like(said, old)
            if not new or not _about(said.replace(new, " "), earlier):
                return ""
            return _put(earlier, spot, new)
    if not _about(correction, earlier):
        return ""
    for shape, pattern in _SHAPES.items():
        new_values = _distinct(pattern.findall(correction))
        old_spots = list(pattern.finditer(earlier))
        if len(new_values) == 1 and len(old_spots) == 1:
            if shape == "number" and _SHAPES["clock"].search(earlier):
                continue  # "3pm" holds a 3: the clock shape is the one to compare
            spot = (old_spots[0].start(), old_spots[0].end())
            if _same(earlier[spot[0] : spot[1]], new_values[0]):
                return ""
            return _put(earlier, spot, new_values[0])
    return ""


_FILLER = frozenset(
    re.findall(
        r"\S+",
        "i it it's its is was be been meant mean that this the a an on at in by for of to no "
        "not sorry actually correction wait make should oh oops ah my mistake bad typo er um "
        "so yes yeah yep and but now really just he she they we his her their our he's she's "
        "they're we're",
    )
)
_WORD = re.compile(r"[^\W\d_][\w'’]*")


def _about(said: str, earlier: str) -> bool:
    """Whether a correction says nothing beside its value that ``earlier`` does not hold:
    "it leaves on the 14th" of "My flight to Oslo leaves on the 12th", but not "I have 3
    kids" of "I have 2 cats"."""
    for pattern in _SHAPES.values():
        said = pattern.sub(" ", said)
    held = {_stem(w) for w in _WORD.findall(earlier.lower())}
    return all(_stem(w) in held for w in _WORD.findall(said.lower()) if w not in _FILLER)


def _stem(word: str) -> str:
    return word.replace("’", "'").removesuffix("'s").removesuffix("s")


def plan(text: str) -> bool:
    """Whether ``text`` says what the user is going to do (a change of mind can take it
    back)."""
    return len(text) <= LONGEST and bool(_PLAN.search(text))


def _value_like(text: str, old: str) -> str:
    """The value in ``text`` of ``old``'s shape (the last one, nearest the "not")."""
    for pattern in _SHAPES.values():
        if pattern.fullmatch(old):
            found = pattern.findall(text)
            return found[-1] if found else ""
    names = [n for n in _NAME.findall(" " + text) if n not in _NAME_STOP]
    return names[-1].strip(",.;:!?") if names and old[:1].isupper() else ""


def _word_at(text: str, word: str) -> tuple[int, int] | None:
    spots = [m.span() for m in re.finditer(rf"(?<![\w]){re.escape(word)}(?![\w])", text, re.I)]
    return spots[0] if len(spots) == 1 else None


def _put(text: str, spot: tuple[int, int], value: str) -> str:
    return text[: spot[0]] + value + text[spot[1] :]


def _distinct(values: list[str]) -> list[str]:
    return list(dict.fromkeys(v.strip() for v in values))


def _same(a: str, b: str) -> bool:
    return re.sub(r"[\s.]", "", a).lower() == re.sub(r"[\s.]", "", b).lower()
