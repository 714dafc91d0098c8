"""Which words English knows, and how much of a text is English.

Two readers need it: the spelling reader (:mod:`shiyi.index.spelling`: a word English knows
is never a slip) and the retriever, whose embedding model may read English only
(all-MiniLM-L6-v2 was trained on English text): a question in Indonesian or Spanish gets a
vector that says little, so its vote in the fusion counts by the share of the question's
words English knows (:func:`english_share`).  On the RealMem dev personas the plain
baselines show why: on the 37 queries written mostly in Indonesian MiniLM recalls 0.33 at
R@10 against BM25's 0.49, while on the English ones MiniLM leads (0.60 against 0.55).

The word list is pyspellchecker's English one (about 160k words, many names included).

People chatting stretch words ("soooo", "loooove", "yesss", "amazinggg"); English never writes
a letter three times in a row, so a word that does is read as the English words it can be
with each such run typed twice or once (:func:`unstretched`: "goooood" -> good, god;
"loooove" -> love), and counts as English when one of them is.
"""

from __future__ import annotations

import re
from functools import lru_cache
from itertools import islice, product

import numpy as np
import numpy.typing as npt

FOREIGN_WORDS = 3
"""Unknown words typed in small letters a text needs before it may be judged not English:
"where is the resturant" has one in two, and is English with a slip; "a roadtrip to
destress" has two the word list does not know, and is English too."""
SHARE_READ = 200
"""Words of a text :func:`english_share` reads: a pasted document is judged by its start."""
_SMALL_WORD = re.compile(r"(?<!\w)[a-z]{3,}(?!\w|['’]t\b)")
"""A word of three or more letters a-z, typed in small letters: not a name, not an acronym,
not part of an accented word or an identifier ("café", "abc123"), not the "isn" of "isn't"."""
_STRETCH = re.compile(r"([a-z])\1\1+")
"""A letter typed three times or more in a row, which no English word does ("sooo")."""
MAX_STRETCHES = 3
"""Stretched runs of one word read: each doubles the spellings tried ("sooo gooood" is two
words; "yaaaaasss" one word with two runs)."""
MAX_STRETCHED = 64
"""Letters of a word read for stretches: a longer run of letters is no word anybody typed
to be read (a pasted blob), and is left as it is."""


@lru_cache(maxsize=1)
def _english() -> npt.NDArray[np.int64]:
    """The English words' hashes, sorted; loaded on first use (~0.12 s).

    Kept as hashes: 7.5 MB resident after loading against 31 MB for a frozenset of the
    words (measured in one process each), and a false "known" needs a 64-bit collision."""
    from spellchecker import SpellChecker

    words = SpellChecker(language="en", distance=1).word_frequency.dictionary
    hashes = np.fromiter(map(hash, words), dtype=np.int64, count=len(words))
    hashes.sort()
    return hashes


def is_english(word: str) -> bool:
    """Whether English knows ``word`` (lower case; names and many proper nouns included)."""
    hashes = _english()
    key = hash(word)
    at = int(np.searchsorted(hashes, key))
    return at < len(hashes) and int(hashes[at]) == key


def unstretched(word: str) -> tuple[str, ...]:
    """The English words a stretched ``word`` (lower case) can be, each run of a letter typed
    three times or more read as twice or once: "soooo" -> ("so",), "goooood" -> ("good",
    "god"), "yesss" -> ("yes",), "hmmm" -> ("hmm",) ; () for a word with no such run, more
    than :data:`MAX_STRETCHES` of them, over :data:`MAX_STRETCHED` letters, or no English
    reading ("zzzzz", "aaaaah" when English knows neither "aah" nor "ah")."""
    if len(word) > MAX_STRETCHED or not word.isascii():
        return ()
    runs = list(islice(_STRETCH.finditer(word), MAX_STRETCHES + 1))
    if not runs or len(runs) > MAX_STRETCHES:
        return ()
    readings: dict[str, None] = {}
    for counts in product((2, 1), repeat=len(runs)):
        pieces: list[str] = []
        position = 0
        for run, count in zip(runs, counts, strict=True):
            pieces += [word[position : run.start()], run.group(1) * count]
            position = run.end()
        reading = "".join(pieces) + word[position:]
        if is_english(reading):
            readings[reading] = None
    return tuple(readings)


def is_stretched(word: str) -> bool:
    """Whether ``word`` (lower case) has a letter typed three times or more in a row."""
    return _STRETCH.search(word) is not None


def knows(word: str) -> bool:
    """Whether English knows ``word`` (lower case) as written or stretched ("soooo")."""
    return is_english(word) or (is_stretched(word) and bool(unstretched(word)))


_ENGLISH_ONLY = re.compile(r"(?i)(?<![a-z])(?:all-)?minilm|all-mpnet|(?<=[-_])en(?:[-_.]|$)")
"""Model names of English-only embedders: the sentence-transformers MiniLM and MPNet models
(shiyi's default, all-MiniLM-L6-v2, and its int8 graphs; Ollama's ``all-minilm``) and names
marked ``-en`` (``bge-small-en-v1.5``).  A name with "multilingual" in it reads more."""


def reads_english_only(model_id: str) -> bool:
    """Whether the embedding model ``model_id`` was trained on English text only, so that its
    vector of a text in another language says little.  An unknown model is taken to read
    every language."""
    return "multilingual" not in model_id.lower() and bool(_ENGLISH_ONLY.search(model_id))


def reads_as_english(words: int, unknown: int) -> bool:
    """Whether a text whose ``words`` typed in small letters include ``unknown`` ones English
    does not know reads as English: fewer than :data:`FOREIGN_WORDS` unknown, or at most a
    third (slips, new words and names typed small do not make a text foreign)."""
    return unknown < FOREIGN_WORDS or unknown * 3 <= words


def embedding_vote(text: str, model_id: str | None) -> float:
    """How much the embedding of ``text`` by ``model_id`` counts in a fusion, from 0 to 1:
    by an English-only model, of a text that does not read as English
    (:func:`reads_as_english`), the share of it English knows; otherwise all of it.  An
    English question with a slip or two new words ("roadtrip", "destress") is read well by
    the model: on LoCoMo dev the share alone cost 4 such questions a hit at some k."""
    if model_id is None or not reads_english_only(model_id):
        return 1.0
    words = _small_words(text)
    known = sum(map(knows, words))
    if reads_as_english(len(words), len(words) - known):
        return 1.0
    return known / len(words)


_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")


def embedding_says_little(text: str, model_id: str) -> bool:
    """Whether an embedding of ``text`` by ``model_id`` says too little to tell two texts
    apart: an English-only model's of Chinese, Japanese or Korean (all-MiniLM-L6-v2 finds
    "我有一个哥哥" and "我有一个妹妹" 0.9 alike), or of a text that mostly does not read as
    English."""
    if not reads_english_only(model_id):
        return False
    return bool(_CJK.search(text)) or embedding_vote(text, model_id) < 0.5


def english_share(text: str) -> float | None:
    """The share of ``text``'s words typed in small Latin letters (three or more) that
    English knows, over its first :data:`SHARE_READ` of them; None when it has none (a
    question of names only, or in Chinese: nothing to judge by).

    Words with capitals are left out: names and acronyms say nothing of the language around
    them ("Pak Budi", "AED").  A slip counts as unknown, but one slip in a question of
    several words moves the share little, and the retriever reads slips before asking."""
    words = _small_words(text)
    if not words:
        return None
    return sum(map(knows, words)) / len(words)


def _small_words(text: str) -> list[str]:
    return [m.group() for m in islice(_SMALL_WORD.finditer(text), SHARE_READ)]
