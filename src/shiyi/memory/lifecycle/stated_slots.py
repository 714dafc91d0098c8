"""The slot a plain statement sets when it is remembered without a key.

``shiyi memory add "My favourite colour is green"`` (or a model's ``remember`` call without a
``key``) used to store a fact of no slot: the earlier "My favourite colour is blue" stayed
active beside it, and memory believed both.  A statement of one of a few plain shapes now
names its slot itself:

* a possessed attribute: "my favourite colour is green", "our budget is 4,000 euros",
  "Ana's birthday is on May 3", "my sister's city is Porto" (the sister's slot);
* a subject and a verb of residence, work, study or partnership: "I live in Munich",
  "I moved to Munich", "Ana works at Siemens", "my brother works as a nurse",
  "I no longer work at Siemens", "I started a new job at Stripe", "I'm married to Sam",
  "I'm 34", "call me Jo".  A name beside a relation is the subject: "my sister Ana lives in
  Porto" and "Ana, my sister, lives in Porto" are Ana's slot, so "Ana moved to Lisbon"
  replaces them and the user's own city stays.

"We" includes the user ("we moved to Bristol"), unless it is a company ("we're based in
London").  Roundabout forms are read as the plain statement they amount to first ("I switched
gyms to X" is "my gym is X": :mod:`~shiyi.memory.lifecycle.plain_forms`), and so is the last
clause after one saying what changed ("Ian isn't my coach anymore, my coach is Rhona").
Chinese statements of the same two shapes name theirs too
(:mod:`~shiyi.memory.lifecycle.stated_chinese`).

Only attributes are slotted, never people or things: "my sister is Ana" and "my sister is
kind" describe a person, and "my car is red" and "my car is in the shop" describe a car;
the newer must not replace the older.  An occupation is an attribute ("I'm a nurse", "my
sister is a doctor": the ``job`` slot, as "I work as a nurse" is; see
:mod:`~shiyi.memory.text.occupations`), what one is otherwise is not ("I'm a runner").
An attribute is a known one (the exemplar table of :mod:`~shiyi.memory.lifecycle.slots`),
a key led by a word that picks one value out of many
("favourite", "usual", "current"), or a key whose head noun names a property
(:data:`_PROPERTY_NOUNS`); whom or where one has one of (:data:`_PROVIDERS`: "my manager",
"my gym") when the value is a name.  Anything else (several sentences, "he", a question)
keeps no slot, as before: a missed slot leaves two facts side by side; a wrong one would replace
a true fact.
"""

from __future__ import annotations

import re

from shiyi.memory.lifecycle.plain_forms import plain_form
from shiyi.memory.lifecycle.slot_reading import StatedSlot, Subject, VerbRules, by_verb
from shiyi.memory.lifecycle.slots import ATTRIBUTES, normalize_key
from shiyi.memory.lifecycle.stated_chinese import HAN as _HAN
from shiyi.memory.lifecycle.stated_chinese import ZH_LEAD as _ZH_LEAD
from shiyi.memory.lifecycle.stated_chinese import chinese as _chinese
from shiyi.memory.text.counts import numbers_in
from shiyi.memory.text.occupations import ROLE
from shiyi.memory.text.short_cache import short_text_cache
from shiyi.memory.text.subjects import KIN

# Words before the statement that say nothing about it ("Actually, ...", "Remember that ...").
_LEADS = (
    "actually", "now", "so", "well", "oh", "ok", "okay", "also", "and", "but", "btw", "yes",
    "yeah", "yep", "indeed",
    "by the way", "fyi", "for the record", "just so you know", "correction", "update", "note",
    "note that", "please note that", "remember", "remember that", "please remember",
    "please remember that", "keep in mind that", "don't forget that", "dont forget that",
    "these days", "nowadays", "currently", "lately", "as of now", "as of today", "from now on",
    "starting today", "going forward",
)  # fmt: skip
_LEAD = re.compile(
    r"^(?:" + "|".join(sorted(map(re.escape, _LEADS), key=len, reverse=True)) + r")\b[\s,:;-]*",
    re.IGNORECASE,
)
# A sentence boundary inside the text: several statements are not one slot's value.
_SEVERAL = re.compile(r"[.!?;]\s+\S|[。！？；]\s*\S|\n")
# From a run of spaces' first only: a start inside the run rescanned it (quadratic).
_COPULA = re.compile(
    r"(?<!\s)\s+(?:is|are|was|has become|has changed to|is now|are now|changed to"
    r"|(?:went|has gone|is going) (?:up|down) to|(?:rose|fell|dropped|increased|decreased"
    r"|moved|was moved|got moved|has moved) to)\s+",
    re.IGNORECASE,
)
_POSSESSIVE = re.compile(r"['’]s\b|(?<=s)['’](?=\s)")
# "Call me Li" names the user; "call me tomorrow" does not.
_CALL_ME = re.compile(
    r"^(?i:(?:please\s+)?call\s+me)\s+(?P<name>[A-Z][\w'’-]*(?:\s+[A-Z][\w'’-]*)?)$"
)
_NAME = r"[A-Z][\w-]*(?:\s+[A-Z][\w-]*)?"
# Subjects the verb rules accept: "I", "my <relative or friend>" (see KIN), a name.
# "We live in Leeds", "we got married": what holds of "we" holds of the user, unless "we"
# is where they work.
_WE_ARE_A_BUSINESS = re.compile(
    r"^(?:['’]re|\s+are)?\s+(?:based|headquartered|located|work\s+with|hiring)\b",
    re.IGNORECASE,
)
_ME = re.compile(r"^(?:i|we)(?=\s|['’])", re.IGNORECASE)
_MY = re.compile(r"^(?:my|our)\s+", re.IGNORECASE)
_NAMED = re.compile(rf"^{_NAME}(?=,?\s)")
_NOT_NAMES = frozenset(
    {"he", "she", "it", "we", "they", "you", "this", "that", "there", "the", "a", "an",
     "my", "our", "your", "his", "her", "their", "everyone", "someone", "nobody", "who",
     "what", "where", "when", "why", "how", "do", "does", "did", "is", "are", "can"}
)  # fmt: skip
_BE = r"(?:\s+am|['’]m|\s+is|['’]s|\s+are|['’]re)"
_NOW = r"(?:\s+(?:now|currently|still|just|recently|actually|finally|already))?"
_NO_LONGER = r"(?:\s+(?:no longer|don'?t|do not|doesn'?t|does not))?"
_HOW = r"(?:\s+(?:remotely|full[- ]time|part[- ]time|freelance|from home))?"
_HAVE = r"(?:\s+have|['’]ve|\s+has)"
# "I like coffee", "I don't like coffee anymore", "I really love jazz", "she hates jazz".
_FEELS = re.compile(
    rf"^{_NOW}{_NO_LONGER}(?:\s+(?:really|still|actually|totally|kind of|kinda))?\s+"
    r"(?P<verb>(?:like|likes|love|loves|enjoy|enjoys|hate|hates|dislike|dislikes))\s+"
    r"(?P<thing>[\w'’-]+(?:\s+[\w'’-]+){0,3}?)"
    r"(?:\s+(?:anymore|any more|now|again|too|as well|a lot|very much|so much|either))*$",
    re.IGNORECASE,
)
_NOT_THINGS = frozenset(
    {"it", "this", "that", "them", "him", "her", "you", "me", "us", "those", "these", "to",
     "what", "how", "when", "the idea", "it here"}
)  # fmt: skip
# "I have two cats", "I've got 3 kids", "my sister has a dog now".
_HOLDS = re.compile(
    rf"^{_NOW}(?:\s+(?:have|has)\s+got|['’]ve\s+got|\s+(?:have|has|own|owns)){_NOW}\s+"
    r"(?P<count>a|an|one|no|\d{1,4}|[a-z]+(?:-[a-z]+)?)\s+"
    r"(?P<thing>[a-z]+(?:\s+[a-z]+){0,2}?)"
    r"(?:\s+(?:now|again|still|too|as well|in total|altogether|these days|at home"
    r"|at the moment|right now))*$",
    re.IGNORECASE,
)
# When a value was said to hold: "I'm 35 now", "I turned 31 today".
_WHEN = (
    r"(?:\s+(?:now|today|yesterday|already|again|this\s+(?:week|month|year)"
    r"|last\s+(?:week|weekend|month|year)|on\s+\w+|in\s+(?-i:[A-Z])\w+|in\s+\d{4}))?"
)
# "I don't have a dog anymore", "I no longer own a car": none now.
_HOLDS_NONE = re.compile(
    r"^(?:\s+(?:no longer|do not|does not)|\s+(?:don|doesn)['’]?t)\s+(?:have|has|own|owns)"
    r"\s+(?:a|an|any)\s+(?P<thing>[a-z]+(?:\s+[a-z]+)??)"
    r"(?:\s+(?:anymore|any more|now|at all|these days))*$",
    re.IGNORECASE,
)
# "I sold my car", "I got rid of the boat last summer": none now (what ended is kept whole:
# "I sold my old dog crate" counts no dogs).
_LET_GO = re.compile(
    rf"^(?:['’]ve|\s+have|\s+has)?{_NOW}\s+(?:sold|got rid of|gotten rid of|gave away"
    r"|given away|scrapped)\s+(?:my|our|the|his|her|their)\s+(?P<thing>[a-z]+(?:\s+pig)?)"
    r"(?:\s+(?:last\s+\w+|this\s+\w+|yesterday|today|recently|already|finally|now"
    r"|a\s+\w+\s+ago|\w+\s+(?:days|weeks|months|years)\s+ago))*$",
    re.IGNORECASE,
)
# What one eats, and whether one is married: closed sets, one value at a time.
_DIETS = (
    r"(?:vegetarian|vegan|pescatarian|pescetarian|flexitarian|omnivore|carnivore"
    r"|plant[- ]based|keto|paleo)"
)
_WED = r"(?:married|divorced|engaged|separated)"
_MARITAL = r"(?:single|married|divorced|engaged|separated|widowed|in a relationship)"
# What may follow an occupation: where or for whom, and when ("a nurse at St Mary's now").
_ROLE_TAIL = (
    r"(?:\s+(?:at|for|in|with)\s+[^,;]+?)?"
    r"(?:\s+(?:now|these days|nowadays|currently|again|too|as well|full[- ]time"
    r"|part[- ]time|by trade|by profession))*"
)
_TOOK = r"(?:started|got|gotten|took|taken|landed|accepted|begun|began)"
_JOB = r"(?:job|position|role)"
_VERBS: VerbRules = tuple(
    (key, re.compile(pattern, re.IGNORECASE))
    for key, pattern in (
        ("lives in", rf"^{_NOW}{_NO_LONGER}\s+(?:live|lives|reside|resides)\s+in\s+\S"),
        ("lives in", rf"^{_BE}{_NOW}\s+(?:living|residing|based|settled)\s+in\s+\S"),
        ("lives in", rf"^(?:\s+have|['’]ve|\s+has){_NOW}\s+(?:moved|relocated)\s+to\s+\S"),
        ("lives in", rf"^{_NOW}\s+(?:moved|relocated)\s+(?:back\s+)?to\s+\S"),
        ("works at", rf"^{_NOW}{_NO_LONGER}\s+(?:work|works){_HOW}\s+(?:at|for)\s+\S"),
        ("works at", rf"^{_HAVE}?{_NOW}\s+{_TOOK}\s+(?:a\s+)?(?:new\s+)?{_JOB}\s+(?:at|with)\s+\S"),
        ("works at", rf"^{_HAVE}(?:\s+got)?\s+a\s+new\s+{_JOB}\s+(?:at|with)\s+\S"),
        ("works at", rf"^{_NOW}\s+started\s+working\s+(?:at|for)\s+\S"),
        ("works at", rf"^{_NOW}\s+(?:quit|left)\s+my\s+{_JOB}\s+(?:at|with)\s+\S"),
        ("works at", rf"^{_BE}{_NOW}\s+(?:working|employed)\s+(?:at|for|by)\s+\S"),
        ("job", rf"^{_NOW}{_NO_LONGER}\s+(?:work|works)\s+as\s+\S"),
        ("job", rf"^{_BE}{_NOW}\s+working\s+as\s+\S"),
        ("job", rf"^{_BE}{_NOW}\s+(?={ROLE}{_ROLE_TAIL}$)\S"),
        ("studies at", rf"^{_NOW}\s+(?:study|studies)\s+at\s+\S"),
        ("studies at", rf"^{_BE}{_NOW}\s+(?:studying|enrolled)\s+at\s+\S"),
        ("partner", rf"^{_BE}{_NOW}\s+(?:married|engaged)\s+to\s+\S"),
        ("partner", rf"^{_BE}{_NOW}\s+dating\s+\S"),
        ("partner", rf"^{_BE}{_NOW}\s+(?:going out with|in a relationship with)\s+(?-i:[A-Z])"),
        ("age", rf"^{_BE}{_NOW}\s+\d{{1,3}}(?:\s+years?\s+old|\s+yo)?{_WHEN}$"),
        ("age", rf"^{_BE}{_NOW}\s+[a-z]+(?:[\s-][a-z]+)?\s+years?\s+old{_WHEN}$"),
        ("diet", rf"^{_BE}{_NOW}\s+(?:an?\s+)?(?P<value>{_DIETS}){_WHEN}$"),
        ("marital status", rf"^{_BE}{_NOW}\s+(?P<value>{_MARITAL}){_WHEN}$"),
        ("partner", rf"^{_NOW}\s+got\s+(?:married|engaged)\s+to\s+(?-i:[A-Z])"),
        (
            "marital status",
            rf"^{_NOW}\s+got\s+(?P<value>married|divorced|engaged|separated){_WHEN}$",
        ),
        ("age", rf"^{_NOW}\s+(?:turned|turns)\s+\d{{1,3}}(?:\s+years?\s+old)?{_WHEN}$"),
        ("name", rf"^{_BE}{_NOW}\s+(?:called|named)\s+(?-i:[A-Z])"),
    )
)
# A key led by one of these picks one value out of many: "favourite food", "usual order".
_ONE_OF_MANY = frozenset(
    {"favourite", "favorite", "fave", "preferred", "usual", "current", "default", "main",
     "primary", "go-to", "go", "latest", "home", "work", "personal", "target"}
)  # fmt: skip
# Head nouns that name a property rather than a person or a thing.
_PROPERTY_NOUNS = frozenset(
    {"name", "nickname", "age", "birthday", "birthdate", "email", "e-mail", "phone",
     "number", "address", "city", "country", "town", "hometown", "budget", "deadline", "goal",
     "plan", "plans", "job", "occupation", "profession", "title", "role", "salary", "income",
     "height", "weight", "size", "timezone", "zone", "schedule", "diet", "religion",
     "nationality", "pronouns", "username", "handle", "colour", "color", "rent", "status",
     "score", "rank", "level", "grade", "major", "degree", "team", "position", "shift",
     "bedtime", "routine", "time", "date", "day", "price", "cost", "editor", "shell", "os",
     "language", "style", "setup", "stack", "workflow", "password", "pin", "code", "id",
     "account", "location", "employer", "company", "school", "university", "college",
     "anniversary", "appointment", "limit", "quota", "preference", "choice", "pick", "rate",
     "pace", "speed", "fee", "dose", "dosage", "pressure", "temperature", "frequency"}
)  # fmt: skip
_KNOWN_KEYS = frozenset(
    normalize_key(k) for name, keys in ATTRIBUTES.items() if not name.startswith("-") for k in keys
)


@short_text_cache
def stated_slot(text: str) -> StatedSlot | None:
    """The slot ``text`` sets, or None when it is not one plain statement of an attribute."""
    sentence = _bare(text)
    if not sentence or _SEVERAL.search(sentence) or sentence.endswith(("?", "？", "吗")):
        return None
    if _HAN.search(sentence):
        return _chinese(sentence)
    if called := _CALL_ME.match(sentence):
        return StatedSlot("name", said=called.group("name"))
    if couple := _COUPLE.match(sentence):
        return StatedSlot("partner", said=couple.group("name"))
    if change := _CHANGED_MY.match(sentence):  # "I changed my email to ..."
        return _possessed(f"{change.group('owned')} is {change.group('value')}")
    return _possessed(sentence) or _verb(sentence)


def restates(text: str, earlier: str) -> bool:
    """Whether ``text`` states again the value ``earlier`` stated of the same slot: "I still
    live in Berlin" or "I've moved to Berlin" after "I live in Berlin" (a confirmation, not
    a new version), but not "I no longer live in Berlin"."""
    new, old = stated_slot(text), stated_slot(earlier)
    if new is None and old is not None and old.said and (value := still_at(text)):
        return not _denies(_bare(earlier)) and _told(value) == _told(old.said)
    if new is None or old is None or not new.said or not old.said:
        return False
    if _denies(_bare(text)) != _denies(_bare(earlier)):
        return False
    return _told(new.said) == _told(old.said)


# "I'm still at Bosch", "Yep, still in Berlin": the place one works or studies at, or lives
# in, said again without its verb.
_STILL_AT = re.compile(
    r"^(?:I(?:['’]m|\s+am)\s+)?still\s+(?:at|with|in)\s+"
    r"(?P<value>(?-i:[A-Z])[\w'’&.-]*(?:\s+(?-i:[A-Z])[\w'’&.-]*){0,3})$",
    re.IGNORECASE,
)


def still_at(text: str) -> str:
    """The name in "I'm still at Bosch" or "Still in Berlin"; "" for anything else.  It names
    no slot itself ("I'm still at Heathrow" is where one is today): it only confirms a held
    one."""
    found = _STILL_AT.match(_bare(text))
    return found.group("value") if found else ""


def states_another_value(text: str, earlier: str) -> bool:
    """Whether both plainly state a value of one slot and the values differ ("我最喜欢的水果是
    芒果" after "... 是苹果"): then no embedding may call them one (an English-only embedder
    finds most Chinese sentences alike)."""
    new, old = stated_slot(text), stated_slot(earlier)
    if new is None or old is None or not new.said or not old.said or new.key != old.key:
        return False
    return not restates(text, earlier)


# Words that leave a value as it was: "Berlin now", "still Berlin", "Munich these days".
_SAME_VALUE_FILLERS = frozenset(
    {"now", "still", "currently", "these", "days", "nowadays", "again", "too", "already",
     "actually", "anyway", "though", "then", "recently", "lately", "ago", "last", "this",
     "week", "weekend", "month", "year", "for", "good", "yes", "indeed", "as", "well", "the", "of",
     "course"}
)  # fmt: skip
_DENIES = re.compile(
    r"\b(?:no longer|not|never|quit|left|anymore|any more|used to|sold|got rid of|gave away"
    r"|given away|scrapped)\b|n['’]t\b"
    r"|不再|不住|不在|没有|离开",
    re.IGNORECASE,
)


def _denies(sentence: str) -> bool:
    return _DENIES.search(sentence) is not None


def _told(said: str) -> tuple[str, ...]:
    words = re.findall(r"[^\W_]+", said.casefold())
    if _HAN.search(said):  # no spaces: the characters, time words and particles aside
        return tuple(re.sub(r"现在|目前|还|仍然|依然|了|的", "", "".join(words)))
    # "two" and "2" are one value
    return tuple(next(iter(numbers_in(w)), w) for w in words if w not in _SAME_VALUE_FILLERS)


def _bare(text: str) -> str:
    sentence = text.strip()
    while (stripped := _LEAD.sub("", sentence, count=1)) != sentence:
        sentence = stripped
    sentence = plain_form(_ZH_LEAD.sub("", sentence).rstrip(" .!。！"))
    return _after_the_change(_FOR_NOW.sub("", sentence))


# "I'm single at the moment": said of the present, as every plain statement is.
_FOR_NOW = re.compile(
    r"(?<=\w)\s+(?:at the moment|at present|right now|for now|for the time being)$",
    re.IGNORECASE,
)


# "Ian isn't my coach anymore, my coach is Rhona", "I changed gyms, my gym is now X": a
# clause saying what changed, then the new value plainly.
_CHANGE_CLAUSE = re.compile(
    r"^[^,]*\b(?:changed|switched|swapped|moved|left|quit|no longer|not|anymore|any more)\b"
    r"[^,]*|^[^,]*n['’]t\b[^,]*",
    re.IGNORECASE,
)


_LONGEST_CLAUSES = 300


def _after_the_change(sentence: str) -> str:
    """The clause stating the new value when ``sentence`` first says what changed."""
    if len(sentence) > _LONGEST_CLAUSES:
        return sentence
    change = _CHANGE_CLAUSE.match(sentence)
    if change is None or not sentence.startswith(", ", change.end()):
        return sentence
    last = plain_form(sentence[change.end() + 2 :])
    return last if _possessed(last) or _verb(last) else sentence


def _possessed(sentence: str) -> StatedSlot | None:
    """ "my favourite colour is green", "Ana's birthday is May 3", "my sister's city is Porto"."""
    sentence = _contracted_is(_TIME_BEFORE_IS.sub(r"\g<1>", sentence))
    if (inverted := _INVERTED.match(sentence)) and inverted.group(
        "value"
    ).lower() not in _NOT_NAMES:
        # "Purple is my favourite colour", "Tom is my manager"
        value = inverted.group("value")
        attribute = _slot_of(normalize_key(inverted.group("attribute")), value)
        return StatedSlot(attribute, said=value) if attribute else None
    copula = _COPULA.search(sentence)
    if copula is None or not sentence[copula.end() :].strip():
        return None
    left = sentence[: copula.start()].strip()
    lower = left.lower()
    # "the wifi password" is the home's, as "my wifi password" is
    if lower.startswith(("my ", "our ")) or (lower.startswith("the ") and _SECRET.search(lower)):
        owned = left.split(None, 1)[1]
    elif _POSSESSIVE.search(left):
        owned = left
    else:
        return None
    possessives = list(_POSSESSIVE.finditer(owned))
    last = possessives[-1] if possessives else None
    attribute = normalize_key(owned[last.end() :] if last else owned)
    owner = owned[: last.start()].strip() if last else ""  # "Ana's mum's birthday": Ana's mum
    said = sentence[copula.end() :]
    attribute = _slot_of(attribute, said)
    if not attribute:
        return None
    if _CALLED.match(said):  # "my partner is called Alex": the partner's name (_verb)
        return None
    if not owner:
        return StatedSlot(attribute, said=said)
    owner = re.sub(r"^(?:my|our|the)\s+", "", owner, flags=re.IGNORECASE)
    kin, rest = _kin(owner)
    if kin and (named := _APPOSED_NAME.match(rest)):  # "my sister Ana's birthday": Ana's
        owner = named.group("name")
    if owner.lower() in _NOT_NAMES or len(owner.split()) > 3:
        return None
    return StatedSlot(attribute, (owner,), said)


# "My favourite film these days is Arrival": the time said before the copula.
_TIME_BEFORE_IS = re.compile(
    r"(?<!\s)\s+(?:these days|nowadays|right now|currently|at the moment|at present|now)"
    r"(\s+(?:is|are)\s)",
    re.IGNORECASE,
)
# "My birthday's in July": "'s" is "is" before these, a possessive before anything else.
_AFTER_CONTRACTED_IS = frozenset(
    {"in", "on", "at", "now", "still", "currently", "actually", "always", "usually"}
)


def _contracted_is(sentence: str) -> str:
    words = sentence.split(" ")
    for index, word in enumerate(words[:-1]):
        if word.lower().endswith(("'s", "’s")) and (
            words[index + 1].lower() in _AFTER_CONTRACTED_IS or words[index + 1][:1].isdigit()
        ):
            words[index] = word[:-2] + " is"
            return " ".join(words)
    return sentence


# "Purple is (still) my favourite colour": the value first.
_INVERTED = re.compile(
    r"^(?P<value>\w[\w'’-]*(?: [\w'’-]+){0,2}) (?:is|are) (?:still |now |also )?(?:my|our) "
    r"(?P<attribute>[\w'’-]+(?: [\w'’-]+){0,3})$",
    re.IGNORECASE,
)
_CALLED = re.compile(r"(?:called|named)\s+[A-Z]")
# "the wifi password", "the door code": what unlocks the home is the user's to keep current.
_SECRET = re.compile(r"(?:password|passcode|passphrase|code|pin|combination)$")
# "I changed my email to ana@new.com", "I moved my dentist appointment to Friday": "my
# email is ana@new.com", said as a change.
_CHANGED_MY = re.compile(
    r"^I(?:['’]ve|\s+have)?(?:\s+(?:just|finally|already|recently))?\s+(?:changed|updated"
    r"|switched|moved|reset)\s+(?P<owned>(?:my|our)\s+[\w'’-]+(?:\s+[\w'’-]+){0,3}?)"
    r"\s+to\s+(?P<value>\S.*)$",
    re.IGNORECASE,
)
# "Jamie and I are married", "Sam and I got engaged": the user's partner.
_COUPLE = re.compile(
    r"^(?P<name>[A-Z][\w'’-]*)\s+and\s+I\s+(?:are|['’]re|have been|['’]ve been|got|just got"
    r"|are getting)\s+(?:now\s+|still\s+)?(?:married|engaged|together|dating|a couple)"
    r"(?:\s+(?:now|these days|again|since \w+(?: \w+)?))?$"
)


# Whom or where one has one of: "my manager is Sarah", "my gym is PureGym".  Each is a slot
# only when the value is a name: "my manager is on holiday" and "my gym is closed" describe
# the person or the place.
_PROVIDERS = frozenset(
    {"manager", "boss", "supervisor", "doctor", "gp", "dentist", "therapist", "counsellor",
     "counselor", "landlord", "landlady", "accountant", "lawyer", "solicitor", "coach",
     "trainer", "tutor", "mentor", "vet", "hairdresser", "barber", "mechanic", "optician",
     "physio", "physiotherapist", "gym", "bank", "pharmacy", "supermarket", "provider",
     "carrier", "broker", "insurer", "church", "parish", "surgery", "clinic"}
)  # fmt: skip
_NAMES_VALUE = re.compile(
    r"^(?:(?:now|still|currently|actually|officially)\s+)?(?:(?:a|an|the)\s+)?"
    r"(?:[A-Z]|[a-z]{1,5}[A-Z])"
)


def _slot_of(attribute: str, said: str) -> str:
    """The slot a possessed ``attribute`` names with the value ``said``, or "" for none.
    "my new manager is Tom" is the manager's slot, as "my manager is Sarah" is."""
    first, _, rest = attribute.partition(" ")
    if first in ("new", "current") and rest and _slot_of(rest, said):
        return rest
    if _is_attribute(attribute):
        return attribute
    head = attribute.split()[-1] if attribute else ""
    if head in _PROVIDERS and _NAMES_VALUE.match(said.strip()):
        return attribute
    return ""


def _is_attribute(key: str) -> bool:
    words = key.split()
    if not words or len(words) > 4:
        return False
    if key in _KNOWN_KEYS or (words[0] in _ONE_OF_MANY and len(words) > 1):
        return True
    head = words[-1]
    return head in _PROPERTY_NOUNS or head.removesuffix("s") in _PROPERTY_NOUNS


def _verb(sentence: str) -> StatedSlot | None:
    """ "I live in Munich", "Ana works at Siemens", "my brother works as a nurse", "I'm 34"."""
    subject = _subject(sentence)
    slot = by_verb(subject, _VERBS) or _count(subject) or _opinion(subject)
    if slot is not None and slot.key in _EACH_OWN and sentence[:3].lower() in ("we ", "we'", "we’"):
        return None  # "we're 5", "we're called the Smiths": not one person's age or name
    return slot


# What "we" cannot share with the user: each has their own.
_EACH_OWN = frozenset({"age", "name", "job"})


def _opinion(subject: Subject | None) -> StatedSlot | None:
    """ "I like coffee", "I don't like coffee anymore", "my sister hates jazz": what one
    thinks of one thing, a slot per thing ("opinion of coffee"), so the newer replaces the
    older; "I like tea" is another slot and stays beside it."""
    if subject is None or not (felt := _FEELS.match(subject[1])):
        return None
    thing = felt.group("thing").casefold().removeprefix("to ")  # "to swim": swim
    if re.search(r"\band\b|,|\bor\b|\bbut\b", thing) or thing in _NOT_THINGS:
        return None  # several things, or no thing named
    return StatedSlot(f"opinion of {thing}", subject[0], felt.group("verb"))


def _count(subject: Subject | None) -> StatedSlot | None:
    """ "I have two cats", "my sister has 3 kids now": how many, a slot per thing counted
    ("number of cats"), so "I have three cats now" replaces "I have two cats"."""
    if subject is not None and (gone := _HOLDS_NONE.match(subject[1]) or _LET_GO.match(subject[1])):
        thing = gone.group("thing").casefold()
        return StatedSlot(f"number of {thing}", subject[0], "0") if _countable(thing) else None
    if subject is None or not (held := _HOLDS.match(subject[1])):
        return None
    thing, count = held.group("thing").casefold(), held.group("count").casefold()
    if re.search(r"\band\b|,|\bor\b", thing):
        return None  # "two cats and a dog": several counts
    if count in _ARTICLE_COUNTS:  # "I have a dog": one; "I have a question": no count
        if not _countable(thing):
            return None
        count = _ARTICLE_COUNTS[count]
    elif not numbers_in(count):
        return None
    thing = _SAME_THING.get(thing, thing)
    # "number of cat" and "number of cats" are one attribute (slots.Attribute)
    return StatedSlot(f"number of {thing}", subject[0], count)


# Words for one thing counted: "I have three kids" and "I have 3 children" count the same.
_SAME_THING = {"kid": "children", "kids": "children", "child": "children"}


# "I have a dog" holds one, "I have no car (now)" none: the counts a plain article states,
# of people, pets and the few things people count what they own of ("I have a question",
# "a cold", "a meeting at 3" count nothing).
_ARTICLE_COUNTS = {"a": "1", "an": "1", "no": "0"}
_OWNED = frozenset(
    {"car", "bike", "bicycle", "motorbike", "motorcycle", "scooter", "house", "flat",
     "apartment", "boat", "horse", "bird", "parrot", "fish", "rabbit", "hamster",
     "guinea pig", "turtle", "tortoise", "pet", "pets", "baby", "grandchild", "twins"}
)  # fmt: skip


def _countable(thing: str) -> bool:
    """Whether "a"/"no" before ``thing`` counts it: a person, a pet or a thing one owns."""
    singular = thing.removesuffix("s") if thing.endswith("s") and thing not in KIN else thing
    return thing in KIN or singular in KIN or thing in _OWNED or singular in _OWNED


def _subject(sentence: str) -> Subject | None:
    """Whom the sentence is about (nobody named: the user) and the words after it.

    The verb rules' "my X" is a person or a pet (:data:`~shiyi.memory.lifecycle.slots.KIN`):
    "my office is in Porto" is no one's residence.  A name beside the relation is the
    subject ("my sister Ana", "Ana, my sister,"): the name, not "sister", since a second
    sister would share that word."""
    if me := _ME.match(sentence):
        rest = sentence[me.end() :]
        if me.group().lower() == "we" and _WE_ARE_A_BUSINESS.match(rest):
            return None  # "we're based in London", "we work with schools": a company
        return (), rest
    if _UNSAID_I.match(sentence):  # "Still living in Seattle": the user, unsaid
        return (), " am " + sentence
    if my := _MY.match(sentence):
        kin, rest = _kin(sentence[my.end() :])
        if not kin:
            return None
        if named := _APPOSED_NAME.match(rest):
            return (named.group("name"),), rest[named.end() :]
        return (kin,), rest
    if (named := _NAMED.match(sentence)) and named.group().split()[0].lower() not in _NOT_NAMES:
        rest = sentence[named.end() :]
        apposition = _APPOSITION.match(rest)  # "Ana, my sister, lives in Porto"
        if apposition and apposition.group("kin").lower() in KIN:
            rest = rest[apposition.end() :]
        return (named.group(),), rest
    return None


def _kin(words: str) -> tuple[str, str]:
    """The relation leading ``words`` ("older sister", then "sister") and the words after."""
    split = words.split(" ")
    for size in (2, 1):
        kin = " ".join(split[:size]).lower().rstrip(",")
        if len(split) > size and kin in KIN:
            return kin, (", " if split[size - 1].endswith(",") else " ") + " ".join(split[size:])
    return "", words


# A chat's statement without its "I'm": "still living in Seattle", "based in Lyon now".
_UNSAID_I = re.compile(
    r"^(?:(?:still|now|currently)\s+)?(?:living|based|working|studying|residing)\s+(?:in|at|for|as)\s",
    re.IGNORECASE,
)
# "my sister Ana lives", "my wife, Maria, lives": the name after the relation.
_APPOSED_NAME = re.compile(rf"^,?\s+(?P<name>{_NAME})(?=,?\s|$)(?:,(?=\s))?")
# "Ana, my sister, lives": the relation after the name.
_APPOSITION = re.compile(r"^,\s+(?:my|our)\s+(?P<kin>[\w ]+?),(?=\s)", re.IGNORECASE)
