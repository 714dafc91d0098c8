"""Words naming one value of a closed set: statements naming different ones differ.

"I usually go running on Tuesdays now" after "I usually go running on Mondays" embeds 0.9
alike and was taken for a repeat of it (confirmed, no copy made): the Tuesdays were lost.  So
were "Our anniversary is in May" after "... March", "in the evening" after "in the
morning", "weekdays" after "weekends" and "the right side" after "the left side".  Two
values only say the same thing if, in every closed set of values both name (days of the
week, months, seasons, parts of the day, sides, points of the compass, colours, meals,
means of transport),
they name the same ones, and neither names a proper name the other lacks ("Berlin" and
"Berlin, Germany" agree; "Tom" and "Tim" do not).

Numbers are compared by :func:`~shiyi.memory.text.counts.numbers_in`; negation by the
caller.  The sets are common English words, not a vocabulary of any data set.

A statement's *frame* is its words with each such value put as what it is ("<weekday>",
"<number>", "<name>") and the words saying when or how firmly left out.  Two statements of
one frame are compared by it:

* :func:`says_again`: the same frame and values, in other small words ("I still go climbing
  every Saturday" after "I go climbing on Saturdays"): a confirmation;
* :func:`replaces_value`: another value, and the newer says it changed ("I wake up at 7
  now" after "I wake up at 6am"): a new version;
* :func:`withdraws`: the same words denied or ended ("I stopped drinking alcohol" after "I
  drink alcohol"): a new version.
"""

from __future__ import annotations

import re

from shiyi.index.text import stem_word
from shiyi.memory.text.counts import numbers_in
from shiyi.memory.text.short_cache import short_text_cache

_SETS: dict[str, tuple[str, ...]] = {
    "weekday": ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"),
    "week part": ("weekday", "weekend"),
    "season": ("spring", "summer", "autumn", "winter"),
    "part of day": ("morning", "afternoon", "evening", "night", "noon", "midnight", "dawn"),
    "compass": ("north", "south", "east", "west", "northern", "southern", "eastern", "western"),
    "colour": (
        "red", "orange", "yellow", "green", "blue", "purple", "pink", "brown", "black",
        "white", "grey", "gray", "silver", "gold",
    ),
    "meal": ("breakfast", "brunch", "lunch", "dinner", "supper"),
    "transport": (
        "car", "bike", "bicycle", "bus", "train", "tram", "tube", "subway", "metro", "ferry",
        "foot", "scooter", "motorbike", "motorcycle", "taxi", "cab", "plane",
    ),
}  # fmt: skip
_SET_OF = {word: name for name, words in _SETS.items() for word in words}
_SET_WORD = re.compile(r"\b(" + "|".join(_SET_OF) + r")s?\b", re.IGNORECASE)
# Months are capitalised words ("march" and "may" are verbs too).
_MONTHS = (
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
)  # fmt: skip
_MONTH = re.compile(r"\b(" + "|".join(_MONTHS) + r")\b")
# "left" and "right" are sides only before what has one ("you're right", "I left Berlin").
_SIDE = re.compile(
    r"\b(left|right)(?=[\s-]+(?:side|hand|handed|lane|wing|eye|ear|arm|leg|knee|foot|shoulder)\b)",
    re.IGNORECASE,
)
_RELATIVE_WORDS = ("last", "next", "this", "coming")
_RELATIVE_UNITS = ("week", "weekend", "month", "year", "summer", "winter", "spring", "autumn")
_RELATIVE = re.compile(
    rf"\b({'|'.join(_RELATIVE_WORDS)})\s+({'|'.join(_RELATIVE_UNITS)})\b", re.IGNORECASE
)
_DAYS = ("yesterday", "today", "tonight", "tomorrow")
_DAY = re.compile(rf"\b({'|'.join(_DAYS)})\b", re.IGNORECASE)
# A capitalised word not opening a sentence: a proper name ("Ana", "Berlin", "St Mary's").
# A capitalised word, or a brand's inner capital ("easyJet", "iPhone", "eBay").
_NAME = re.compile(r"(?<![.!?]\s)(?<!^)(?<![.!?])\b(?:[A-Z]|[a-z]{1,5}[A-Z])[\w'’-]*")
_CAMEL = re.compile(r"[a-z]{1,5}[A-Z]")
_NOT_NAMES = frozenset({"I", "I'm", "I’m", "I've", "I’ve", "I'd", "I’d", "I'll", "I’ll", "OK"})


@short_text_cache
def named_values(text: str) -> dict[str, frozenset[str]]:
    """The values ``text`` names in each closed set (set name -> values, in small letters)."""
    found: dict[str, set[str]] = {}
    for match in _SET_WORD.finditer(_by_mode(text)):  # "I drive to work": by car
        word = match.group(1).lower()
        found.setdefault(_SET_OF[word], set()).add(word)
    for match in _MONTH.finditer(text):
        found.setdefault("month", set()).add(match.group(1).lower())
    for match in _SIDE.finditer(text):
        found.setdefault("side", set()).add(match.group(1).lower())
    for match in _RELATIVE.finditer(text):  # "last year" and "next year"
        relative = match.group(1).lower().replace("coming", "next")
        found.setdefault(f"relative {match.group(2).lower()}", set()).add(relative)
    for match in _DAY.finditer(text):
        found.setdefault("day", set()).add(match.group(1).lower())
    return {name: frozenset(values) for name, values in found.items()}


@short_text_cache
def proper_names(text: str) -> frozenset[str]:
    """Capitalised words that do not open a sentence, months and weekdays aside."""
    return frozenset(
        word.casefold()
        for word in _NAME.findall(text.strip())
        if word not in _NOT_NAMES
        and word.lower().removesuffix("s") not in _SET_OF
        and word not in _MONTHS
    )


def contrasted(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` name different values of one closed set, an hour as morning
    in one and evening in the other ("8am", "8pm"), or each a proper name the other lacks:
    then they cannot say the same thing, however alike they embed."""
    if _other_half_of_day(_halves_of_day(a), _halves_of_day(b)):
        return True
    values_a, values_b = named_values(a), named_values(b)
    if any(values_b.get(name, values) != values for name, values in values_a.items()):
        return True
    names_a, names_b = proper_names(a), proper_names(b)
    return bool(names_a - names_b) and bool(names_b - names_a)


# "8am", "8 p.m.", "7:30pm": an hour with the half of the day it is in.
_MERIDIEM = re.compile(r"\b(\d{1,2})(?::[0-5]\d)?\s*([ap])\.?\s?m\b\.?", re.IGNORECASE)


def _halves_of_day(text: str) -> frozenset[tuple[int, str]]:
    """Each hour said with am or pm, as (hour on a 12-hour clock, "a" or "p")."""
    return frozenset((int(h) % 12, m.lower()) for h, m in _MERIDIEM.findall(text))


def _other_half_of_day(a: frozenset[tuple[int, str]], b: frozenset[tuple[int, str]]) -> bool:
    """Whether an hour is in the morning in one and only in the evening in the other (an
    hour without am or pm is either)."""
    flip = {"a": "p", "p": "a"}
    return any((h, flip[m]) in b and (h, m) not in b for h, m in a) or any(
        (h, flip[m]) in a and (h, m) not in a for h, m in b
    )


# A newer statement saying its value replaced another: "I wake up at 7 now", "on Tuesdays
# instead", or that the earlier one was wrong: "Actually, my flight is at 9pm".  Without
# one, "I have a meeting on Monday" and "... on Tuesday" are both true.
_CHANGED = re.compile(
    r"\b(?:now|these days|nowadays|instead|anymore|any more|from now on|going forward|actually"
    r"|correction"
    r"|starting (?:today|tomorrow|next \w+)|switched to|changed to|moved to)\b",
    re.IGNORECASE,
)
# ... unless it says the value is one more: "I'm learning Japanese now too".
_ADDED = re.compile(r"\b(?:too|also|as well|additionally|another|both)\b", re.IGNORECASE)
# Words that leave a statement's frame as it was ("I still go climbing every Saturday").
_FILLERS = frozenset(
    {"still", "actually", "really", "usually", "always", "normally", "generally", "every",
     "the", "on", "at", "in", "s", "m", "re", "am", "is", "are", "was", "so", "yes", "yeah",
     "ok", "okay", "well", "oh", "pm", "o", "clock", "oclock", "just"}
)  # fmt: skip
_WORD = re.compile(r"[^\W_]+")


@short_text_cache
def frame(text: str) -> tuple[str, ...]:
    """``text``'s words with each value (a number, a value of a closed set, a proper name)
    put as what it is, and the words that say when or how firmly left out: "I usually go
    running on Mondays" and "I go running every Tuesday now" share ("i", "go", "running",
    "<weekday>")."""
    tokens = _WORD.findall(_CHANGED.sub(" ", _by_mode(text)))
    words: list[str] = []
    skip = False
    for index, token in enumerate(tokens):
        if skip:
            skip = False
            continue
        word = token.casefold()
        following = tokens[index + 1].casefold() if index + 1 < len(tokens) else ""
        if any(ch.isdigit() for ch in word) or numbers_in(word):
            word = "<number>"
        elif (bare := word.removesuffix("s")) in _SET_OF or word in _SET_OF:
            word = f"<{_SET_OF.get(word) or _SET_OF[bare]}>"
        elif word in _DAYS:
            word = "<day>"
        elif word in _RELATIVE_WORDS and following in _RELATIVE_UNITS:
            word, skip = "<relative>", True
        elif token in _MONTHS:
            word = "<month>"
        elif index and (token[0].isupper() or _CAMEL.match(token)) and token not in _NOT_NAMES:
            word = "<name>"
        if word in _FILLERS:
            continue
        word = word if word.startswith("<") else word.removesuffix("s")  # "sugars": "sugar"
        if not words or words[-1] != word:
            words.append(word)
    return tuple(words)


def _other_values(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` name other values: of a closed set, names, or numbers."""
    return contrasted(a, b) or numbers_in(_by_mode(a)) != numbers_in(_by_mode(b))


# Going somewhere by a means of transport, said with its verb: "I drive to work" is "I take
# the car to work", which "I take the tram to work now" then replaces.
_TRAVEL_VERBS = (
    (re.compile(r"\b(?:drive|drives)\s+(?=to\b|into\b)", re.IGNORECASE), "take car "),
    (re.compile(r"\b(?:cycle|cycles|bike|bikes)\s+(?=to\b|into\b)", re.IGNORECASE), "take bike "),
    (re.compile(r"\b(?:walk|walks)\s+(?=to\b|into\b)", re.IGNORECASE), "take foot "),
    (re.compile(r"\b(?:fly|flies)\s+(?=to\b)", re.IGNORECASE), "take plane "),
)


# Noon and midnight are clock times: "I start work at noon now" after "... at 9".
_CLOCK_WORDS = re.compile(
    r"\b(at|by|until|till|before|after|around|from|past)\s+(?:noon|midday|midnight)\b",
    re.IGNORECASE,
)


def _by_mode(text: str) -> str:
    """``text`` with a means of travel said as its vehicle and noon or midnight as 12."""
    for verb, taken in _TRAVEL_VERBS:
        text = verb.sub(taken, text)
    return _CLOCK_WORDS.sub(r"\1 12", text)


def replaces_value(new: str, old: str) -> bool:
    """Whether ``new`` says that a value ``old`` stated changed: it says so ("now",
    "instead") and not that it adds one ("too"), names another number, another value of a
    closed set or another name, and is otherwise the same sentence ("I wake up at 7 now"
    after "I wake up at 6am", "My team lead is Omar now" after "... is Sara")."""
    if _HAN.search(new) and _HAN.search(old):  # "我现在每天七点起床" after "...六点..."
        changed = _ZH_CHANGED.search(new) and not _ZH_ADDED.search(new)
        framed = _zh_frame(new)
        return (
            bool(changed)
            and _other_values(new, old)
            and len(framed) >= 3
            and (framed == _zh_frame(old))
        )
    if not _CHANGED.search(new) or _ADDED.search(new):
        return False
    return _other_values(new, old) and _sentence(frame(new)) and frame(new) == frame(old)


def says_again(new: str, old: str) -> bool:
    """Whether ``new`` is ``old`` said again in other small words: the same frame and the
    same values ("I still go climbing every Saturday" after "I go climbing on Saturdays")."""
    if _other_values(new, old):
        return False
    if _HAN.search(new) and _HAN.search(old):  # no spaces: the characters, fillers aside
        core = _zh_core(new)
        return len(core) >= 3 and core == _zh_core(old)
    framed = frame(new)
    return _sentence(framed) and framed == frame(old)


_HAN = re.compile(r"[\u4e00-\u9fff]")
# Chinese words that say when or how firmly, and particles: "我还是老师" is "我是老师" again.
_ZH_FILLERS = re.compile(r"一直|仍然|依然|现在|目前|如今|还|仍|都|也|了|的|呢|啊|吧|[^\w]")


def _zh_core(text: str) -> str:
    return _ZH_FILLERS.sub("", text)


# Chinese words saying a value changed ("now", "changed to") or that one was added ("also").
_ZH_CHANGED = re.compile(r"现在|如今|目前|改成|改为|换成|改到")
_ZH_ADDED = re.compile(r"也|还有|另外")
_ZH_NUMBER = re.compile(r"[\d零一二三四五六七八九十百千万两]+")


def _zh_frame(text: str) -> str:
    """A Chinese statement with its fillers left out and each number put as "#"."""
    return _ZH_NUMBER.sub("#", _ZH_CHANGED.sub("", _zh_core(text)))


def _sentence(framed: tuple[str, ...]) -> bool:
    """Whether a frame holds enough words to call two statements the same sentence ("the
    standup is at 9:30" does; "at 7" does not)."""
    return len(framed) >= 2 and sum(not word.startswith("<") for word in framed) >= 1


# Words that deny or end what a sentence says: "I don't eat meat (anymore)", "I stopped
# drinking alcohol", "I no longer wear glasses", "I never smoke".
_DENIALS = frozenset(
    {"not", "no", "never", "don", "doesn", "didn", "do", "does", "t", "longer", "stopped",
     "quit", "quitted", "ceased"}
)  # fmt: skip
_DENIES = re.compile(r"\b(?:not|never|no longer|stopped|quit)\b|n['’]t\b", re.IGNORECASE)


def withdraws(new: str, old: str) -> bool:
    """Whether ``new`` denies or ends what ``old`` said, in its words: "I don't eat meat
    anymore" or "I stopped eating meat" after "I eat meat" (and the reverse: "I eat meat
    again" after "I don't eat meat")."""
    if bool(_DENIES.search(new)) == bool(_DENIES.search(old)):
        return False
    if _other_values(new, old):
        return False
    stems_new, stems_old = _stems(new), _stems(old)
    return _sentence(stems_new) and stems_new == stems_old


@short_text_cache
def _stems(text: str) -> tuple[str, ...]:
    """The frame of ``text`` without its denials or the reason given for them, each word
    stemmed ("eating", "eat": eat)."""
    said = _BECAUSE.sub("", _AGAIN.sub(" ", text))
    kept = (w for w in frame(said) if w not in _DENIALS and w not in _WHEN)
    return tuple(w if w.startswith("<") else stem_word(w) for w in kept)


# When a habit held or ended, and articles ("no car", "a car"), leave what ended as it was:
# "I don't go running anymore" ends "I go running on Mondays".
_WHEN = frozenset(
    {"<relative>", "<day>", "<weekday>", "<week part>", "<part of day>", "<month>",
     "<season>", "a", "an", "any"}
)  # fmt: skip
# "I don't wear glasses anymore since the surgery": why is not what ended.
_BECAUSE = re.compile(
    r"(?<!\s)[,;]?\s+(?:since|because|after|ever since|as of|due to)\b.*$", re.IGNORECASE
)
_AGAIN = re.compile(r"\b(?:again|once more)\b", re.IGNORECASE)
