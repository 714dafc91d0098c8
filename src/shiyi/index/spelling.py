"""A question's typing slips read as the words the index holds ("resturant" -> "restaurant").

A keyword index finds only the words it holds, so one slipped letter in a question
("becuase", "Melaine") found nothing by keyword, however often the memory says the word.  A
question word is read as a slip when the index holds no document with it and English does
not know it either (:mod:`shiyi.index.english`: about 160k words with many names);
it is then read as the word the index holds one edit away from it (a letter left out, added
or changed, or two letters swapped: Damerau's single edits, which most typing slips are),
the one the most documents hold.

A word English knows is never corrected: "hiking" asked of a memory that only says "biking"
is another activity, not a slip.  Nor is a word under five letters (one edit from too many
others), one typed in capitals (an acronym), any word of a text that is not English (its
words typed in small letters mostly unknown: Indonesian, Spanish), or a word beside another
that English does not know and the memory holds (:func:`foreign_neighbours`): a phrase of
another language in an English sentence ("Macet parah! The traffic is horrible", "nasi goreng
ayam") or a foreign name ("Ryokan Sazanami", "Kurama-dera") that the user writes.
The keyword index searches a correction beside the slip (:func:`search_terms`); the
retriever and the knowledge base read the whole question with it (:func:`read_as`) before
embedding it.

Measured (2026-12-06): of the RealMem dev queries with a word English does not know (106 of
388), 20 such words stood beside another unknown one; every one was in a foreign phrase or
name, none a slip.  RealMem dev hybrid recall 0.600 / 0.729 / 0.841 -> 0.600 / 0.730 /
0.841 (Pak Budi's "Macet parah!": the memory holds "macet", so "parah" is no longer read as
"sarah"); LoCoMo dev with one slip in every question (``bench/slips_bench.py``) unchanged at
0.718 / 0.822 / 0.868.  A first cut took any unknown neighbour for a phrase; it missed two
slips side by side ("restroes tetsed") and a slip beside a British spelling ("kettel
colour").
"""

from __future__ import annotations

import logging
import re
import string
from collections.abc import Callable, Collection, Mapping, Sequence
from functools import partial
from itertools import islice

from shiyi.index.english import knows, reads_as_english
from shiyi.index.text import is_british, tokenize

_log = logging.getLogger(__name__)

Lookup = Callable[[Sequence[str]], Mapping[str, int]]
"""Documents holding each of these terms; a term no document holds may be left out."""
Held = Callable[[Sequence[str]], Collection[str]]
"""Which of these terms some document holds."""

MIN_LETTERS = 5
"""Shorter words are one edit from too many others ("cat": bat, cut, cart, act; and on the
RealMem dev queries "cert" read as "cent", "daya" as "data", "moto" as "motor")."""
MAX_LETTERS = 40
"""Longer runs of letters are no typed words (a pasted blob): their single edits alone would
number in the millions of strings (a 1M-letter run took the test server's memory)."""
MAX_READ = 400
"""Words of a text read for slips: a pasted document is not read to its end."""
MAX_SLIPS = 4
"""A question with more unknown words is another language or jargon, not a few slips:
correcting them all would search for words nobody asked for."""
MAX_UNKNOWN = 32
"""Words English does not know (names, jargon, slips) a question may hold before it is taken
for a text in another language: more are not looked up in the index one by one."""
_ASCII = string.ascii_lowercase
_LETTERS = re.compile(r"[^\W\d_]+")
_NEGATION = re.compile(r"['’]t\b")
_PHRASE_GAP = re.compile(r"[\s-]+")
"""What lies between two words of one phrase or name: spaces or a hyphen, no punctuation."""
RUN_NEIGHBOUR_LETTERS = 4
"""A neighbour this long or longer that English does not know makes a run ("nasi goreng"):
shorter ones are the commonest slips themselves ("teh resturant") or pieces of contractions
("m" of "I'm")."""


def single_edits(word: str) -> set[str]:
    """Every string one edit from ``word``: a letter deleted, swapped with the next, replaced
    or inserted (over a-z and the word's own letters, so "josé" reaches "jose" and back)."""
    letters = set(_ASCII) | set(word)
    splits = [(word[:i], word[i:]) for i in range(len(word) + 1)]
    deletes = {left + right[1:] for left, right in splits if right}
    swaps = {left + right[1] + right[0] + right[2:] for left, right in splits if len(right) > 1}
    replaces = {left + c + right[1:] for left, right in splits if right for c in letters}
    inserts = {left + c + right for left, right in splits for c in letters}
    return (deletes | swaps | replaces | inserts) - {word}


def unknown_words(text: str) -> list[str]:
    """The words of ``text`` that could be slips, lower-cased: letters only, five or more,
    not typed in capitals (an acronym: "DRSABCD"), not before "n't" (the "hadn" of
    "hadn't"), and unknown to English.  Needs no index: a question without any needs no
    lookup at all.  None when the text does not read as English
    (:func:`~shiyi.index.english.reads_as_english`: Indonesian or Spanish is not English with
    slips, "murah" is no slip of "merah"), or more than :data:`MAX_UNKNOWN` words are
    unknown.  Reads the first :data:`MAX_READ` words."""
    found: dict[str, None] = {}
    small = unknown_small = 0
    for match in islice(_LETTERS.finditer(text), MAX_READ):
        typed = match.group()
        if not MIN_LETTERS <= len(typed) <= MAX_LETTERS or typed.isupper():
            continue
        if _NEGATION.match(text, match.end()):
            continue
        word = typed.lower()
        known = knows(word)
        if typed.islower():
            small += 1
            unknown_small += not known
        if not known:
            found[word] = None
    if not reads_as_english(small, unknown_small):
        return []
    return list(found) if len(found) <= MAX_UNKNOWN else []


def foreign_neighbours(text: str, words: Collection[str]) -> dict[str, set[str]]:
    """Each of ``words`` (lower-cased words of ``text``) with the words beside it, joined by
    spaces or a hyphen only, that English does not know either (British spellings it does):
    four letters or more, or the one past a short unknown word ("nasi *yg* enak").  When the
    memory holds such a neighbour, the two are a phrase of another language or a name the
    user writes ("Macet parah!", "Ryokan Sazanami"), not a slip; two slips side by side
    ("restroes tetsed") have no held neighbour."""
    matches = list(islice(_LETTERS.finditer(text), MAX_READ))
    found: dict[str, set[str]] = {}
    for at, match in enumerate(matches):
        word = match.group().lower()
        if word in words:
            found.setdefault(word, set()).update(_unknown_beside(text, matches, at))
    return found


def _unknown_beside(text: str, matches: Sequence[re.Match[str]], at: int) -> set[str]:
    beside: set[str] = set()
    for step in (-1, 1):
        here, other = at, at + step
        for _ in range(2):  # the neighbour, or the one past a short unknown word
            if not 0 <= other < len(matches) or not _joined(text, matches[here], matches[other]):
                break
            neighbour = matches[other].group()
            lower = neighbour.lower()
            if neighbour.isupper() or knows(lower) or is_british(lower):
                break
            if len(neighbour) >= RUN_NEIGHBOUR_LETTERS:
                beside.add(lower)
                break
            here, other = other, other + step
    return beside


def _joined(text: str, one: re.Match[str], two: re.Match[str]) -> bool:
    left, right = sorted((one, two), key=lambda m: m.start())
    return _PHRASE_GAP.fullmatch(text, left.end(), right.start()) is not None


def slips(text: str, held: Held) -> list[str]:
    """The words of ``text`` that look mistyped, lower-cased: English does not know them
    (:func:`unknown_words`), no document holds them (``held``: which of these words some
    document holds), and none holds a word beside them that English does not know either
    (:func:`foreign_neighbours`).  None when more than :data:`MAX_SLIPS` do (jargon or
    another language, not a few slips)."""
    unknown = unknown_words(text)
    if not unknown:
        return []
    beside = foreign_neighbours(text, set(unknown))
    asked = list(dict.fromkeys([*unknown, *(w for ws in beside.values() for w in sorted(ws))]))
    kept = set(held(asked))
    found = [w for w in unknown if w not in kept and not beside.get(w, set()) & kept]
    return found if len(found) <= MAX_SLIPS else []


def corrections(
    text: str, held: Held, lookup: Lookup, unheld: Collection[str] = ()
) -> dict[str, str]:
    """Each slip of ``text`` (a question as typed) with the word one edit away that the most
    documents hold; a slip with no held word near it is left out.  ``unheld``: terms to read
    as held by no document (the asker may see none that holds them): such a word with the
    forms the index keeps of it (its stem), which are then never what a slip is read as."""
    unheld = frozenset(unheld)
    if unheld:
        held = _except(held, unheld)
    mistyped = slips(text, held)
    if not mistyped:
        return {}
    near = {word: single_edits(word) for word in mistyped}
    counts = lookup(sorted(set().union(*near.values())))
    found: dict[str, str] = {}
    for word in mistyped:
        present = [(counts[c], c) for c in near[word] if counts.get(c, 0) > 0 and c not in unheld]
        if present:
            found[word] = max(present)[1]  # most documents; ties by the later spelling
            _log.debug("a question's %r read as %r", word, found[word])
    return found


def indexed_forms(words: Collection[str], *, stems: bool) -> set[str]:
    """The terms an index keeps of ``words``: each word, and its stem where it keeps stems."""
    return {term for word in words for term in tokenize(word, stems=stems)}


def _except(held: Held, unheld: frozenset[str]) -> Held:
    def some_hold(words: Sequence[str]) -> Collection[str]:
        return {word for word in held(words) if word not in unheld}

    return some_hold


def search_terms(found: Mapping[str, str], words: Collection[str], *, stems: bool) -> list[str]:
    """The terms to search beside ``words`` for the corrections ``found``: each corrected
    word, with its stem when the index keeps stems."""
    terms = (term for word in found.values() for term in tokenize(word, stems=stems))
    return list(dict.fromkeys(term for term in terms if term not in words))


def read_as(text: str, found: Mapping[str, str]) -> str:
    """``text`` with each slip in ``found`` replaced by its word as a whole word, capitalised
    where the slip was ("Melaine" -> "Melanie")."""
    for slip, word in found.items():
        pattern = re.compile(rf"(?<!\w){re.escape(slip)}(?!\w)", re.IGNORECASE)
        text = pattern.sub(partial(_as_typed, word), text)
    return text


def _as_typed(word: str, slip: re.Match[str]) -> str:
    return word.capitalize() if slip.group()[0].isupper() else word


def reading_note(found: Mapping[str, str]) -> str:
    """A line telling how a question's typing slips were read, or nothing:
    ``Searched "resturant" as "restaurant".`` (a model told nothing would think the user's
    spelling was searched, and a user should see what was)."""
    if not found:
        return ""
    pairs = ", ".join(f'"{slip}" as "{word}"' for slip, word in found.items())
    return f"Searched {pairs}.\n"
