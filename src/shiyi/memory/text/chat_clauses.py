"""A chat message's clauses, each as a plain sentence that the statement rules can read.

People do not tell a memory "I sold my car".  They chat: "Traded in the Civic last weekend,
I'm driving a Tesla now"; "Cancelled Spotify, I'm on Apple Music now"; "Honestly, gave up on
Spanish".  The rules that read an ending or a slot expect one plain clause with its subject,
so each clause is given back alone, with an interjection before it dropped and a subject
"I" put before a verb that starts it ("Cancelled Spotify": "I cancelled Spotify").

A message of several clauses is split at commas, semicolons, dashes and the words that join
two clauses ("so", "but", "because"), and at "and" only before a verb in the past tense
("... and closed the Barclays account"; never "Marks and Spencer").  Only
messages of at most :data:`LONGEST` characters are split.
"""

from __future__ import annotations

import re

from shiyi.memory.text.short_cache import short_text_cache

LONGEST = 300
# Each leading run of spaces is tried from its first space only ("(?<!\s)"): tried from
# every space of a long run, the pattern took 51 s on 8,000 spaces (quadratic).
_SPLIT = re.compile(
    r"(?<!\s)\s*(?:[;:!]+|\s[-–—]\s|,)\s*(?:(?:so|and|but|then|because|as|though)\s+)?"
    r"|(?<!\s)\s+(?:so|but|because)\s+"
    r"|(?<!\s)\s+and\s+(?=(?:(?:just|finally|then|also)\s+)?(?:[a-z]+ed|sold|quit|left|gave"
    r"|got|lost|bought|took|went)\b)",
    re.IGNORECASE,
)
_INTERJECTION = re.compile(
    r"^(?:oh|well|so|ok|okay|yeah|yes|honestly|anyway|btw|by the way|update|fyi|news|haha"
    r"|lol|ugh|um|hey|guess what|funny enough|turns out)\b[\s,:!.-]*",
    re.IGNORECASE,
)
# Adverbs a dropped subject's verb may come after: "Finally upgraded", "Just cancelled ...".
_ADVERBS = frozenset(
    {"finally", "just", "recently", "eventually", "already", "somehow", "officially",
     "actually", "basically", "totally", "also", "then"}
)  # fmt: skip
# Verbs that start a clause without their subject (past tense but for "-ed" forms, which
# are read by their ending).
_IRREGULAR = frozenset(
    {"got", "gave", "sold", "quit", "left", "went", "took", "bought", "made", "had", "lost",
     "broke", "began", "became", "found", "swapped", "traded", "put", "cut", "won", "sent",
     "spent", "paid", "told", "met", "upped", "bumped", "dropped", "stopped", "ended", "moved",
     "switched", "started", "signed", "joined"}
)  # fmt: skip
# "-ed" words that are not verbs of a dropped subject.
_NOT_VERBS = frozenset(
    {"need", "red", "bed", "shed", "seed", "feed", "speed", "weed", "hundred", "embed", "bred",
     "sled", "ted", "ned", "fred", "ed", "led", "wed", "indeed", "creed", "greed", "tired",
     "bored", "married", "engaged", "excited", "scared", "used", "based"}
)  # fmt: skip
_WORD = re.compile(r"[A-Za-z'’]+")


@short_text_cache
def clauses(text: str) -> tuple[str, ...]:
    """``text``'s clauses as plain sentences, in order; the text itself when it is one (or
    too long to split)."""
    sentence = text.strip()
    if len(sentence) > LONGEST or "\n" in sentence:
        return (sentence,)
    parts = [p for p in _SPLIT.split(sentence) if p and p.strip(" .!?")]
    found = tuple(_with_subject(_INTERJECTION.sub("", p.strip())) for p in parts)
    return tuple(c for c in found if c) or (sentence,)


def _with_subject(clause: str) -> str:
    """``clause`` with "I" before a verb that starts it; as it is otherwise."""
    words = _WORD.findall(clause[:40])
    if not words:
        return clause
    lead = 0
    while lead < len(words) - 1 and words[lead].lower() in _ADVERBS:
        lead += 1
    after = words[lead + 1].lower() if lead + 1 < len(words) else ""
    verb = words[lead].lower()
    if not clause[0].isalpha() or not _a_verb(verb):
        return clause
    if verb not in _IRREGULAR and _a_verb(after):
        return clause  # "Jared moved ...": a name, then its verb
    return "I " + clause[0].lower() + clause[1:]


def _a_verb(word: str) -> bool:
    if word in _IRREGULAR:
        return True
    return len(word) > 4 and word.endswith("ed") and word not in _NOT_VERBS
