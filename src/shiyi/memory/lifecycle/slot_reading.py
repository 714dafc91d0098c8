"""What a statement's slot reading is, and how a verb rule yields one.

Shared by the English rules (:mod:`~shiyi.memory.lifecycle.stated_slots`) and the Chinese
ones (:mod:`~shiyi.memory.lifecycle.stated_chinese`): a rule is a slot key and a pattern
over the words after the subject; what its match leaves is the value said.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from shiyi.memory.text.counts import numbers_in

Subject = tuple[tuple[str, ...], str]
"""Whom a sentence is about (nobody named: the user) and the words after the subject."""
VerbRules = tuple[tuple[str, re.Pattern[str]], ...]


@dataclass(frozen=True, slots=True)
class StatedSlot:
    key: str
    about: tuple[str, ...] = ()
    """Whom the attribute belongs to when that is not the user ("Ana", "sister")."""
    said: str = field(default="", compare=False)
    """The words that state the value ("Berlin" of "I still live in Berlin")."""


def by_verb(subject: Subject | None, verbs: VerbRules) -> StatedSlot | None:
    """The slot the first matching verb names, for ``subject`` (whom, the words after)."""
    if subject is None:
        return None
    about, rest = subject
    for key, verb in verbs:
        if found := verb.search(rest):
            return StatedSlot(key, about, value_words(rest, found))
    return None


def value_words(rest: str, found: re.Match[str]) -> str:
    """What a verb rule's match leaves: the value ("Berlin"); a number (an age); or all."""
    if "value" in found.re.groupindex:  # a closed set's word ("married", "vegan")
        return found.group("value").casefold()
    if not found.re.pattern.endswith("$"):
        return rest[found.end() - 1 :]  # every other rule ends at the value's first character
    return " ".join(numbers_in(rest)) or _LEADING_BE.sub("", rest)


_LEADING_BE = re.compile(r"^(?:\s+am|['’]m|\s+is|['’]s|\s+are|['’]re)?\s*(?:now\s+)?")
