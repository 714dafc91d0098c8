"""Reading a memory query without a model: who it names, when it asks about, what it wants.

Seed 001 section 3.3 (adaptive retrieval by intent): the retriever changes what it favours by
what the question is, found with patterns in well under a millisecond, never an LLM call.

* **names**: every word of the query, lower-cased, so a speaker (``caroline``) or an entity
  named anywhere in it ("What did Caroline's sister say?") can be matched against events;
  in Chinese, which has no spaces, every two to four characters ("小明上周…" names 小明).
* **people**: the capitalised words inside its sentences that may name a person, matched
  against speakers through nicknames and spellings (:mod:`shiyi.memory.text.people`); in a
  query typed without capitals, its words that a nickname table could place (**lowercase**).
* **subject**: of several people named, the one the question asks about as the one who
  spoke or acted ("What did *Jon* say about Gina's store?", "According to *Gina*, what makes
  Jon a mentor?"); none when they are asked about together ("Jon and Gina both").
* **windows**: time ranges the question is about, on event time: a day ("on May 3, 2023",
  "Christmas 2022"), a period ("in December 2023", "in 2022"), or counted back from a date in
  the question, else from ``now`` (for an imported history, its newest turn): "yesterday",
  "last night", "the week before last", "two Fridays ago", "over the weekend", "last
  summer" (:mod:`shiyi.memory.recall.english_time`).  The same in Chinese ("2023年5月7日",
  "上周", "三天前", ...): :mod:`shiyi.memory.recall.chinese_time`.
* **months**: a month or holiday named without a year ("camping in June", "in late May",
  "on Christmas"): those months in any year (a season alone names none: which months it
  means depends on the hemisphere).
* **recent**: "recently", "latest", "these days", "currently", "the last time": newer
  memories win ties.
* **said_by**: in a user's memory, whether it asks about what the assistant said ("the
  stretches you suggested") or the user ("what I told you about my knee").
* **jointly**: it asks what several people each or all did, are or share ("What do Jon and
  Gina both like?", "What do they have in common?", "How do their jobs compare?"): the
  answer is in each one's turns, so the retriever lets them take turns in the top k.
* **intent**: temporal, multi_hop, preference, procedure, history or lookup; it picks
  which kinds of memory the retriever prefers (see :data:`INTENT_KINDS`); otherwise the
  message intent of :mod:`shiyi.memory.recall.intent` does, when a cue is clear (a query quoting
  an error favours past problems, one asking for new work favours facts and procedures).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Literal, TypeAlias

from shiyi.index.text import tokenize
from shiyi.memory.recall import chinese_time, english_time
from shiyi.memory.recall.addressed import Role, said_by
from shiyi.memory.recall.intent import favoured_kinds
from shiyi.memory.text.people import han_grams, lowercase_names, query_names

Intent: TypeAlias = Literal["temporal", "multi_hop", "preference", "procedure", "history", "lookup"]
INTENTS: tuple[Intent, ...] = (
    "temporal", "multi_hop", "preference", "procedure", "history", "lookup"
)  # fmt: skip

DAY = 86400.0
_RECENT = re.compile(
    r"\b(recent|recently|lately|latest|newest|these days|nowadays|currently|current|now"
    r"|last time)\b"
    r"|最近|最新|现在|目前"
)
_TIME_NOUN = (
    r"(?:date|day|month|year|time|week|weekend|season|age|decade|period|era|time\s*frame"
    r"|(?:stage|phase)\s+(?:of|in)|part\s+of\s+the\s+(?:year|day|week|month))\b"
)
"""What a "what/which ..." question asks for when it asks about time."""
_DONE_VERB = (
    r"(?:\w+ed|got|went|began|left|met|came|took|bought|won|lost|found|made|had|saw|became"
    r"|sold|quit|was|were)\b"
)
"""A past tense: "did Jon start the job before Gina *opened* her shop?" orders two events."""
# Ways people ask when, how long or in what order, from general usage (not from any data
# set): "since when", "do you know when", "at what age", "how many weeks", "before or after",
# "and if so, when?", "what's the date", "how much later", "over what period".  "When" asks
# only where a question is: at the start, before "?" or an auxiliary ("when did"); elsewhere
# it joins two clauses ("what did Ana cook when her parents visited?").  A yes/no question
# with "before"/"after" and a clause asks which came first ("Did Jon start the job before
# Gina opened her shop?"); with a plain noun it does not ("Did Tom eat before the game?").
_TEMPORAL = re.compile(
    r"^\s*(?:(?:and|so|roughly|about|around|approximately|exactly)\s+)?when\b"
    r"|\b(?:since|until|till|by|from)\s+when\b"
    r"|\b(?:know|tell\s+me|remind\s+me|remember|recall|ask(?:ed)?|wonder(?:ing)?)"
    r"\s+(?:(?:roughly|about|around|approximately|exactly|just)\s+)?when\b"
    r"|\bwhen\s*\?|\bwhen\s+(?:did|was|were|is|are|does|do|will|has|have|had)\b"
    rf"|\b(?:what|which)\s+{_TIME_NOUN}"
    rf"|\b(?:what|which)(?:'s|\s+is|\s+was|\s+were)\s+the\s+(?:\w+\s+)?{_TIME_NOUN}"
    r"|\bat\s+what\s+point\b|\bthe\s+duration\s+of\b|\bwhat\s+duration\b"
    r"|\bhow\s+(?:long|old|soon|recently)\b"
    r"|\bhow\s+much\s+(?:time|later|earlier|sooner|longer|older|younger)\b"
    r"|\bhow\s+many\s+(?:minutes|hours|days|nights|weeks|weekends|months|years|decades)\b"
    r"|\bthe\s+date\s+of\b|\btimeline\b|\bbefore\s+or\s+after\b"
    r"|\b(?:came|happened)\s+first\b|\bwhich\s+was\s+first\b"
    rf"|^\s*(?:did|was|were|had|has|have)\b[^?]*?\b(?:before|after)\s+(?:\w+\s+){{0,3}}?{_DONE_VERB}"
    rf"|\b{english_time.SEASON}\s+or\s+{english_time.SEASON}\b"
    r"|什么时候|啥时候|什么时间|哪天|哪一天|哪一年|哪年|哪个月|几月|几号|几点|何时|多久|多长时间"
    r"|多少年|几年|几个月|几个星期|几周|几天|几岁|多少岁|多大的时候|哪个季节|什么季节|先后"
    r"|多少个?(?:天|周|星期|月|小时|钟头|分钟)|哪段时间|哪个时期|什么时期|哪个年代|什么年代"
    r"|之前还是之后|前还是后|哪个先|谁先"
)
_HOW_OFTEN = re.compile(
    r"\bhow\s+(?:often|frequently|regularly)\b"
    r"|\bhow\s+many\s+(?:times|days|nights|evenings|mornings|hours|sessions)"
    r"\s+(?:a|an|per|each|every)\s+\w+"
    r"|\b(?:on\s+)?(?:which|what)\s+days\s+(?:of\s+the\s+week\s+)?(?:does|do)\b"
    r"|\b(?:what|which)\s+frequency\b|\bon\s+what\s+basis\b"
    r"|多久一次|多长时间一次|隔多久|多经常|频率|(?:一|每)(?:天|周|星期|个月|年)几次|几天一次"
)
"""Asking how often: "how often", "how many times a week", "how many days a week", "on which
days does she swim" (not "how many times has she been to Paris", a count)."""
_JOINTLY = re.compile(
    r"\b(?:both|each|alike)\b|\bin\s+common\b|\bcompar(?:e|es|ed|ing|ison)\b"
    r"|\bsimilar(?:ly|ities|ity)?\b|\bthe\s+same\s+(?!time|day|week|month|year)\w+"
    r"|都|共同|一样|相同"
)
"""Asking about several people's things side by side ("both", "each", "in common", "the same
hobby", "compare"; not "together": what they did together one of them can tell alone, nor
"the same day")."""
_MULTI_HOP = re.compile(
    r"\bboth\b|\bin common\b|\ball\s+the\b"
    r"|\bhow many\b|\bwhich\s+\w+\s+(?:has|have)\b|\beach\b|都|共同"
)
# "what has X done": one "done" search after the first "what ... has", as ".*\bdone\b"
# after each of them was quadratic in the text ("what has what has ...", issue 29).
_WHAT_HAS = re.compile(r"\bwhat\s+(?:\w+\s+)?(?:has|have)\b")
_DONE = re.compile(r"\bdone\b")
_PREFERENCE = re.compile(
    r"\b(prefer|prefers|preferred|favou?rite|like|likes|love|loves|enjoy|enjoys|hate|hates"
    r"|dislike)\b|喜欢|偏好|讨厌"
)
_PROCEDURE = re.compile(r"^\s*how\s+(do|can|should|to)\b|\bsteps?\b|\bprocedure\b|怎么|如何|步骤")
# "old" of a former thing ("my old job"), not of an age ("how old is Leo", "7 years old").
_HISTORY = re.compile(
    r"\b(before|previous(ly)?|used to|formerly|earlier|(?<!how )(?<!years )(?<!year )(?<!-)old"
    r"|history|past|originally|changed)\b"
    r"|以前|之前|原来|过去|曾经|以往|历史"
)
_WORD = re.compile(r"[^\W\d_]+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[^\w\s]*[A-Z\u4e00-\u9fff])|(?<=[。！？])|\n+")
"""A sentence ends before a capital or a Chinese character ("on Aug. 3, 2023" is one)."""
_REQUEST = re.compile(
    r"(?:please\s+|can\s+you\s+|could\s+you\s+)?(?:tell|remind|show|list|find|recall"
    r"|remember|summari[sz]e|give|look\s+up)\b|(?:请|帮我)?(?:告诉|提醒|找|列出|回忆|总结)"
)
"""A sentence asking for something ("Remind me what we did last weekend.")."""

INTENT_KINDS: dict[Intent, tuple[str, ...]] = {
    "procedure": ("procedural",),
    "preference": ("preference",),
}
"""Memory kinds an intent prefers (a boost, never a filter)."""


@dataclass(slots=True, frozen=True)
class QuerySignals:
    names: frozenset[str] = frozenset()
    people: frozenset[str] = frozenset()
    lowercase: frozenset[str] = frozenset()
    """A query typed without capitals: its words that may still be names
    (:func:`~shiyi.memory.text.people.lowercase_names`)."""
    windows: tuple[tuple[float, float], ...] = ()
    months: frozenset[int] = frozenset()
    recent: bool = False
    intent: Intent = "lookup"
    history: bool = False
    kinds: tuple[str, ...] = field(default=())
    terms: frozenset[str] = frozenset()
    """The query's search terms with their stems, as the keyword index reads them."""
    subject: str = ""
    how_often: bool = False
    """The question asks how often something happens ("how often does Sam climb?")."""
    said_by: Role = ""
    """Whose words it asks about in a user's memory: the assistant's ("the plan you drafted")
    or the user's ("what I told you") (:mod:`shiyi.memory.recall.addressed`)."""
    jointly: bool = False
    """It asks what several people each or all did, are or share ("both", "in common")."""

    @property
    def timed(self) -> bool:
        return bool(self.windows or self.months)


def _relative_windows(text: str, anchor: datetime) -> list[tuple[datetime, datetime]]:
    return english_time.relative(text, anchor) + chinese_time.relative(text, anchor)


def _what_done(text: str) -> bool:
    """ "what has X done" (``text`` is one line: :func:`understand` joins it)."""
    what = _WHAT_HAS.search(text)
    return what is not None and _DONE.search(text, what.end()) is not None


def _intent(text: str, timed: bool) -> Intent:
    if _PROCEDURE.search(text):
        return "procedure"
    if _TEMPORAL.search(text):
        return "temporal"
    if _MULTI_HOP.search(text) or _what_done(text):
        return "multi_hop"
    if _PREFERENCE.search(text):
        return "preference"
    if _HISTORY.search(english_time.without_relative(text)):
        return "history"  # "the week before last" asks about a time, not about before
    return "temporal" if timed else "lookup"


def understand(query: str, now: float | Callable[[], float]) -> QuerySignals:
    """The signals of ``query``; ``now`` (epoch seconds, or a function giving them, called
    only when the query has a relative time) anchors relative times."""
    text = " ".join(query.lower().split())
    people = query_names(query)
    windows, months = _times(_asked(query), now)
    intent = _intent(text, bool(windows or months))
    return QuerySignals(
        names=frozenset(_WORD.findall(text)) | han_grams(text),
        people=people,
        lowercase=lowercase_names(query),
        windows=tuple((a.timestamp(), b.timestamp()) for a, b in windows),
        months=frozenset(months),
        recent=bool(_RECENT.search(text)),
        intent=intent,
        history=bool(_HISTORY.search(english_time.without_relative(text))),
        kinds=INTENT_KINDS.get(intent, ()) or favoured_kinds(query),
        terms=frozenset(tokenize(query, stems=True)),
        subject=_subject(_WORD.findall(text), people),
        how_often=_HOW_OFTEN.search(text) is not None,
        said_by=said_by(query),
        jointly=_JOINTLY.search(text) is not None,
    )


_NOT_SUBJECT_AFTER = frozenset(
    {"to", "with", "from", "about", "for", "by", "at", "of", "and", "or", "nor", "like"}
    | {"than", "as", "towards", "toward", "between"}
)
"""A name after these is an object ("tell *to* Gina", "share *with* Gina")."""
_TOGETHER = frozenset({"both", "together", "each", "either", "neither"})


def _subject(words: list[str], people: frozenset[str]) -> str:
    """Of two or more ``people`` in ``words`` (the lower-cased query's words), the one it
    asks about as speaker or actor: the first named, unless that name is an object or a
    possessive ("What did Gina's mentor tell Jon?" has none) or the people are asked about
    together ("Jon and Gina", "both"); after "according to", the one named there."""
    places = [(i, word) for i, word in enumerate(words) if word in people]
    if len({word for _, word in places}) < 2 or _TOGETHER.intersection(words):
        return ""
    for i, word in places:
        if words[i - 2 : i] == ["according", "to"]:
            return word
    first, name = places[0]
    before = words[first - 1] if first else ""
    after = words[first + 1] if first + 1 < len(words) else ""
    if before in _NOT_SUBJECT_AFTER or after in ("and", "or", "nor", "s"):
        return ""
    return name


def _asked(query: str) -> str:
    """The part of ``query`` whose times it asks about, lower-cased on one line: all of it,
    or, in a message of several sentences, its questions and requests ("Remind me what we
    did last weekend.").  A message telling news ("The dinner was last night. I used the
    plan we rehearsed. What next?") mentions a time without asking for the memories of it:
    the plan was rehearsed weeks before."""
    sentences = [" ".join(s.lower().split()) for s in _SENTENCE_END.split(query)]
    sentences = [s for s in sentences if s]
    if len(sentences) > 1:
        sentences = [s for s in sentences if s.endswith(("?", "？")) or _REQUEST.match(s)]
    return " ".join(sentences)


def _times(
    text: str, now: float | Callable[[], float]
) -> tuple[list[tuple[datetime, datetime]], set[int]]:
    """The windows ``text`` places itself in and, without any, the months it names."""
    days = english_time.explicit_days(text) + chinese_time.explicit_days(text)
    windows = days or english_time.explicit_periods(text) + chinese_time.explicit_periods(text)
    if days:
        windows += _relative_windows(text, days[0][0]) + english_time.after(text, days[0][0])
        windows += chinese_time.after(text, days[0][0])
    elif english_time.has_relative(text) or chinese_time.has_relative(text):
        moment = now() if callable(now) else now
        windows += _relative_windows(text, datetime.fromtimestamp(moment, UTC))
    months = set()
    if not windows:
        months = english_time.months(text) | chinese_time.months(text)
    return windows, months
