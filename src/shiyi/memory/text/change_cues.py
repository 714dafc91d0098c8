"""Whether a chat message says that something the user had before is no longer so.

The slot and ending rules read plain shapes.  People chat: "Finally got a Pixel 8 in the
sale, first time on Android in years" after "My phone's an iPhone 12"; "These days I take the
train home to Dublin instead of flying" after "I fly home to Dublin about once a month".
What such a message shares with the earlier one is a topic word and a word of change
("instead", "now", "switched", "these days", "现在", "改成"), and it is the user's own, said
as settled:

* no plan, wish, hypothetical or question ("thinking about switching", "if I get the job");
* no one-off ("this Saturday", "today"), no story of how it used to be ("used to",
  "back when") and nothing said to be still so ("moved my sessions to lunchtimes, still
  the same three days a week"; "still getting used to iOS" says nothing of that);
* nothing added alongside ("too", "also", "another", "a second");
* no other person ("my brother sold his car", "我老婆跳槽了") unless the earlier message is
  about them too.

These are word tests only (:func:`says_it_changed`, :func:`shared_topic`); the writer adds
how alike the two messages are by meaning (:mod:`shiyi.memory.lifecycle.said_instead`).
"""

from __future__ import annotations

import re

from shiyi.index.text import stem_word
from shiyi.memory.text.subjects import KIN, ZH_KIN

LONGEST = 400
_CHANGE = re.compile(
    r"\b(?:instead|anymore|any more|no longer|no more|these days|nowadays|now|switched"
    r"|switching|moved|changed|upgraded|swapped|traded|replaced|ditched|quit|gave up"
    r"|given up|stopped|cancell?ed|sold|retired|ended up|bumped|upped|dropped|finally)\b"
    r"|现在|改成|换成|换了|转到|不再|辞职|搬到|搬去|已经",
    re.IGNORECASE,
)
_NOT_SETTLED = re.compile(
    r"\b(?:if|would(?!n)|might|maybe|perhaps|thinking|considering|planning|plan to|going to"
    r"|gonna|want to|wants to|wanna|wish|hope|hoping|should(?!n)|could(?!n)|tempted|used to"
    r"|back when|back then|back in (?:my|our|the|those)|before that|when I was|as a kid"
    r"|in my (?:teens|twenties|thirties|forties|fifties|youth)"
    r"|this (?:week|weekend|morning|evening|afternoon|monday|tuesday|wednesday|thursday"
    r"|friday|saturday|sunday)|tonight|tomorrow|next (?:week|month|year)|also|as well"
    r"|another|second|extra|one-off"
    r"|still\s+(?:the\s+same|same|every|each|at|on|in|with|there|doing|going|the))\b"
    r"|\btoo(?=\s*(?:[,.!;]|$))|[?？]|如果|打算|想要|可能|也许|以前|这周|今天|明天|下周|也"
    r"|还是|仍然|依然",
    re.IGNORECASE,
)
_OTHERS = frozenset(KIN - {"dog", "cat", "puppy", "kitten", "family"}) | {
    "mate",
    "pal",
    "bestie",
    "buddy",
    "team",
    "company",
    "landlord",
    "doctor",
}
_PERSON_WORD = re.compile(
    r"\b(?:my|our|his|her|their)\s+(?:best\s+|older\s+|younger\s+|little\s+|big\s+)?"
    r"(?P<who>[a-z]+)\b",
    re.IGNORECASE,
)
_ZH_OTHERS = (*ZH_KIN, "老婆", "老公", "孩子", "同事", "朋友", "室友", "爸妈", "男朋友", "女朋友")
_STOP = frozenset(
    {"i", "me", "my", "we", "our", "us", "the", "a", "an", "and", "or", "but", "so", "to", "of",
     "in", "on", "at", "for", "with", "is", "am", "are", "was", "were", "be", "been", "have",
     "has", "had", "do", "does", "did", "it", "its", "this", "that", "these", "those", "now",
     "no", "not", "more", "any", "just", "really", "about", "very", "all", "than", "then",
     "there", "here", "they", "he", "she", "his", "her", "their", "you", "your", "up", "out",
     "over", "into", "from", "by", "as", "get", "got", "go", "went", "one", "two", "like",
     "also", "still", "back", "day", "days", "week", "weeks", "month", "months", "year",
     "years", "time", "last", "new", "old", "since", "i'm", "i've", "don't", "it's", "im",
     "ive", "dont", "instead", "anymore", "longer", "nowadays", "finally", "ended", "switched",
     "moved", "changed", "upgraded", "swapped", "traded", "replaced", "ditched", "quit", "gave",
     "given", "stopped", "cancelled", "canceled", "sold", "retired", "bumped", "upped",
     "dropped", "every", "each", "lot", "bit", "thing", "things", "much", "many", "some",
     "pretty", "basically", "actually", "honestly", "probably", "mostly", "always", "never",
     "ever", "sure", "way", "take", "takes", "taking", "took", "make", "makes", "made", "put",
     "keep", "kept", "feel", "think", "know", "want", "need", "say", "said", "see", "come",
     "use", "using", "used", "doing", "done", "going", "getting"}
)  # fmt: skip
_PEOPLE_STEMS = frozenset(stem_word(w) for w in (*KIN, "mate", "pal", "bestie", "buddy"))
_ZH_STOP = frozenset(
    {"现在", "我们", "已经", "每天", "一个", "上个", "个月", "了，", "我的", "以后"}
)
_HAN = re.compile(r"[\u4e00-\u9fff]")
# Characters of grammar, not of topics: a pair holding one ("了一", "我的") names nothing.
_ZH_FUNCTION = re.compile(r"[了的一是在我你他她它们这那个就都也还不没很太把被给和跟吗呢吧啊之]")
_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]+")


def said_as_a_change(new: str) -> bool:
    """Whether ``new`` says, as settled, that something changed (before any comparison)."""
    return len(new) <= LONGEST and bool(_CHANGE.search(new)) and not _NOT_SETTLED.search(new)


def says_it_changed(new: str, old: str) -> bool:
    """Whether ``new`` is said as a settled change by the user (or by the person ``old`` is
    about): a word of change, no plan, wish, one-off, addition or story of the past, and no
    other person than ``old``'s."""
    return said_as_a_change(new) and not (_people(new) - _people(old))


# "Moved my membership from PureGym to David Lloyd": the name left behind.
_FROM_TO = re.compile(
    r"\bfrom\s+(?:(?:my|our|the)\s+)?(?P<left>(?-i:[A-Z])[\w'’&-]*(?:\s+(?-i:[A-Z])[\w'’&-]*){0,3})"
    r"\s+(?:over\s+)?to\s+\S",
    re.IGNORECASE,
)


def left_behind(new: str, old: str) -> bool:
    """Whether ``new`` moves from a name ``old`` holds to another ("Moved my membership
    from PureGym to David Lloyd" after "I'm a member at the PureGym on the high street")."""
    found = _FROM_TO.search(new) if len(new) <= LONGEST else None
    if found is None:
        return False
    left = topic_words(found.group("left"))
    return bool(left) and left <= topic_words(old)


_INSTEAD_OF = re.compile(
    r"\b(?:instead\s+of|rather\s+than|in\s+place\s+of)\s+(?P<left>[^,.;:!?]{1,60})",
    re.IGNORECASE,
)


def left_instead(new: str) -> frozenset[str]:
    """The topic words of what ``new`` is done "instead of" ("I do Wednesdays at the Oxfam
    shop now instead of Saturdays": saturday); empty when it names none."""
    found = _INSTEAD_OF.search(new) if len(new) <= LONGEST else None
    return topic_words(found.group("left")) if found else frozenset()


_CALENDAR = frozenset(
    ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "january",
     "february", "march", "april", "may", "june", "july", "august", "september", "october",
     "november", "december", "christmas", "easter")
)  # fmt: skip
# A capitalised word inside a sentence (not its first): "the Oxfam shop", "at Harland's".
_POSSESSIVE = re.compile(r"['’]s?$")
_INNER_NAME = re.compile(r"(?<![.!?]\s)(?<=\s)(?-i:[A-Z])[A-Za-z'’&-]+")


def shared_names(new: str, old: str) -> frozenset[str]:
    """The names both statements hold (capitalised inside a sentence; not "I", a weekday,
    a month or a holiday): "Oxfam" in "I do Wednesdays at the Oxfam shop now" and "I
    volunteer at the Oxfam bookshop on Saturdays"."""
    return _names(new) & _names(old) if max(len(new), len(old)) <= LONGEST else frozenset()


def _names(text: str) -> frozenset[str]:
    words = (_POSSESSIVE.sub("", m.group().casefold()) for m in _INNER_NAME.finditer(text))
    return frozenset(w for w in words if len(w) > 1 and w.removesuffix("s") not in _CALENDAR)


def shared_topic(new: str, old: str) -> frozenset[str]:
    """The topic words both mention (stems; two-character runs of Chinese, of which two
    must be shared).  Numbers are
    values, not topics ("20mg" and "30mg" are what changed); nor is whom they are about
    ("My brother is a dad now" says nothing of "My brother is a chef")."""
    shared = (topic_words(new) & topic_words(old)) - _PEOPLE_STEMS
    if _HAN.search(new) and len(shared) < 2:
        return frozenset()  # one pair of characters in common is too little ("太远": too far)
    return shared


def _people(text: str) -> frozenset[str]:
    """Whom ``text`` names by their relation to the speaker ("my brother", "our landlord",
    "我老婆")."""
    said = {m.group("who").lower() for m in _PERSON_WORD.finditer(text)}
    found = {who for who in said if who in _OTHERS or who.rstrip("s") in _OTHERS}
    found |= {who for who in _ZH_OTHERS if who in text}
    return frozenset(found)


def topic_words(text: str) -> frozenset[str]:
    """``text``'s words of substance: stems of English words that are not grammar, change
    or time words; two-character runs of Chinese without a grammar character."""
    if _HAN.search(text):
        han = "".join(_HAN.findall(text))
        pairs = (han[i : i + 2] for i in range(len(han) - 1))
        return frozenset(p for p in pairs if not _ZH_FUNCTION.search(p)) - _ZH_STOP
    words = (w.casefold().replace("’", "'") for w in _WORD.findall(text))
    return frozenset(stem_word(w) for w in words if w not in _STOP and len(w) > 2)
