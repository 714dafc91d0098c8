"""Whether a turn says how often something happens: the evidence a "how often ..." question
needs.

Asked "How often does Sam go climbing?", the turn that answers is the one giving a rate ("we
go twice a week", "three times a month", "every other Sunday", "on weekends", "once in a
while", 每周两次), often a short reply after the turn that names the activity, so it shares
few of the question's words.  People give a rate as a count per period ("once a year", "a few
times a month", "two or three times per week", "three days a week", "two hours a day"), a
period with "every"/"each" ("every morning", "every two weeks"), a rate word ("daily",
"weekly", "annually"), a weekday or the weekend in the plural ("on Sundays", "most weekends",
"Tuesdays and Thursdays"), or a vague rate ("every so often", "now and then", "from time to
time").  The phrasings are written from everyday speech, not from any data set; the recall
boost (:mod:`shiyi.memory.recall.boosts`) decides what it is worth.
"""

from __future__ import annotations

import re
from functools import lru_cache

MAX_CHARS = 1000
"""Only a text's opening is read, as for :func:`~shiyi.memory.text.time_words.says_when`."""

_PER = r"(?:a|an|per|each|every)"
_PERIOD = (
    r"(?:day|night|week|weekend|fortnight|month|year|morning|afternoon|evening|semester"
    r"|term|season|summer|winter|quarter|hour)"
)
_WEEKDAY = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_COUNT = (
    r"(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|a\s+few|a\s+couple(?:\s+of)?"
    r"|couple\s+of|several|many|multiple|a\s+bunch\s+of|a\s+number\s+of|a\s+lot\s+of)"
)
_EVERY = r"(?:other|single|few|couple\s+of|\d+|two|three|four|five|six|other\s+few)"
_RATE = re.compile(
    rf"\b(?:once|twice|thrice)\s+(?:or\s+(?:twice|thrice|{_COUNT}\s+times)\s+)?{_PER}\s+{_PERIOD}\b"
    rf"|\b{_COUNT}\s+(?:or\s+{_COUNT}\s+)?times\s+{_PER}\s+{_PERIOD}\b"
    rf"|\b{_COUNT}\s+(?:or\s+{_COUNT}\s+)?(?:days|nights|mornings|evenings|hours|sessions)"
    rf"\s+{_PER}\s+{_PERIOD}\b"
    rf"|\b{_WEEKDAY}s\s+(?:and|or|&)\s+{_WEEKDAY}s\b"
    rf"|\b(?:every|each)\s+(?:{_EVERY}\s+)?(?:{_PERIOD}|{_WEEKDAY})s?\b"
    r"|\b(?:daily|nightly|weekly|biweekly|fortnightly|monthly|yearly|annually)\b"
    rf"|\b(?:on|most)\s+(?:{_WEEKDAY}s|weekends|weeknights|weekdays)\b"
    r"|\bmost\s+(?:days|nights|mornings|evenings)\b"
    r"|\bevery\s+so\s+often\b|\bonce\s+in\s+a\s+while\b|\b(?:every\s+)?now\s+and\s+(?:then|again)\b"
    r"|\bfrom\s+time\s+to\s+time\b|\bon\s+a\s+(?:daily|weekly|monthly|regular)\s+basis\b"
    r"|每(?:天|日|晚|周|星期|礼拜|个?月|年|个?周末|隔)"
    r"|(?:一|每)(?:天|周|星期|礼拜|个月|年)\s*[一两二三四五六七八九十几0-9]+\s*次"
    r"|[一两二三四五六七八九十几0-9]+\s*(?:天|周|个月|年)\s*一次"
)


@lru_cache(maxsize=8192)
def says_how_often(text: str) -> bool:
    """Whether ``text`` gives a rate ("twice a week", "every Sunday", "on weekends").
    Cached: the same turns are candidates of many searches."""
    return _RATE.search(text[:MAX_CHARS].lower()) is not None
