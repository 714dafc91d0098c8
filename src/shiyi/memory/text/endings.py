"""Statements that end what an earlier one said the user has, does or belongs to.

"I sold my motorbike" ends "I have a motorbike"; "I gave up tennis" ends "I play tennis on
weekends"; "I cancelled my Netflix subscription" ends "I have a Netflix subscription"; "I
quit Google last month" ends "I work at Google"; "I left the choir" ends "I sing in a
choir"; "Chris and I broke up" ends "I'm dating Chris".  Both stayed active before, and
memory believed the user still had the motorbike.

What ended is the ending verb's object, up to a word that says when or why ("last month",
"and joined KPMG").  An earlier statement holds it when it is the user's own plain
statement of having, doing, attending, belonging to or working at something (a verb of
:data:`_HOLDING`), the object's head is what it holds (or names what a subscription, a
membership or a class is to: "I cancelled Spotify" ends "I have a Spotify subscription"),
and every word of the object is among its words.  So another thing ends nothing ("I sold my
old dog crate" after "I have a dog", "I left my golf clubs in the car" after "I play
golf"), nor does leaving for the day ("I left Google early today").

Two endings of one thing, or an ending and a denial of having it ("I left the choir", "I'm
no longer in the choir"), say the same (:func:`ends_alike`).  Words are compared by their
stems (:func:`~shiyi.index.text.stem_word`); everything here is English.
"""

from __future__ import annotations

import re

from shiyi.index.text import stem_word
from shiyi.memory.text.chat_clauses import clauses
from shiyi.memory.text.first_person import said_by
from shiyi.memory.text.short_cache import short_text_cache

_SOON = r"(?:(?:just|finally|recently|already|officially|eventually|then)\s+)?"
_ENDING_VERBS = (
    "sold", "got rid of", "gotten rid of", "gave away", "given away", "gave up on",
    "given up on", "gave up", "given up", "lost",
    "quit", "quitted", "left", "cancelled", "canceled", "dropped out of", "resigned from",
    "retired from", "stopped", "moved out of", "unsubscribed from", "broke off", "broken off",
    "ended", "scrapped", "stepped down from", "walked away from", "closed", "closed down",
    "shut down", "dropped", "handed in my notice at", "gave notice at", "gave my notice at",
    "traded in", "traded", "swapped", "exchanged", "part-exchanged",
)  # fmt: skip
_ALTERNATIVES = "|".join(sorted(map(re.escape, _ENDING_VERBS), key=len, reverse=True))
# "I sold my motorbike", "I've given up golf", "I finally cancelled my subscription", "we
# sold our car" (the user's too).
_ENDED = re.compile(
    rf"^(?:i|we)(?:['’]ve|\s+have)?\s+{_SOON}(?P<verb>{_ALTERNATIVES})\s+(?P<object>\S.*)$",
    re.IGNORECASE,
)
# "The ThinkPad died on me", "My bike got stolen", "Biscuit passed away": the user lost it.
_BROKE = re.compile(
    r"^(?:(?P<owner>my|our|the)\s+(?P<thing>[\w'’ -]{1,40}?)|(?P<name>(?-i:[A-Z])[\w'’-]+))"
    r"\s+(?:(?:just|finally|sadly)\s+)?"
    r"(?:died|passed away|broke down|packed up|packed in|conked out|gave up the ghost|was stolen"
    r"|got stolen|was written off|got written off|was totalled|got totalled)\b",
    re.IGNORECASE,
)
# "Chris and I broke up", "I broke up with Chris", "Dana and I got divorced".
_PARTED = re.compile(
    r"^(?P<first>[A-Z][\w'’-]*)\s+and\s+i\s+(?:have\s+|['’]ve\s+)?"
    rf"{_SOON}(?:broke up|split up|split|separated|got divorced|divorced)"
    r"(?=\s*$|\s*,|\s+(?:last|this|in|on|after|because|since|yesterday|recently|over|when"
    r"|for good|\w+ (?:days|weeks|months|years) ago)\b)"
    r"|^i(?:['’]ve|\s+have)?\s+"
    rf"{_SOON}(?:broke up with|broken up with|split up with|split from|separated from"
    r"|divorced|(?:broke|broken|called) off (?:my|our|the) (?:engagement|wedding) (?:to|with))"
    r"\s+(?P<second>[A-Z][\w'’-]*)",
    re.IGNORECASE,
)
# "I don't have a car anymore", "I'm no longer in the choir": having it denied.
_NOT_HELD = re.compile(
    r"^i(?:['’]m|\s+am)?\s+(?:no longer|not|don['’]?t|do not|never)\s+(?P<rest>\S.*)$",
    re.IGNORECASE,
)
# Verbs (and "I'm ..." forms) of having, doing, attending, belonging to or working at.
_HOLDING = re.compile(
    r"^(?:i|we)(?:['’]ve|\s+have)?(?:\s+(?:still|also|usually|regularly|currently|often|now"
    r"|got))*(?:['’]m|\s+am|['’]re|\s+are)?(?:\s+(?:still|also|currently|now))*\s+"
    r"(?P<verb>have|has|own|play|play in|do|practi[cs]e|go to|attend|take|work at|work for"
    r"|work in|sing in|belong to|volunteer at|volunteer with|volunteer for|subscribe to"
    r"|rent|drive|ride|run|coach|teach|train at|study at|live in|use|smoke|drink|eat|learn"
    r"|pay for|paying for"
    r"|bank with|learning|studying|doing|taking|using|playing|driving|attending|renting"
    r"|a member of|in|on|part of|with|subscribed to|enrolled in|signed up for|signed up to"
    r"|dating|seeing|engaged to|married to|going out with|together with)"
    r"(?:\s+(?P<rest>\S.*))?$",
    re.IGNORECASE,
)
# "I work as a nurse at St James's": where one works is what a leaving ends.
_WORK_AS = re.compile(
    r"^i(?:['’]m|\s+am)?\s+(?:work|working|employed)\s+as\s+[^,]{1,60}?\s+(?:at|for)\s+",
    re.IGNORECASE,
)
# "My car is a Honda Civic": the user has a Honda Civic, a car (what a thing is, by name).
_OWNED_AS = re.compile(
    r"^(?i:my|our)\s+(?P<kind>[a-z]+)\s+is\s+(?:(?:now|still)\s+)?an?\s+(?P<rest>[A-Z].*)$"
)
# What an earlier statement of a relationship says: "I'm in a relationship with Noor".
_TOGETHER = re.compile(
    r"\b(?:dating|seeing|engaged|married|relationship|together|partner|boyfriend|girlfriend"
    r"|husband|wife|fianc[eé]e?|going out)\b",
    re.IGNORECASE,
)
_DROPPED = re.compile(rf"^i(?:['’]ve|\s+have)?\s+{_SOON}dropped\s+(?!out\s+of\b)", re.IGNORECASE)
# How long ago: "two years ago", "a few weeks ago" (the object ends before it).
_AGO = re.compile(
    r"(?<!\S)(?:\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|a few|few|several"
    r"|a couple of)\s+(?:days?|weeks?|months?|years?)\s+ago\b.*$",
    re.IGNORECASE,
)
# When, by the calendar: "in March", "back in 2019", "on Friday" (the object ends before it).
_ON_DATE = re.compile(
    r"(?<!\S)(?:back\s+)?(?:in|on|during|over)\s+(?:the\s+)?(?:january|february|march|april"
    r"|may|june|july|august|september|october|november|december|spring|summer|autumn|fall"
    r"|winter|monday|tuesday|wednesday|thursday|friday|saturday|sunday|\d{4})\b.*$",
    re.IGNORECASE,
)
# A leaving that is only for the day: "I left Google early today", "left the office at six".
_ONE_OFF = re.compile(
    r"\b(?:early|late|today|tonight|this (?:morning|afternoon|evening)|at (?:\d|six|five"
    r"|seven|eight|noon|lunchtime)|for (?:lunch|dinner|the day|the night|the weekend|a while"
    r"|a bit|a few days|a week|a day))\b",
    re.IGNORECASE,
)
# Words after the object that say when, why or what came next: the object ends there.
_OBJECT_ENDS = frozenset(
    {"and", "but", "because", "since", "as", "so", "when", "after", "before", "last", "this",
     "yesterday", "today", "ago", "recently", "now", "anymore", "any", "more", "finally",
     "for", "altogether", "completely", "entirely", "again", "earlier", "already"}
)  # fmt: skip
_NOT_CONTENT = frozenset(
    {"my", "our", "the", "a", "an", "his", "her", "their", "your", "s", "t", "of", "whole",
     "entire", "up", "out", "off", "back", "someone", "called", "named", "longer", "no",
     "never", "don", "do", "not", "am", "m", "ve", "have", "any"}
)  # fmt: skip
# What a thing held is done on, at or with: "tennis on weekends" holds tennis.
_PREPOSITIONS = frozenset(
    {"on", "at", "in", "to", "with", "from", "every", "each", "by", "near", "of", "for",
     "twice", "once", "three", "two"}
)  # fmt: skip
# Things named by what they are to: "I cancelled Spotify" ends "my Spotify subscription".
_CONTAINERS = frozenset(
    stem_word(w)
    for w in ("subscription", "membership", "account", "plan", "class", "classes", "course",
              "lessons", "lesson", "team", "club", "contract", "policy", "pass", "card")
)  # fmt: skip
# Places one belongs to, named by their name alone: "I left St Mary's" ends "I go to St
# Mary's school", where "I quit Google" does not end "I have a Google Pixel".
_INSTITUTIONS = frozenset(
    stem_word(w)
    for w in ("school", "college", "university", "academy", "club", "church", "hospital",
              "gym", "choir", "orchestra", "band", "company", "firm", "bank", "clinic",
              "library", "studio", "society", "union", "league")
)  # fmt: skip
_NAMED = re.compile(r"^(?:(?:my|our|the)\s+)?[A-Z]")
# Whom "my X is Alex" names as the user's own partner.
_PARTNERS = frozenset(
    {"partner", "boyfriend", "girlfriend", "wife", "husband", "fiance", "fiancee", "spouse"}
)
# Words that open a sentence and name no one: "It died down", "Everything broke down".
_NOT_LOST = frozenset({"It", "This", "That", "Everything", "Something", "Nothing", "Someone"})
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?")
_NAMED_THING = "<is a>"


def ends(new: str, old: str) -> bool:
    """Whether ``new`` says the user (or one person: "my brother gave up rugby") ended what
    ``old`` says they have, do or belong to; in any clause of a chatty message ("Traded in
    the Civic last weekend, I'm driving a Tesla now": :mod:`~shiyi.memory.text.chat_clauses`)."""
    return any(_ends_in(_lost(clause), old) for clause in clauses(new))


def _lost(clause: str) -> str:
    """ "The ThinkPad died on me" as "I lost my ThinkPad"; any other clause as it is."""
    broke = _BROKE.match(clause.strip())
    if broke is None or broke.group("name") in _NOT_LOST:
        return clause
    return (
        f"I lost {broke.group('name')}"
        if broke.group("name")
        else f"I lost my {broke.group('thing')}"
    )


def _ends_in(new: str, old: str) -> bool:
    by_new = said_by(new)
    by_old = said_by(old)
    if by_new is not None and not by_new[0] and (name := _parted_name(by_new[1])):
        # "Alex and I broke up" ends "My partner is Alex" too (the partner's sentence), not
        # "My sister is dating Alex"
        mine = by_old is not None and (not by_old[0] or by_old[0] in _PARTNERS)
        return mine and _together_with(old, stem_word(name))
    if by_new is None or by_old is None or by_new[0] != by_old[0]:
        return False  # another person's, or no one's
    return _ends(by_new[1], by_old[1])


def _ends(new: str, old: str) -> bool:
    ended = ended_thing(new)
    if ended and _parted_name(new):  # "Noor and I broke up": together with Noor
        return _together_with(old, ended[0])
    held = _held(old) if ended else None
    if held is None:
        return False
    holding_verb, thing, said = held
    core = tuple(w for w in ended if w not in _CONTAINERS)
    if core != ended and _ended_head(new) in _CONTAINERS and core and set(core) <= set(thing):
        return True  # "I closed my Barclays account" after "I bank with Barclays"
    if not set(ended) <= said:
        return False
    if _ended_doing(new):  # "I gave up smoking", "I stopped taking piano lessons"
        return ended[0] == holding_verb
    head = _ended_head(new)
    if _DROPPED.match(_plain(new)) and head not in _CONTAINERS:
        return False  # "I dropped my phone" ends nothing; "I dropped the course" does
    if holding_verb == _NAMED_THING:  # "I sold my Civic" or "... my car": either names it
        return head in thing
    if thing and thing[-1] in _INSTITUTIONS and _NAMED.match(_ended_object(new)):
        return set(ended) <= set(thing)  # "I left St Mary's": "I go to St Mary's school"
    return bool(thing) and (head == thing[-1] or (thing[-1] in _CONTAINERS and head in said))


def ended_within(new: str, old: str) -> bool:
    """Whether what ``new`` ends is all named in ``old`` ("Cancelled Spotify" and "I pay for
    Spotify Premium"), whether or not ``old`` is a statement of holding it; never for "I
    sold my Tesla shares" and "I have a Tesla" (the shares are not in it)."""
    ended = ended_thing(new)
    return bool(ended) and set(ended) <= set(_stems(_plain(old)))


def _together_with(old: str, name: str) -> bool:
    """Whether ``old`` says the user is in a relationship with ``name`` ("I'm seeing Noor",
    "Noor and I are engaged")."""
    sentence = _plain(old)
    if _ends_or_denies(sentence):
        return False
    return bool(_TOGETHER.search(sentence)) and name in _stems(sentence)


def ends_alike(new: str, old: str) -> bool:
    """Whether ``new`` and ``old`` both say that one thing ended or is not had: "I gave up
    smoking" and "I stopped smoking"; "I left the choir" and "I'm no longer in the choir"."""
    by_new, by_old = said_by(new), said_by(old)
    if by_new is None or by_old is None or by_new[0] != by_old[0]:
        return False
    new, old = by_new[1], by_old[1]
    thing = ended_thing(new) or _not_held(new)
    if not thing or _held(new) is not None or _held(old) is not None:
        return False
    return thing == (ended_thing(old) or _not_held(old))


@short_text_cache
def ended_thing(text: str) -> tuple[str, ...]:
    """The stems of what ``text`` says the user (or someone: "Ana cancelled her plan")
    ended ("my Netflix subscription": netflix, subscript); () when it ends nothing."""
    for clause in clauses(text):
        said = said_by(_lost(clause))
        plain = said[1] if said is not None else clause
        if name := _parted_name(plain):
            return (stem_word(name),)
        if found := _ended_object(plain):
            return _thing(found)
    return ()


def _ended_object(text: str) -> str:
    """The words after the ending verb ("my flat in Leith"); "" when nothing ended."""
    found = _ENDED.match(_plain(text))
    if found is None:
        return ""
    verb, thing = found.group("verb").casefold(), found.group("object")
    if verb == "left" and _ONE_OFF.search(thing):
        return ""
    if verb in ("dropped", "stopped") and thing.casefold().startswith(("off ", "by ", "in ")):
        return ""  # "I dropped off the cake at the shelter", "I stopped by for a bit"
    return thing


def _ended_head(text: str) -> str:
    """The head of what ended, before any preposition ("my flat in Leith": flat); a name
    parted from is its own head."""
    if name := _parted_name(text):
        return stem_word(name)
    thing = _thing(_ended_object(text), held=True)
    return thing[-1] if thing else ""


def _ended_doing(text: str) -> bool:
    """Whether what ended is a doing ("smoking", "taking piano lessons"), not a thing ("the
    running club")."""
    words = _ended_object(text).split(maxsplit=1)
    return bool(words) and words[0].casefold().endswith("ing") and len(words[0]) > 4


def _parted_name(text: str) -> str:
    """Whom ``text`` says the user parted from ("Noor and I broke up": Noor); "" if no one."""
    parted = _PARTED.match(_plain(text))
    return (parted.group("first") or parted.group("second")) if parted else ""


def _ends_or_denies(sentence: str) -> bool:
    return bool(_NOT_HELD.match(sentence) or _ENDED.match(sentence) or _PARTED.match(sentence))


@short_text_cache
def _not_held(text: str) -> tuple[str, ...]:
    """The stems of what ``text`` denies the user has ("I'm no longer in the choir": choir;
    "I don't eat meat anymore": meat); () for anything else."""
    denied = _NOT_HELD.match(_plain(text))
    if denied is None:
        return ()
    held = _held("I " + denied.group("rest"))
    if held is not None:
        return held[1] or (held[0],)
    return _thing(_strip_verb(denied.group("rest")))


@short_text_cache
def _held(text: str) -> tuple[str, tuple[str, ...], frozenset[str]] | None:
    """What a plain positive statement says the user holds: its verb's stem, the stems of
    the thing held, and the stems of all its words; None for anything else."""
    sentence = _plain(text)
    if _ends_or_denies(sentence):
        return None
    said = frozenset(_stems(sentence))
    if owned := _OWNED_AS.match(sentence):  # the thing by its name, then by its kind
        named = tuple(w for w in _thing(owned.group("rest"), held=True) if not w.isdigit())
        return _NAMED_THING, (*named, stem_word(owned.group("kind").casefold())), said
    found = _HOLDING.match(_WORK_AS.sub("I work at ", sentence))
    if found is None:
        return None
    verb = stem_word(found.group("verb").split()[0])
    return verb, _thing(found.group("rest") or "", held=True), said


def _thing(words: str, held: bool = False) -> tuple[str, ...]:
    """Content stems from the start of ``words`` to the first word saying when or why; a
    thing ``held`` ends at its first preposition too ("tennis on weekends")."""
    kept: list[str] = []
    for word in _WORD.findall(_ON_DATE.sub("", _AGO.sub("", words)).replace("’", "'")):
        lower = word.casefold().removesuffix("'s")
        if lower in _OBJECT_ENDS or (held and kept and lower in _PREPOSITIONS):
            break
        if lower not in _NOT_CONTENT and lower not in _PREPOSITIONS:
            kept.append(stem_word(lower))
    return tuple(kept)


def _stems(sentence: str) -> list[str]:
    words = (w.casefold().removesuffix("'s") for w in _WORD.findall(sentence.replace("’", "'")))
    return [stem_word(w) for w in words if w not in _NOT_CONTENT and w not in _PREPOSITIONS]


def _strip_verb(rest: str) -> str:
    """ "eat meat anymore": "meat anymore" (a denied verb of no holding form)."""
    return rest.split(maxsplit=1)[1] if len(rest.split()) > 1 else rest


def _plain(text: str) -> str:
    return text.strip().rstrip(" .!")
