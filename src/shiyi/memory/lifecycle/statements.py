"""Which turn of an extraction window states a fact.

Extraction reads several turns and returns facts without saying where each came from.  A
fact's time is when it was *said*, so each extracted fact is attributed to the window's turn
that shares the most of its words (the value's words count double: the key's words, "lives
in", recur in every turn about the attribute).  Ties go to the newest turn (a repeated
statement is dated by its latest saying), and a fact that shares no word with any turn (a
paraphrase, another language) falls back to the newest user turn: the turn that made the
extraction run.  Values the same extraction gives the same attribute count against a turn
(see :func:`stating_turn`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from shiyi.memory.models import EventRecord

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
_STOP = frozenset(
    re.findall(
        r"\w+",
        "a an and are as at be but by did do for from has have i in is it its me my of on or "
        "our she so that the their them they this to was we were what when where who will "
        "with you your user users",
    )
)


def words(text: str) -> set[str]:
    """Content words (lowercase, no stop words, a plural's s dropped) and single CJK
    characters."""
    found = {_stem(w) for w in _WORD.findall(text.lower()) if w not in _STOP and not _CJK.search(w)}
    return found | set(_CJK.findall(text))


def _stem(word: str) -> str:
    """Plurals and third persons as their stem ("Thursdays" states "Thursday")."""
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def stating_turn(
    key: str, value: str, window: Sequence[EventRecord], rivals: Sequence[str] = ()
) -> EventRecord:
    """The turn of ``window`` (oldest first, not empty) that states ``key: value``.

    ``rivals``: other values the same extraction gave the same attribute.  A turn naming
    one of them too ("I moved from Berlin to Paris") is a weaker witness for this value
    than a turn naming it alone ("I live in Berlin"), so an old value re-read from the
    window keeps its own, older turn."""
    value_words, key_words = words(value), words(key)
    others = [w for w in (words(r) - value_words for r in rivals) if w]
    best: tuple[int, int] | None = None
    chosen = -1
    for position, event in enumerate(window):
        said = words(event.content)
        matched = 2 * len(value_words & said) + len(key_words & said)
        if not matched:
            continue
        rank = (matched - sum(1 for other in others if other & said), position)
        if best is None or rank >= best:
            best, chosen = rank, position
    if chosen >= 0:
        return window[chosen]
    users = [e for e in window if e.role == "user"]
    return (users or list(window))[-1]


# Roles of shiyi's own turns and the generic roles of chat exports (the user's and the
# assistant's); any other role is a person named in an imported conversation.
_OWN_ROLES = frozenset(
    {"user", "assistant", "system", "tool", "developer", "function", "human", "me", "ai",
     "bot", "model", "agent"}
)  # fmt: skip


def named_speaker(event: EventRecord) -> str:
    """The speaker's name when ``event`` is a named person's turn of an imported
    conversation ("Caroline"), else '' (the user's own turn, or shiyi's)."""
    role = event.role.strip()
    return "" if role.lower() in _OWN_ROLES else role
