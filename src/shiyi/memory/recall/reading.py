"""How a question is read before any recall path searches it.

* **Capitals** (:func:`unshouted`): a question typed all in capitals is read in small
  letters.
* **Typing slips** (:func:`slips_seen`): a word English does not know and no memory holds is
  read as the word one edit from it that memory holds (:mod:`shiyi.index.spelling`), so the
  embedding, the entities and the people of "resturant" and "Melaine" are those of what was
  meant.

The retriever also sets a question's framing aside (:mod:`shiyi.memory.recall.framing`).
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import islice

from shiyi.index.spelling import foreign_neighbours, unknown_words
from shiyi.index.text import tokenize
from shiyi.memory.protocol import MemoryStore
from shiyi.memory.recall.paths import Found, Records, showable
from shiyi.memory.recall.widen import WIDER, WIDEST, crowded
from shiyi.memory.scopes import Viewer

MIN_SHOUTED = 8
"""Capital letters a question needs to be read as shouted: "API KEY?" (6) is acronyms."""


def unshouted(query: str) -> str:
    """A question typed all in capitals ("WHAT DID MELANIE PAINT?") in small letters: its
    names are then placed as in a question typed without capitals, its words stemmed as
    plain words are; capitals alone say nothing about which words are names.  A short one
    ("API?", "AWS") is left as typed: that is an acronym, not shouting."""
    if any(c.islower() for c in query):
        return query
    capitals = sum(1 for _ in islice((c for c in query if c.isupper()), MIN_SHOUTED))
    return query.lower() if capitals >= MIN_SHOUTED else query


def slips_seen(store: MemoryStore, query: str, who: Viewer, candidates: int) -> dict[str, str]:
    """``query``'s typing slips, each with the word memory holds that it is read as.  Asks
    the store only when a word is unknown to English (no lookup for most questions).

    Only words some memory ``who`` may see holds: the keyword index's words are every
    user's, and reading a slip as another user's word would change this user's embedding of
    the question, which tells that the word is stored ("bluefinhc" read as another user's
    "bluefinch")."""
    unknown = unknown_words(query)
    if not unknown:
        return {}
    # A word only memories the asker is never shown hold is still a slip: another user's
    # turn, or the model's own earlier query_memory call with the same slip in it (an echo,
    # stored and indexed), made "kettel" a held word and its reading stopped.
    unseen = [word for word in unknown if not holds_word(store, word, who, candidates)]
    # A word beside a slip, held by a memory the asker may see, makes the two a phrase the
    # user writes (spelling.foreign_neighbours); held only by others' it must count as
    # unheld, or whether the slip was read would tell that another user wrote that word.
    beside = {word for words in foreign_neighbours(query, set(unseen)).values() for word in words}
    unseen += [word for word in sorted(beside) if not holds_word(store, word, who, candidates)]
    found = store.keyword_spelling(query, unseen)
    return {slip: word for slip, word in found.items() if sees_word(store, word, who, candidates)}


def holds_word(store: MemoryStore, word: str, who: Viewer, candidates: int) -> bool:
    """Whether a memory ``who`` may be shown holds ``word`` itself (the keyword search also
    finds what a slip is read as), among the keyword path's hits for it
    (:func:`_any_shown`)."""

    def holds(text: str) -> bool:
        return word in tokenize(text, stems=False)

    return _any_shown(store, word, who, candidates, holds)


def sees_word(store: MemoryStore, word: str, who: Viewer, candidates: int) -> bool:
    """Whether a memory ``who`` may see holds ``word``, among the keyword path's hits for it
    (:func:`_any_shown`)."""
    return _any_shown(store, word, who, candidates, lambda text: True)


def _any_shown(
    store: MemoryStore, word: str, who: Viewer, candidates: int, holds: Callable[[str], bool]
) -> bool:
    """Whether the text of a memory ``who`` may be shown, among the keyword path's hits for
    ``word``, ``holds`` it.  Asked for ``candidates`` hits, then, while other users' memories
    and echoes fill more than half of them, for more as a crowded recall path is
    (:mod:`~shiyi.memory.recall.widen`); past that, a word others hold far more often is
    missed (a slip then stays as typed, which reveals nothing)."""
    limit, widest = candidates, candidates * WIDEST
    while True:
        found = store.keyword_search(word, limit, who.owners())
        events = {s.id for s in found if s.node == "event"}
        records = Records()
        records.load(store, [Found(found, events, {s.id for s in found if s.node == "fact"})])
        shown = list(showable(records, [s.id for s in found], who, history=False))
        texts = [e.content for e in records.events_in(shown)]
        if any(map(holds, texts + [f.text for f in records.facts_in(shown)])):
            return True
        if not crowded(len(found), len(shown), limit) or limit >= widest:
            return False
        limit = min(limit * WIDER, widest)
