"""Slot identity: which stored facts are versions of the same attribute of the same subject.

A slot is (attribute, subject, scope, owner), however the extraction model worded it:

* **subject**: the ``about`` entities that are not the fact's value/object.  A model writes
  ``about: ["Berlin"]`` for "I live in Berlin" and ``about: ["Paris"]`` for "I moved to
  Paris"; Berlin and Paris appear in the values, so neither defines the slot.  No entity
  left, or only the user ("user", "me", the user's name): the subject is the user.  Keys of
  many-valued attributes ("likes", "hobbies", "speaks") keep the value's entities in the
  subject: "likes sushi" and "likes ramen" are two facts, not two versions.
  In an imported conversation between named people, "I" is the speaker: a fact from
  Caroline's turn about no one else is about Caroline (:func:`speaking_for`).
* **attribute**: the normalised key, where differently worded keys of a known attribute
  ("lives_in", "city", "home city", "current city", "residence") are one attribute, and an
  unlisted key is its core: qualifiers dropped wherever they stand, one spelling, a singular
  head ("my budget", "budget (current)"; "favorite color", "preferred colours").

Why known attributes and not "keys whose embeddings are close": measured with the local
all-MiniLM-L6-v2 on bare keys, same-attribute pairs score as low as 0.41 ("current city" /
"residence"), 0.44 ("lives in" / "current city"), 0.48 ("lives in" / "city"), while
different attributes score higher: "lives in" / "works in" 0.59, "employer" / "employee"
0.77, "pet" / "pet name" 0.79, "home city" / "work city" 0.67.  No pairwise threshold joins
the first and keeps the second apart.  Nearest-exemplar classification does: a key joins
attribute A when its best cosine to A's exemplars is at least :data:`ATTRIBUTE_SIMILARITY`
and beats every other attribute's (including the look-alike attributes listed so that they
are *not* joined: favourite city, travel, a second home, relatives, colleagues, nicknames)
by :data:`ATTRIBUTE_MARGIN`.  On keys written apart from the exemplars (held out) that
joined "lives at" 0.77, "living location" 0.73, "home base" 0.68, "employer company" 0.90,
"company works at" 0.74 and refused "likes city" (margin 0.04), "office address" (0.02),
"current home" (0.02); every look-alike went to its own attribute or below 0.65.  Without an
embedder only the exemplars themselves (modifiers such as "current"/"home" dropped) join.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from shiyi.memory.protocol import Embedder
from shiyi.memory.text.entities import normalize_name
from shiyi.memory.text.subjects import DETERMINERS, subject_of

ATTRIBUTE_SIMILARITY = 0.65
ATTRIBUTE_MARGIN = 0.05

# Attribute -> exemplar keys; the first is the key new versions are stored under when the
# subject is the user (so later lookups by key find every version).  Names starting with
# "-" are look-alikes: a key nearest to one of them joins nothing.
ATTRIBUTES: dict[str, tuple[str, ...]] = {
    "residence": ("lives in", "city", "residence", "address", "location", "based in", "home",
                  "place of residence", "living in"),
    "workplace": ("works at", "works in", "employer", "company", "workplace", "job location",
                  "office"),
    "occupation": ("job", "job title", "occupation", "profession", "role", "position"),
    "birthplace": ("born in", "birthplace", "place of birth", "hometown"),
    "partner": ("partner", "spouse", "husband", "wife", "girlfriend", "boyfriend",
                "married to"),
    "school": ("studies at", "school", "university", "college"),
    "age": ("age", "years old"),
    "birthday": ("birthday", "date of birth", "born on"),
    "name": ("name", "called"),
    "-travel": ("travelling to", "trip to", "vacation", "visited", "wants to visit",
                "holiday destination", "moving to", "plans to move"),
    "-favourite place": ("favourite city", "favourite place", "dream city",
                         "favourite country"),
    "-second home": ("vacation home", "holiday home", "second home", "summer house"),
    "-relatives": ("sister", "brother", "mother", "father", "parents", "family"),
    "-work location": ("work city", "office city", "commute"),
    "-staff": ("employee", "colleague", "coworker", "manager", "boss"),
    "-nickname": ("nickname", "username", "pet name"),
    "-hobby": ("hobby", "hobbies", "interests", "sport"),
}  # fmt: skip

# Words that qualify a key without changing the attribute ("current city" is "city").
_MODIFIERS = frozenset(
    {"current", "currently", "present", "now", "my", "user", "users", "the", "a", "an", "of",
     "his", "her", "their", "primary", "main", "home", "s", "new", "latest", "updated"}
)  # fmt: skip


# A key's possessor ("Ana's city", "my sister's job", "parents' address"): the slot's subject.
# The last possessive: "the user's sister's city" is the sister's.
# The owner starts at a non-space: "\s*" and ".+" both taking spaces was quadratic.
_POSSESSIVE = re.compile(r"^\s*(?P<owner>\S.*)(?:['’]s|(?<=s)['’])\s+[^'’\s][^'’]*$", re.UNICODE)
_HOLDER = re.compile(r"^(?P<holder>.+?)(?:['’]s|(?<=s)['’])$")
# A time is no subject: "today's plan" is the user's plan for a day, not a plan of "today".
_TIME_WORDS = frozenset(
    {"today", "tomorrow", "yesterday", "tonight", "day", "week", "weekend", "month", "year",
     "morning", "afternoon", "evening", "night", "season", "quarter", "semester", "term",
     "this", "next", "last", "monday", "tuesday", "wednesday", "thursday", "friday",
     "saturday", "sunday", "january", "february", "march", "april", "may", "june", "july",
     "august", "september", "october", "november", "december", "spring", "summer", "autumn",
     "fall", "winter", "christmas", "weekday"}
)  # fmt: skip


def key_owner(key: str, users: Iterable[str]) -> str:
    """Whom a key's possessive names, as written ("Ana's city" -> "Ana", "my sister's job"
    -> "sister"); "" when it names none, the user ("user's city") or a time ("today's
    plan").  Written without an ``about`` (a user's ``--key "Ana's city"``), such a fact was
    taken for the user's own city and replaced it."""
    match = _POSSESSIVE.match(key)
    if match is None:
        return ""
    users = set(users)
    words = match.group("owner").split()
    # "my sister", "the user's sister": the sister
    while words and (words[0].casefold() in DETERMINERS or _users(words[0], users)):
        words = words[1:]
    folded = [w.casefold() for w in words]
    if not words or any(w in _TIME_WORDS or w.isdigit() for w in folded):
        return ""
    owner = " ".join(words)
    return "" if _is_user(owner, users) else owner


def _users(word: str, users: set[str]) -> bool:
    """A possessive of the user's ("user's", "users'", "Lena's" for a user named Lena)."""
    holder = _HOLDER.match(word)
    return holder is not None and _is_user(holder.group("holder"), users)


def _is_user(name: str, users: set[str]) -> bool:
    normal = normalize_name(name)
    return normal in users or normal.removesuffix("s") in users  # "users' city"


def normalize_key(key: str) -> str:
    """``Lives_In``, ``lives in`` and `` lives-in `` are one slot, stored as ``lives in``
    (words, so the keyword path can match them)."""
    return " ".join(re.sub(r"[\W_]+", " ", key.lower(), flags=re.UNICODE).split())


def _core(key: str) -> str:
    """The key without its modifiers, wherever they stand ("home city", "city (current)"
    -> "city"; the key itself if nothing else is left: "home" stays "home"), spelled one
    way ("favorite color" -> "favourite colour") and with its head noun singular
    ("hobbies" -> "hobby")."""
    kept = _tidy(key).split()
    return " ".join([*kept[:-1], _singular(kept[-1])]) if kept else ""


def _tidy(key: str) -> str:
    """The key without its modifiers and spelled one way, its words otherwise as written:
    what an unlisted key is stored under ("my favorite colors" -> "favourite colors"; a
    verb such as "likes" is not made a singular noun)."""
    words = normalize_key(key).split()
    return " ".join([_SPELLING.get(w, w) for w in words if w not in _MODIFIERS] or words)


def _plural(core: str) -> str:
    """The regular plural of ``core``'s head noun: a key an older version may carry."""
    head = core.rsplit(" ", 1)[-1]
    if not head or head.endswith("s"):
        return core
    if head.endswith("y") and len(head) > 2 and head[-2] not in "aeiou":
        return core[:-1] + "ies"
    return core + ("es" if head.endswith(("ch", "sh", "x")) else "s")


# American and British spellings of one word, and words that say "favourite" ("preferred
# food" is "favourite food"): variants of the wording, not different attributes.
_SPELLING = {
    "favorite": "favourite", "favorites": "favourites", "fave": "favourite",
    "favourite": "favourite", "preferred": "favourite", "color": "colour",
    "colors": "colours", "flavor": "flavour", "flavors": "flavours", "honor": "honour",
    "humor": "humour", "neighbor": "neighbour", "neighborhood": "neighbourhood",
    "behavior": "behaviour", "center": "centre", "theater": "theatre", "program": "programme",
    "organization": "organisation", "license": "licence", "mom": "mum", "gray": "grey",
}  # fmt: skip
_NOT_PLURAL = ("ss", "us", "is", "ous", "ics")


def _singular(word: str) -> str:
    """A plural's singular by the regular rules ("hobbies" -> "hobby", "hours" -> "hour");
    words that only end like one ("status", "address", "physics") stay."""
    if len(word) <= 3 or not word.endswith("s") or word.endswith(_NOT_PLURAL):
        return word
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "xes", "sses")):
        return word[:-2]
    return word[:-1]


_SPELLED = {
    normal: [w for w, same in _SPELLING.items() if same == normal and w != normal]
    for normal in _SPELLING.values()
}


def _spellings(core: str) -> list[str]:
    """``core`` as other spellings write it ("favourite colour" -> "favorite color", ...;
    a few at most): keys an older store may hold."""
    found = [""]
    for word in core.split():
        found = [f"{done} {w}".strip() for done in found for w in [word, *_SPELLED.get(word, [])]]
    return list(dict.fromkeys(found))[:16]


def _qualified(core: str) -> list[str]:
    """Keys an older store may hold for ``core``: with a modifier before or after it."""
    return [f"{m} {core}" for m in sorted(_MODIFIERS)] + [f"{core} {m}" for m in sorted(_MODIFIERS)]


_LEXICAL = {_core(k): name for name, keys in ATTRIBUTES.items() for k in keys}


# Keys of attributes with many values at once ("likes: sushi", "likes: ramen"): there the
# value's entity does tell the facts apart, as it did before slots ignored value entities.
_MANY_VALUED = frozenset(
    {"like", "likes", "love", "loves", "enjoy", "enjoys", "dislike", "dislikes", "hate",
     "hates", "has", "have", "own", "owns", "play", "plays", "speak", "speaks", "know", "knows",
     "visited", "visit", "use", "uses", "want", "wants", "interest", "interests", "interested",
     "hobby", "hobbies", "skill", "skills", "language", "languages", "allergy", "allergies",
     "allergic", "pet", "pets", "friend", "friends", "child", "children", "kids", "tool",
     "tools"}
)  # fmt: skip


def many_valued(key: str) -> bool:
    """A key naming one of several values ("likes", "hobbies", "speaks"), by its first word."""
    words = normalize_key(key).split()
    return bool(words) and words[0] in _MANY_VALUED


_SPECIFIC = re.compile(r"\d|\b(of|for|at work|in the)\b")


def _plain(key: str) -> bool:
    """Whether an unlisted key may be placed by embedding: short, and not the attribute of
    something it names ("home city of project 4", "editor 2"), which MiniLM would place by
    its head word alone."""
    return len(key.split()) <= _MAX_PLACED_WORDS and not _SPECIFIC.search(key)


_MAX_PLACED_WORDS = 3


def speaking_for(about: list[str], value: str, speaker: str, users: set[str]) -> list[str]:
    """``about`` of a fact stated by a named speaker (normalised names): there "I", "me"
    and "the user" are the speaker, and a fact about no one else is about the speaker, so
    ``[]``, ``["user"]`` and ``["Caroline"]`` from Caroline's turn are one subject, apart
    from what the other speaker says about themself."""
    name = normalize_name(speaker)
    if not name or name in users:
        return about
    mine = list(dict.fromkeys(name if a in users else a for a in about))
    return mine if subject_of(mine, value, users) else [*mine, name]


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


@dataclass(slots=True, frozen=True)
class Attribute:
    """What a key names: a known attribute (``name``) or only itself (``name`` == '')."""

    name: str
    key: str
    """The normalised key as written."""

    @property
    def core(self) -> str:
        """The key's wording-free form (see :func:`_core`): what an unlisted key is."""
        return _core(self.key)

    @property
    def canonical(self) -> str:
        """The key a first user-subject version is stored under: the key as written when it
        is one of the attribute's exemplars, qualified or not ("home city"), else the
        attribute's first one; an unlisted key tidied ("my budget" -> "budget").
        :attr:`lookup_keys` then finds every version by key."""
        if not self.name:  # a key naming something specific keeps its wording
            return self.key if _SPECIFIC.search(self.key) else _tidy(self.key)
        exemplars = ATTRIBUTES[self.name]
        return self.key if _core(self.key) in exemplars else exemplars[0]

    @property
    def lookup_keys(self) -> list[str]:
        """Keys under which versions of this attribute may be stored (older stores kept
        whatever key the model wrote, qualified or not)."""
        if not self.name:
            bare = " ".join(w for w in self.key.split() if w not in _MODIFIERS) or self.key
            spelled = _spellings(self.core)
            cores = list(dict.fromkeys([self.core, bare, *spelled, *map(_plural, spelled)]))
            variants = [k for c in cores for k in _qualified(c)]
            # the key as written, its head noun in the other number ("number of cat(s)")
            *lead, head = self.key.split() or [""]
            numbered = [" ".join([*lead, _singular(head)]), _plural(self.key)]
            return list(dict.fromkeys([self.canonical, self.key, *numbered, *cores, *variants]))
        exemplars = ATTRIBUTES[self.name]
        qualified = [k for e in exemplars for k in _qualified(e)]
        return list(dict.fromkeys([self.canonical, self.key, *exemplars, *qualified]))

    def same(self, other: Attribute) -> bool:
        """One attribute: the same known one, or unlisted keys with the same core."""
        return (self.name or self.core) == (other.name or other.core) if self.key else False


class AttributeResolver:
    """Key -> :class:`Attribute`, by the exemplar table, then by embedding (cached)."""

    def __init__(self, embedder: Embedder | None) -> None:
        self.embedder = embedder
        self._known: dict[str, Attribute] = {}
        self._exemplars: list[tuple[str, Sequence[float]]] | None = None

    def __call__(self, key: str) -> Attribute:
        normal = normalize_key(key)
        found = self._known.get(normal)
        if found is None:
            found = Attribute(self._classify(normal), normal)
            self._known[normal] = found
        return found

    def _classify(self, key: str) -> str:
        if not key:
            return ""
        core = _core(key)
        name = _LEXICAL.get(core)
        if name is None and self.embedder is not None and _plain(key):
            name = self._nearest(core)  # "studying (current)" is placed as "studying"
        return "" if name is None or name.startswith("-") else name

    def _nearest(self, key: str) -> str | None:
        assert self.embedder is not None
        if self._exemplars is None:
            pairs = [(name, k) for name, keys in ATTRIBUTES.items() for k in keys]
            vectors = self.embedder.embed([k for _, k in pairs])
            self._exemplars = [(name, v) for (name, _), v in zip(pairs, vectors, strict=True)]
        [query] = self.embedder.embed([key])
        best: dict[str, float] = {}
        for name, vector in self._exemplars:
            best[name] = max(best.get(name, -1.0), _cosine(query, vector))
        ranked = sorted(best.items(), key=lambda item: item[1], reverse=True)
        (first, score), (_, second) = ranked[0], ranked[1]
        if score >= ATTRIBUTE_SIMILARITY and score - second >= ATTRIBUTE_MARGIN:
            return first
        return None
