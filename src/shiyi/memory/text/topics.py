"""Topics of an English turn (no model): what it is about, as graph entities.

Names alone leave a conversation's graph nearly empty: "I signed up for a pottery class" names
nobody, yet "pottery" is what a later question asks about ("What does Melanie do to
destress?" is answered by turns about pottery and running).  A topic is:

* a word of a noun phrase opened by a determiner or possessive ("a pottery class", "my
  kids", "the beach"): up to :data:`PHRASE_WORDS` words that are not stop words or light
  words, stopping at punctuation, a capitalised word (names are :mod:`entities`' job) or a
  stop word;
* an activity named by a gerund ("went camping", "love painting").

A topic's key is its Snowball stem, so "camped", "camping" and "camp" meet at one node; its
display and alias keep the surface word, so the word finds it too.  Topics are many and most
are common, so the graph weighs each by how few turns mention it (:func:`specificity`).

Measured on the LoCoMo dev conversations (1,451 turns, 383 questions, recall@10): the graph
path alone found 0.008 of the evidence with names only and 0.46 with topics; as a voting path
in hybrid (weight 0.5) it lifted hybrid from 0.758 to 0.767.
"""

from __future__ import annotations

import math
import re

from shiyi.index.text import STOP_WORDS, stem_word, word_set
from shiyi.memory.models import EntityRecord

PHRASE_WORDS = 3
"""Words of a noun phrase read after its determiner ("my new pottery class")."""
_OPENERS = word_set(
    "a an the my our your his her their its some this that these those another any every"
)
# Frequent words that carry no topic: adjectives of chat, vague nouns, light verbs' gerunds.
LIGHT_WORDS = word_set(
    """good great nice awesome amazing cool lovely wonderful fantastic incredible new old big
    little small real really whole same other last next first few lot lots bit kind sort way
    thing things something anything everything nothing time times day days moment week weeks
    year years month months while one ones part stuff much many more most own such sure
    going doing being having getting making feeling looking thinking saying trying coming
    taking seeing telling talking wanting knowing giving keeping letting putting morning
    evening during bring thing sing king ring yesterday today tomorrow tonight ago after before
    since until through around across along without within because though although again
    two three four five six seven eight nine ten hundred thousand lol haha omg"""
)
_TOKEN = re.compile(r"[A-Za-z][A-Za-z'-]*|[^\sA-Za-z]")
_GERUND = re.compile(r"[a-z]{3,}ing")
HUB_BASE = 1000.0
"""Mention count at which an entity's :func:`specificity` falls to log(2)."""


def _is_topic_word(word: str) -> bool:
    return (
        word.isalpha()
        and word.islower()
        and len(word) > 2
        and word not in STOP_WORDS
        and word not in LIGHT_WORDS
    )


def _phrase_after(tokens: list[str], start: int) -> list[str]:
    """Topic words of the noun phrase that starts at ``tokens[start]``."""
    words: list[str] = []
    for token in tokens[start : start + PHRASE_WORDS]:
        lower = token.lower()
        if not token[0].isalpha() or not token.islower() or lower in STOP_WORDS:
            break
        if _is_topic_word(lower):
            words.append(lower)
    return words


def topic_words(text: str) -> list[str]:
    """The surface words of ``text``'s topics, in order, repeats removed."""
    tokens = _TOKEN.findall(text)
    found: list[str] = []
    for index, token in enumerate(tokens):
        lower = token.lower()
        if lower in _OPENERS:
            found += _phrase_after(tokens, index + 1)
        elif token.islower() and _GERUND.fullmatch(token) and _is_topic_word(token):
            found.append(token)
    return list(dict.fromkeys(found))


def extract_topics(text: str) -> list[EntityRecord]:
    """Topic entities of ``text`` keyed by stem, de-duplicated, in order."""
    records: dict[str, EntityRecord] = {}
    for word in topic_words(text):
        key = stem_word(word)
        if key not in records:
            # the word as an alias: looking up "pottery" finds the topic keyed "potteri"
            aliases = [word] if word != key else []
            records[key] = EntityRecord(name=key, type="topic", display=word, aliases=aliases)
    return list(records.values())


MENTION_BUDGET = 1000
"""Most mention rows one graph query reads.  At 100k turns of real conversation, reading
every mention of every query entity under the hub cap took p50 156 ms (many topics sit just
under it); the commonest entities add the least weight, so they are the ones left out."""


def within_budget(degree: dict[str, int], hub: int, budget: int = MENTION_BUDGET) -> list[str]:
    """The entities worth expanding: rarest first, no hubs, until ``budget`` mentions."""
    chosen: list[str] = []
    spent = 0
    for name in sorted(degree, key=lambda n: (degree[n], n)):
        if degree[name] > hub or (chosen and spent + degree[name] > budget):
            break
        chosen.append(name)
        spent += degree[name]
    return chosen


def specificity(mentions: int) -> float:
    """How much touching an entity mentioned by ``mentions`` events says: like an inverse
    document frequency, with :data:`HUB_BASE` standing in for the corpus size (the stores do
    not count their events on every query)."""
    return math.log1p(HUB_BASE / max(mentions, 1))
