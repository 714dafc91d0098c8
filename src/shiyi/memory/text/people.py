"""Who a question names: speakers matched through nicknames, short forms, near-spellings and
what the conversation itself calls them.

People ask about each other the way they talk: "What did *Bex* adopt?" of a chat whose speaker
field says ``rebecca``, "Mel" for Melanie, "Jonh" typed for John.  An exact match of the
query's words against the speaker field finds none of these, so the speaker boost
(:mod:`shiyi.memory.recall.boosts`) never fires for them.  A query name (a capitalised word
that is not a question or function word) names a speaker when

* it is the speaker's name, or a nickname of it or of the same given name (``Bob`` /
  ``Robert`` / ``Bobby``: the hand-curated table of the ``nicknames`` package);
* it is a short form: one name begins with the other and the shorter has 3+ letters
  (``Mel`` / ``Melanie``, ``Chris`` / ``Christopher``);
* it is a near-spelling: same first letter, 4+ letters, one edit apart (a letter missing,
  added, changed or two swapped: ``Jonh`` / ``John``, ``Carolin`` / ``Caroline``), or the
  same once the letters English spells a name's sounds with are made one (``Catherine`` /
  ``Katherine``, ``Kristopher`` / ``Christopher``, ``Steven`` / ``Stephen``, ``Carolyn`` /
  ``Caroline``); accents never count (``Zoe`` / ``Zoë``);
* the conversation calls that speaker so: another speaker addresses them by it ("Thanks,
  Bex!", "Hey Mel, ...") or they say it of themselves ("call me Bex", "my name is
  Rebecca"), or the name is a nickname, short form or near-spelling of what they are called
  ("Becky" of the speaker ``kayak_fan`` who said "my name is Rebecca").

Chinese names have no capitals and no spaces: every two to four characters of a question's
Chinese text may be a name, and names a speaker only as one of the forms people address each
other by (:func:`chinese_forms`): the given name ("小明" for 王小明), 老/小 and the surname
("老王"), 阿/小 and the given name's last character ("阿明"), or the surname and a title
("王老师", "王总", "李姐").  The Latin rules (short forms,
near-spellings) do not apply to them: "王小明上" is no short form of anyone.

A name that matches two speakers by any rule but the exact one names neither: guessing between
them would favour a wrong person's turns.  A plain rule (a short form, a nickname of the name
itself, one letter off) comes before the table's wider links and the spellings made one:
"Chris" names Christopher, not Ann, though the table has both as nicknames of Christiana.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from functools import cache, lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nicknames import NickNamer

MIN_SHORT_FORM = 3
MIN_NEAR_SPELLING = 4

_WORD = re.compile(r"\b[^\W\d_]+\b")
"""A word of letters in any script ("José", "Zoë", "Łukasz" as much as "Mel")."""
_NOT_NAME_WORDS = """a an the i i'm i've i'd what when where who whom whose why how which did
    does do done is are was were be been has have had will would can could should shall may
    might must if and or but so then than that this these those there here it its he she they we you
    his her their our your my me him them us of in on at to for from by with about after
    before during since until into over under between tell say said give list name describe
    explain remind recall remember yes no not ok okay also just please
    monday tuesday wednesday thursday friday saturday sunday january february march april
    june july august september october november december"""
_NOT_NAMES = frozenset(_NOT_NAME_WORDS.split())
"""Capitalised words that start questions or name days and months, never a person."""


def _capitalised(text: str) -> Iterable[re.Match[str]]:
    """The words of ``text`` written as names are: a capital, then small letters only."""
    for match in _WORD.finditer(text):
        word = match.group()
        if len(word) > 1 and word[0].isupper() and word[1:].islower():
            yield match


_GREETING_TEXT = """hey hi hiya hello heya yo morning thanks thx congrats congratulations bye
    goodbye oh wow aw aww yes yeah sorry dear luck birthday"""
_GREETING_WORDS = frozenset(_GREETING_TEXT.split())
"""A word right before a name that makes it an address: "Hey Mel", "Thanks, Bex", "Good luck,
Sam", "Happy birthday Jo"."""
_BEFORE_YOU = frozenset({"thank", "love", "miss", "see"})
"""... or "you" after one of these: "Thank you, Bex!", "Miss you Mel"."""
_SELF_CUES = (
    "call me", "calls me", "known as", "go by", "my name is", "my name's", "i'm called",
    "i am called",
)  # fmt: skip
"""What comes right before a name someone gives themselves: "call me Bex", "everyone calls
me Bex", "I go by Bex", "my name is Bex" (a speaker field that is a handle, a chat's first
words).  Not "I'm": "I'm Canadian", "I'm Free"."""
_LOOK_BEHIND = 24
"""Characters before a name read for one of the cues above."""
_HAN_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]{2,}")
MAX_NAMED_TEXT = 1000
"""Characters of a text read for Chinese names: a question names people in its own words, and
a pasted page would give three names per character."""
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]+")
_COMPOUND_SURNAMES = frozenset(
    ("欧阳", "司马", "诸葛", "上官", "东方", "皇甫", "慕容", "令狐", "尉迟", "公孙", "长孙", "夏侯")
)
_NICKNAME_PREFIXES = ("小", "阿", "老")
_TITLES = ("老师", "总", "哥", "姐", "先生", "女士", "师傅", "医生", "经理")
"""What follows a surname when people address someone by it: "王老师", "王总", "李姐"."""


def query_names(query: str) -> frozenset[str]:
    """The words of ``query`` that may name a person, lower-cased: capitalised words inside a
    sentence that are not question or function words ("What did Mel paint?" -> ``{"mel"}``).
    A sentence's first word is capitalised anyway ("Car trouble: who ..."), so it is left
    out; an exact speaker name there is still matched by the caller's plain word match."""
    names = set()
    for match in _capitalised(query):
        before = query[: match.start()].rstrip()
        if not before or before[-1] in ".!?:;\"'(\n":
            continue
        word = match.group().lower()
        if word not in _NOT_NAMES:
            names.add(word)
    return frozenset(names) | han_grams(query)


def lowercase_names(query: str) -> frozenset[str]:
    """The words of a query typed all in small letters ("what did becky adopt?") that may
    name a person: 3+ letters, not question or function words.  Without capitals a name
    looks like any word, so only :func:`nicknamed_speakers` places these."""
    if any(c.isupper() for c in query):
        return frozenset()
    words = (w for w in _WORD.findall(query) if len(w) >= MIN_SHORT_FORM)
    return frozenset(w for w in words if w not in _NOT_NAMES)


def nicknamed_speakers(
    words: Iterable[str], speakers: Iterable[str], said_as_word: Callable[[str], bool]
) -> set[str]:
    """The ``speakers`` that lower-cased ``words`` name as a nickname of theirs in the
    nickname table ("becky", "tom"), a short form ("mel") or their name typed without its
    accents ("jose"); near-spellings do not count here, nor a word the conversation uses as
    a word (``said_as_word``: written in small letters in its turns, as "the bill" or "my
    car" are, so "bill" does not name William there, nor "car" Caroline)."""
    everyone = set(speakers)
    found: set[str] = set()
    for word in words:
        matches = {s for s in everyone if word != s and _nickname_or_plain(word, s)}
        if len(matches) == 1 and not said_as_word(word):
            found |= matches
    return found


def said_as_word(word: str, texts: Iterable[str]) -> bool:
    """Whether ``word`` is written in small letters in any of ``texts`` (their first
    :data:`MAX_NAMED_TEXT` characters) as a word: "the bill", "will you"; not where it
    addresses someone ("thanks becky!", "hey becky"), as a chat typed without capitals
    writes names."""
    pattern = re.compile(rf"\b{re.escape(word)}\b")
    for text in texts:
        opening = text[:MAX_NAMED_TEXT]
        for match in pattern.finditer(opening):
            before = opening[max(0, match.start() - _LOOK_BEHIND) : match.start()].rstrip()
            if not _addresses(before.lower(), opening[match.end() : match.end() + 2]):
                return True
    return False


def _nickname_or_plain(word: str, speaker: str) -> bool:
    plain = _unaccented(speaker)
    return word == plain or plain.startswith(word) or plain in _given_names(word)


def han_grams(text: str) -> frozenset[str]:
    """Every two to four characters of ``text``'s Chinese runs: Chinese has no spaces, so
    a name ("小明") is inside "小明上周去哪了" without being a word of its own."""
    grams: set[str] = set()
    for run in _HAN_RUN.findall(text[:MAX_NAMED_TEXT]):
        grams.update(run[i : i + n] for n in (2, 3, 4) for i in range(len(run) - n + 1))
    return frozenset(grams)


def called(turns: Iterable[tuple[str, str]], speakers: Iterable[str]) -> dict[str, set[str]]:
    """What the conversation calls each speaker, from ``(speaker, text)`` turns: names they
    are addressed by (when only one other speaker can be meant) or give themselves."""
    everyone = set(speakers)
    names: dict[str, set[str]] = {}
    for speaker, text in turns:
        addressed, own = _names_said(text)
        if own:
            names.setdefault(speaker, set()).update(own)
        others = everyone - {speaker}
        if len(others) != 1:
            continue  # a group chat: whom "Thanks, Bex!" thanks is not known
        (listener,) = others
        for word in addressed:
            if word not in everyone:
                names.setdefault(listener, set()).add(word)
    return names


@lru_cache(maxsize=8192)
def _names_said(text: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The names ``text`` addresses someone by, and those its speaker gives themselves.
    Cached: the same turns are candidates of many searches."""
    addressed: list[str] = []
    own: list[str] = []
    for match in _capitalised(text):
        word = match.group().lower()
        if word in _NOT_NAMES:
            continue
        before = text[max(0, match.start() - _LOOK_BEHIND) : match.start()].lower().rstrip()
        if before.endswith(_SELF_CUES):
            own.append(word)
        elif _addresses(before, text[match.end() : match.end() + 2]):
            addressed.append(word)
    return tuple(addressed), tuple(own)


def _addresses(before: str, after: str) -> bool:
    """Whether a name between ``before`` (lower-cased) and ``after`` is said to someone."""
    if before.endswith(",") and after[:1] in ("!", "?", "."):
        return True  # "..., Bex!"
    words = before.rstrip(",").split()
    if not words:
        return False
    if words[-1] in _GREETING_WORDS:
        return True
    return words[-1] == "you" and len(words) > 1 and words[-2] in _BEFORE_YOU


def named_speakers(
    names: Iterable[str],
    speakers: Iterable[str],
    called_names: Mapping[str, set[str]] | Callable[[], Mapping[str, set[str]]] | None = None,
) -> set[str]:
    """The ``speakers`` (lower-cased speaker fields) that query ``names`` name.
    ``called_names``: what the conversation calls them (:func:`called`), or a function giving
    it, asked only for a name no other rule places (reading the turns costs more)."""
    everyone = set(speakers)
    found: set[str] = set()
    for name in names:
        if name in everyone:
            found.add(name)
            continue
        if _HAN.fullmatch(name):
            matches = {s for s in everyone if name in chinese_forms(s)}
            if len(matches) == 1:
                found |= matches
            continue
        closeness = {s: _same_person(name, s) for s in everyone}
        nearest = max(closeness.values(), default=0)
        matches = {s for s, close in closeness.items() if close and close == nearest}
        if not matches and called_names is not None:
            if callable(called_names):
                called_names = called_names()
            matches = {s for s in everyone if name in called_names.get(s, ())}
            if not matches:  # "Becky" of one whose handle is kayak_fan and who said "Rebecca"
                matches = _nearest_called(name, everyone, called_names)
        if len(matches) == 1:
            found |= matches
    return found


def _nearest_called(
    name: str, speakers: set[str], called_names: Mapping[str, set[str]]
) -> set[str]:
    """The speakers whose called names ``name`` names most plainly, by the rules a speaker
    field is matched with (:func:`_same_person`); Chinese names only as they are called."""
    if _HAN.fullmatch(name):
        return set()
    closeness = {
        s: max((_same_person(name, c) for c in called_names.get(s, ()) if not _HAN.search(c)),
               default=0)
        for s in speakers
    }  # fmt: skip
    nearest = max(closeness.values(), default=0)
    return {s for s, close in closeness.items() if close and close == nearest}


@cache
def chinese_forms(speaker: str) -> frozenset[str]:
    """The forms a Chinese ``speaker`` name is addressed by: 王小明 -> 小明, 老王, 小王, 阿明,
    王老师, 王总, ...; a two-character name counts its first character as the surname
    (王明 -> 老王, 阿明), unless it is a nickname already: then its other prefixed forms
    (小明 -> 阿明, 老明).  The doubled character ("明明") is left out: it is also the common
    word for "clearly", as "小姐" ("miss") is why a nickname gets no titles.  Empty for a
    name that is not two to four Chinese characters."""
    if not (2 <= len(speaker) <= 4 and _HAN.fullmatch(speaker)):
        return frozenset()
    if len(speaker) == 2 and speaker[0] in _NICKNAME_PREFIXES:
        forms = {prefix + speaker[1] for prefix in _NICKNAME_PREFIXES}
        return frozenset(forms - {speaker})
    surname = speaker[:2] if len(speaker) == 4 or speaker[:2] in _COMPOUND_SURNAMES else speaker[0]
    given = speaker[len(surname) :]
    forms = {f"老{surname}", f"小{surname}", *(surname + title for title in _TITLES)}
    forms |= {f"阿{given[-1]}", f"小{given[-1]}"} | ({given} if len(given) >= 2 else set())
    return frozenset(forms - {speaker})


@lru_cache(maxsize=8192)
def _same_person(name: str, speaker: str) -> int:
    """How plainly ``name`` names ``speaker``: 2 directly (the name without accents, a short
    form, a nickname of it, one letter off), 1 through the nickname table's shared given
    names or spellings made one ("Chris" and "Ann" are both nicknames of Christiana: "Chris"
    still names Christopher before Ann), 0 not at all."""
    name, speaker = _unaccented(name), _unaccented(speaker)
    short, long = sorted((name, speaker), key=len)
    if len(short) >= MIN_SHORT_FORM and long.startswith(short):
        return 2
    if name in _given_names(speaker) or speaker in _given_names(name):
        return 2
    near = min(len(name), len(speaker)) >= MIN_NEAR_SPELLING and name[0] == speaker[0]
    if near and _one_edit_apart(name, speaker):
        return 2
    if _nicknamed(name, speaker) or _spelled_alike(name, speaker):
        return 1
    return 1 if _tail_form(short, long) else 0


def _tail_form(short: str, long: str) -> bool:
    """A short form made of a name's end: "Gina" for Georgina, "Tina" for Christina, "Bella"
    for Isabella (4+ letters, and at least two left off)."""
    return len(short) >= MIN_NEAR_SPELLING and len(long) - len(short) >= 2 and long.endswith(short)


def _spelled_alike(a: str, b: str) -> bool:
    """One name spelled as the other, or one letter off: the same first letter and one edit
    apart ("Jonh" / "John"), or the same once the spellings English names vary by are made
    one ("Catherine" / "Katherine", "Kristopher" / "Christopher", "Steven" / "Stephen",
    "Carolyn" / "Caroline", "Jeffrey" / "Geoffrey")."""
    if min(len(a), len(b)) < MIN_NEAR_SPELLING:
        return False
    if a[0] == b[0] and _one_edit_apart(a, b):
        return True
    sound_a, sound_b = _spelling(a), _spelling(b)
    # one edit apart only from the same first sound: "Sean" is not "Dean" (a nickname of Ann)
    return sound_a == sound_b or (
        min(len(sound_a), len(sound_b)) >= MIN_NEAR_SPELLING
        and sound_a[0] == sound_b[0]
        and _one_edit_apart(sound_a, sound_b)
    )


_SPELLINGS = (
    (re.compile(r"ph"), "f"),
    (re.compile(r"x"), "ks"),
    (re.compile(r"^chr|ck|q"), lambda m: "kr" if m.group() == "chr" else "k"),
    (re.compile(r"c(?=[eiy])"), "s"),
    (re.compile(r"c"), "k"),
    (re.compile(r"([kt])h"), r"\1"),
    (re.compile(r"^g(?=[eiy])"), "j"),
    (re.compile(r"v"), "f"),
    (re.compile(r"y"), "i"),
    (re.compile(r"(\w)\1+"), r"\1"),
    (re.compile(r"(?<=\w{3})e$"), ""),
)
"""Letters English spells a name's sounds with, made one: ph/v as f, x as ks (``Aleksandr`` /
``Alexander``), c/ch/ck/q as k (c as s
before e, i, y), th as t, a soft g at the start as j, y as i, double letters single, a
final silent e dropped."""


@cache
def _spelling(name: str) -> str:
    for pattern, replacement in _SPELLINGS:
        name = pattern.sub(replacement, name)
    return name


@cache
def _unaccented(name: str) -> str:
    """``name`` without its accents ("zoë" -> "zoe"): people type names without them."""
    if name.isascii():
        return name
    parts = unicodedata.normalize("NFKD", name)
    return "".join(c for c in parts if not unicodedata.combining(c))


def _nicknamed(a: str, b: str) -> bool:
    """Nicknames of the same given name, or of given names spelled alike ("Katie" is Kathryn's
    in the table, and Kathryn is spelled as Katherine is)."""
    given_a, given_b = _given_names(a), _given_names(b)
    if given_a & given_b:
        return True
    return any(_spelled_alike(x, y) for x in given_a - {a} for y in given_b) or any(
        _spelled_alike(a, y) for y in given_b - {b}
    )


@lru_cache(maxsize=8192)  # a query's every word may be asked: bounded
def _given_names(name: str) -> frozenset[str]:
    """``name`` with the given names it is a nickname of (``bob`` -> bob, robert)."""
    return frozenset({name, *_namer().canonicals_of(name)})


@cache
def _namer() -> NickNamer:
    from nicknames import NickNamer  # reads its table (2,700 rows) once, when first asked

    return NickNamer()


def _one_edit_apart(a: str, b: str) -> bool:
    """One insertion, deletion, substitution or swap of neighbours turns ``a`` into ``b``."""
    if abs(len(a) - len(b)) > 1 or a == b:
        return False
    start = 0
    while start < min(len(a), len(b)) and a[start] == b[start]:
        start += 1
    if len(a) == len(b):
        rest_a, rest_b = a[start + 1 :], b[start + 1 :]
        if rest_a == rest_b:
            return True  # one letter changed
        pair_a, pair_b = a[start : start + 2], b[start : start + 2]
        return a[start + 2 :] == b[start + 2 :] and pair_a == pair_b[::-1]  # two swapped
    longer, shorter = (a, b) if len(a) > len(b) else (b, a)
    return longer[start + 1 :] == shorter[start:]
