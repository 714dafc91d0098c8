"""A statement about someone else said as they would say it, with whom it is about.

"My brother plays rugby" is the brother's "I play rugby"; "Ana cancelled her Spotify
subscription" is Ana's "I cancelled my Spotify subscription"; "My sister and Tom broke up" is
the sister's "Tom and I broke up".  Rules written for what the user says of themselves (an
ending ends a holding: :mod:`~shiyi.memory.text.endings`) then read a relative's statements
too, between statements about the same person only.

Only a plain subject is read: "my <relative>" (:data:`~shiyi.memory.text.subjects.KIN`), a
name, or the user ("I", "we": who is "").  The first verb after it takes the first person
("plays": play, "has": have, "is": am); "his", "her" and "their" become "my".  Anything else
is no one's (None): "it", "the club", a question.
"""

from __future__ import annotations

import re

from shiyi.memory.text.subjects import KIN

_KIN = "|".join(sorted(map(re.escape, KIN), key=len, reverse=True))
_SUBJECT = re.compile(
    rf"^(?:(?i:my|our)\s+(?P<kin>(?i:{_KIN}))|(?P<name>[A-Z][a-z'’-]+))(?P<rest>\s.*)$"
)
_ME = re.compile(r"^(?:i|we)(?=\s|['’])", re.IGNORECASE)
_MINE = re.compile(r"^(?:my|our)\s", re.IGNORECASE)
_WITH_ME = re.compile(r"^[A-Z][\w'’-]*\s+and\s+I\b")
_NOT_NAMES = frozenset(
    {"It", "This", "That", "There", "The", "He", "She", "They", "You", "What", "Where",
     "When", "Why", "How", "Who", "Do", "Does", "Did", "Is", "Are", "Can", "My", "Our",
     "Your", "His", "Her", "Their", "A", "An", "Yes", "No", "So", "But", "And", "Today",
     "Yesterday", "Tomorrow", "Now"}
)  # fmt: skip
# "... and Tom broke up": the other one first, as the user says it ("Tom and I broke up").
_AND_NAME = re.compile(r"^\s+and\s+(?P<other>[A-Z][\w'’-]*)(?P<rest>\s.*)$")
_THIRD = {"has": "have", "is": "am", "does": "do", "goes": "go", "was": "was"}
_OWNERS = re.compile(r"\b(?:his|her|their)\b", re.IGNORECASE)


def said_by(text: str) -> tuple[str, str] | None:
    """Whom ``text`` is about ("" for the user) and the text as they would say it; None
    when its subject is no one plain."""
    sentence = text.strip()
    found = _SUBJECT.match(sentence)
    if found is not None and (found.group("name") or "") in _NOT_NAMES:
        found = None
    if _ME.match(sentence) or _WITH_ME.match(sentence) or (found is None and _MINE.match(sentence)):
        return "", sentence  # "I sold my car", "Sam and I broke up", "My car is a Civic"
    if found is None:
        return None
    who = (found.group("kin") or found.group("name")).lower()
    rest = found.group("rest")
    if together := _AND_NAME.match(rest):
        return who, f"{together.group('other')} and I{together.group('rest')}"
    return who, "I " + _first_person(_OWNERS.sub("my", rest.strip()))


def _first_person(rest: str) -> str:
    """``rest`` with its first verb in the first person ("plays rugby": play rugby)."""
    adverbs: list[str] = []
    words = rest.split(" ")
    while words and words[0].lower() in ("still", "also", "now", "just", "finally", "recently"):
        adverbs.append(words.pop(0))
    if not words:
        return rest
    verb = words[0]
    lower = verb.lower()
    if lower in _THIRD:
        verb = _THIRD[lower]
    elif lower.endswith(("ches", "shes", "sses", "xes")):
        verb = verb[:-2]
    elif lower.endswith("ies") and len(lower) > 4:
        verb = verb[:-3] + "y"
    elif lower.endswith("s") and not lower.endswith("ss") and len(lower) > 3:
        verb = verb[:-1]
    return " ".join([*adverbs, verb, *words[1:]])
