"""Typing slips put into real questions, for the benches (``slips_bench.py``,
``realmem_bench.py --slips``): one word of five or more letters mistyped, as people do.

A slip is a letter left out, two swapped, one doubled, or one replaced by a neighbour on a
QWERTY keyboard, never in a word's first or last letter.  A slip that makes another English
word ("form" for "from") is drawn again: no reader of spelling can tell those apart, and the
benches measure what :mod:`shiyi.index.spelling` can.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import contextmanager

from shiyi.index import keyword
from shiyi.index.english import is_english

_KEYBOARD = ["qwertyuiop", "asdfghjkl", "zxcvbnm"]


def _neighbours(letter: str) -> str:
    for row_index, row in enumerate(_KEYBOARD):
        at = row.find(letter)
        if at >= 0:
            near = row[max(0, at - 1) : at] + row[at + 1 : at + 2]
            for other in (row_index - 1, row_index + 1):
                if 0 <= other < len(_KEYBOARD):
                    near += _KEYBOARD[other][max(0, at - 1) : at + 1]
            return near
    return ""


def slip(word: str, rng: random.Random) -> str:
    """``word`` with one typing slip (lower-case letters only change)."""
    at = rng.randrange(1, len(word) - 1)  # first and last letters are rarely mistyped
    kind = rng.choice(("drop", "swap", "double", "neighbour"))
    if kind == "drop":
        return word[:at] + word[at + 1 :]
    if kind == "swap":
        return word[:at] + word[at + 1] + word[at] + word[at + 2 :]
    if kind == "double":
        return word[:at] + word[at] + word[at:]
    near = _neighbours(word[at].lower()) or word[at]
    return word[:at] + rng.choice(near) + word[at + 1 :]


def slipped(question: str, rng: random.Random) -> str:
    """``question`` with one of its long words mistyped (unchanged if it has none)."""
    words = [w for w in question.split() if w.isalpha() and len(w) >= 5]
    for _ in range(20):
        if not words:
            return question
        word = rng.choice(words)
        typo = slip(word, rng)
        if typo.lower() != word.lower() and not is_english(typo.lower()):
            return question.replace(word, typo, 1)
    return question


@contextmanager
def slips_unread() -> Iterator[None]:
    """Keyword search without :func:`shiyi.index.spelling.corrections`."""
    kept = keyword.corrections
    keyword.corrections = lambda *args, **kwargs: {}
    try:
        yield
    finally:
        keyword.corrections = kept
