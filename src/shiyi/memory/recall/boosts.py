"""Query-aware adjustments of fused scores, from what the candidates' records say.

After fusion (:mod:`shiyi.memory.recall.scoring`) every candidate has a score in z-score units (a
strong match is 2 or more).  These add to it, each switchable for the recall bench
(:class:`~shiyi.memory.recall.config.Boosts`):

* **speakers**: an event said by a person the query names ("What did *Melanie* paint?") gains
  :data:`SPEAKER_BONUS`, unless the query names every speaker among the candidates.  With
  ``aliases``, "Mel", "Melanie's" misspelt or a name the other speaker calls her by name her
  too (:mod:`shiyi.memory.text.people`).
* **said by**: in a user's memory with an assistant, a question about what "you" said or
  made ("the stretches you suggested") favours the assistant's turns, one about what "I"
  said the user's, by :data:`SPEAKER_BONUS` (:mod:`shiyi.memory.recall.addressed`).
* **time**: an event or fact inside one of the query's time windows, or in a month it names,
  gains :data:`TIME_BONUS`.  A window is widened by :data:`TIME_GRACE` after its end, since
  people tell what happened in the days after.
* **told when**: asked when something happened, with no time of its own ("When did Ana
  start pottery?"), a turn that places an event in time ("I started a pottery class last
  week") gains :data:`TOLD_WHEN_BONUS` (:mod:`shiyi.memory.text.time_words`): the turns that
  only mention the thing later do not answer "when".  Asked how often ("How often does Sam
  climb?"), a turn giving a rate ("twice a week", "on Sundays") gains the same
  (:mod:`shiyi.memory.text.how_often`).
* **episodes**: a run (a LoCoMo session, an agent task) is about a few things, so a turn gains
  :data:`EPISODE_SHARE` of the best score in its run: the evidence of a question tends to sit
  where its best match is.
* **neighbours**: a turn gains :data:`NEIGHBOUR_SHARE` of the better of the turns just before
  and after it (when positive): a short reply ("Yes, it was!") means what the turn it answers
  means.  A reply to another speaker's question takes :data:`ANSWER_SHARE` of it: asked
  "What are Sam's plans for the summer?", the turn that matches is Lea's "Any plans for the
  summer?", the one that answers is Sam's "Researching adoption agencies." after it.  A
  message of a burst (one speaker's messages in a row, as people chat: "we went to the lake"
  / "caught 3 trout!!") takes :data:`BURST_SHARE` of the best other message of the burst.
* **asking**: a short turn that only asks ("how's the cello going?", "Same sign?") loses
  :data:`ASKING_PENALTY`, after the reply to it took its share (``neighbours``).  It names
  what the question is about, so the keyword path ranks it high, and answers nothing.
* **coverage**: a run whose candidate turns together hold more of the query's words gains
  :data:`COVERAGE_WEIGHT` times its z-score among the candidates' runs, each word weighted by
  how rare it is among the candidates.  A question's words are often spread over a day's
  conversation ("What did Maya bake for her sister's wedding?": "wedding" in one turn, "lemon
  cake" two turns later): one turn matches a part, the day matches the whole.  This is the
  document score that passage retrieval mixes into a passage's, with the run as the document
  and only the candidates read (no index of its own).
* **run similarity** (:func:`run_similarity_bonus`, in a user's task memory only): coverage's
  counterpart in meaning.  A run whose turns, averaged, lie nearer the query gains
  :data:`RUN_SIMILARITY_WEIGHT` times its z-score among the candidates' runs.  A task's turns
  share one subject, so their mean vector says what the task is about ("the interview
  practice" finds the session that practised, whichever of its turns says so best); a day of
  talk between two people moves through many subjects, and there the mean says little.

Measured by ``bench/recall_bench.py`` on the LoCoMo dev conversations, each switched off
alone from hybrid's 0.758 (recall@10): speakers +0.025, time windows +0.013 (most of its 46
questions were found anyway), episodes +0.031, neighbours +0.010.  The constants are round
numbers from the middle of ranges that all helped in development (episodes and neighbours
0.1-0.3 each), not fitted values.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from functools import lru_cache

from shiyi.memory.models import EventRecord, FactRecord
from shiyi.memory.recall.config import Boosts
from shiyi.memory.recall.query_signals import DAY, QuerySignals
from shiyi.memory.text.contextual import event_day
from shiyi.memory.text.how_often import says_how_often
from shiyi.memory.text.people import called, named_speakers, nicknamed_speakers, said_as_word
from shiyi.memory.text.time_words import says_when

SPEAKER_BONUS = 0.5
TIME_BONUS = 0.6
TIME_GRACE = 10 * DAY
TOLD_WHEN_BONUS = 0.3
"""Half the time window's: saying when is a hint that a turn answers, not that it matches."""
TOLD_HOW_OFTEN_BONUS = TIME_BONUS
"""The time window's: a rate is as specific as a date inside the window asked about (0.6% of
the LoCoMo dev turns give one, the evidence of each of its 4 "how often" questions does; 16.5%
of turns say when)."""
EPISODE_SHARE = 0.2
NEIGHBOUR_SHARE = 0.1
ANSWER_SHARE = 0.5
"""What a reply takes of the question it answers ("Any plans for the summer?" /
"Researching adoption agencies."): the middle of 0.3-1.0, which all helped on LoCoMo dev
(R@10 0.789 -> 0.792 / 0.797 / 0.800 at 0.3 / 0.5 / 1.0, every conversation at or above);
on RealMem dev 0.5 changed nothing and 1.0 lost (R@10 0.722 -> 0.716)."""
BURST_SHARE = 0.3
"""What a message takes of the best other message of its burst: one speaker's messages in a
row, sent as pieces of one thing said ("we went to the lake" / "caught 3 trout!!" / "so
peaceful").  Between a neighbour's share and an answer's.  Measured on LoCoMo dev with each
turn sent as its sentences, one message each (LoCoMo has no two turns of one speaker in a
row; real chats are full of them): every evidence message R@10 0.347 -> 0.357 / 0.360 /
0.361 at 0.2 / 0.3 / 0.5, evidence turns with any message in the top 10 0.773 -> 0.772 /
0.772 / 0.771 (R@5 0.676 -> 0.670 / 0.666 / 0.655: a burst's pieces take places there)."""
BURST_GAP = 10 * 60.0
"""Seconds between two messages of one burst at most: a speaker who writes again later, with
no reply in between, starts something new."""
BURST_TYPES = frozenset({"imported", "user_message", "response"})
"""What can be a piece of a burst: messages, not tool calls, their results or reasoning."""
ASKING_PENALTY = 0.5
ASKING_WORDS = 15
"""A turn of at most this many words that ends asking is one that only asks.  Written from
how people chat ("how's the cello going?", "what are you playing?"), then measured, paired
per question, R@5 / R@10 (bench/data/blind-chats, 100 questions): 0.578 / 0.656 without,
0.586 / 0.666 at 0.3, 0.596 / 0.670 at 0.5, 0.601 / 0.682 at 1.0, no question lower at 0.5;
LoCoMo dev 0.728 / 0.833 without, 0.730 / 0.834 at 0.5 (2 questions ahead, 1 behind at
R@10), 0.733 / 0.834 at 1.0.  0.5: the middle, a neighbour-answer's share."""
COVERAGE_WEIGHT = 0.2
"""From the middle of 0.1-0.3, which all helped on LoCoMo dev (+0.010 to +0.024 at k=10)."""
RUN_SIMILARITY_WEIGHT = 0.1
"""Half of coverage's: the mean of a run works against a preference said in passing, in a
run about something else.  Every weight tried helped at every k (RealMem dev recall@5/10/20,
same run: off 0.588 / 0.711 / 0.820; 0.1 0.598 / 0.722 / 0.826; 0.2 0.609 / 0.717 / 0.830;
0.3 0.607 / 0.721 / 0.838; at 0.1 each of the three personas at or above off at every k), and
from 0.2 up implicit preferences lost (0.639 -> 0.613; at 0.1 unchanged)."""
SHORT_TERM = 3
"""Latin terms this short match whole words only."""
NOT_SPEAKERS = frozenset({"user", "assistant", "tool", "system"})
"""Agent roles: a query saying "user" does not name a person."""


def in_time(ts: float, signals: QuerySignals) -> bool:
    if any(start <= ts < end + TIME_GRACE for start, end in signals.windows):
        return True
    if signals.months:
        month = datetime.fromtimestamp(ts, UTC).month
        # the month itself, or the one after (told a little later)
        return month in signals.months or (month - 2) % 12 + 1 in signals.months
    return False


def named_in(
    events: Mapping[str, EventRecord], signals: QuerySignals, aliases: bool
) -> tuple[set[str], set[str]]:
    """The speakers of ``events`` and those of them the question names: by speaker field,
    and with ``aliases`` by nickname, short form, near-spelling or what the chat calls them."""
    speakers = {e.role for e in events.values() if e.role not in NOT_SPEAKERS}
    named = speakers & signals.names
    if aliases and signals.people - speakers and speakers:
        named |= named_speakers(signals.people, speakers, _calls(events, speakers))
    if aliases and signals.lowercase - speakers and speakers:
        texts = [e.content for e in events.values()]
        named |= nicknamed_speakers(
            signals.lowercase - speakers, speakers, lambda word: said_as_word(word, texts)
        )
    return speakers, named


def _speaker_bonus(
    scores: dict[str, float],
    events: Mapping[str, EventRecord],
    signals: QuerySignals,
    aliases: bool,
) -> None:
    speakers, named = named_in(events, signals, aliases)
    if named == speakers and signals.subject:
        named = _the_subject(signals.subject, speakers, events, aliases)
    if not named or named == speakers:
        return
    _favour(scores, events, named)


def _said_by_bonus(
    scores: dict[str, float], events: Mapping[str, EventRecord], signals: QuerySignals
) -> None:
    """The role a question asks about ("what you suggested": the assistant) gains
    :data:`SPEAKER_BONUS`, when the candidates are a user's and an assistant's turns."""
    if not signals.said_by:
        return
    roles = {event.role for event in events.values()}
    if {"user", "assistant"} <= roles:
        _favour(scores, events, {signals.said_by})


def _favour(scores: dict[str, float], events: Mapping[str, EventRecord], roles: set[str]) -> None:
    """The turns said by one of ``roles`` gain :data:`SPEAKER_BONUS`."""
    for key, event in events.items():
        if event.role in roles:
            scores[key] += SPEAKER_BONUS


def _calls(
    events: Mapping[str, EventRecord], speakers: set[str]
) -> Callable[[], Mapping[str, set[str]]]:
    """What the candidates' turns call each speaker, read only when a name needs it."""

    def read() -> Mapping[str, set[str]]:
        turns = [(e.role, e.content) for e in events.values() if e.role in speakers]
        return called(turns, speakers)

    return read


def _the_subject(
    subject: str, speakers: set[str], events: Mapping[str, EventRecord], aliases: bool
) -> set[str]:
    """The speaker a question naming every speaker asks about ("What did Jon tell Gina?")."""
    if subject in speakers:
        return {subject}
    return named_speakers([subject], speakers, _calls(events, speakers)) if aliases else set()


def _time_bonus(
    scores: dict[str, float],
    events: Mapping[str, EventRecord],
    facts: Mapping[str, FactRecord],
    signals: QuerySignals,
) -> None:
    if not signals.timed:
        return
    for key, event in events.items():
        if in_time(event.ts, signals):
            scores[key] += TIME_BONUS
    for key, fact in facts.items():
        if in_time(fact.valid_from or fact.created_at, signals):
            scores[key] += TIME_BONUS


def _told_when_bonus(
    scores: dict[str, float], events: Mapping[str, EventRecord], signals: QuerySignals
) -> None:
    if signals.how_often:
        tells, bonus = says_how_often, TOLD_HOW_OFTEN_BONUS
    elif signals.intent == "temporal" and not signals.timed:
        tells, bonus = says_when, TOLD_WHEN_BONUS  # a time asked about is the windows' work
    else:
        return
    for key, event in events.items():
        if tells(event.content):
            scores[key] += bonus


def _by_run(events: Iterable[EventRecord]) -> dict[str, list[EventRecord]]:
    runs: dict[str, list[EventRecord]] = {}
    for event in events:
        runs.setdefault(event.run_id, []).append(event)
    for turns in runs.values():
        turns.sort(key=lambda e: (e.iteration, e.segment))
    return runs


def _adjacent(a: EventRecord, b: EventRecord) -> bool:
    """Next to each other in their run: consecutive turns, or pieces of one turn."""
    if a.iteration == b.iteration:
        return abs(a.segment - b.segment) == 1
    return abs(a.iteration - b.iteration) == 1


def _context_bonus(
    scores: dict[str, float], runs: Mapping[str, list[EventRecord]], boosts: Boosts
) -> None:
    base = dict(scores)  # shares are of the scores before any of them is added
    for turns in runs.values():
        best = max(base[e.id] for e in turns)
        bursts = _bursts(turns) if boosts.bursts else {}
        for i, event in enumerate(turns):
            if boosts.episodes:
                scores[event.id] += EPISODE_SHARE * best
            around = [
                _share(other, event) * base[other.id]
                for other in turns[max(0, i - 1) : i + 2]
                if boosts.neighbours and other is not event and _adjacent(event, other)
            ]
            around += [
                BURST_SHARE * base[other.id]
                for other in bursts.get(event.id, ())
                if other is not event
            ]
            if around and max(around) > 0:
                scores[event.id] += max(around)


def _bursts(turns: list[EventRecord]) -> dict[str, list[EventRecord]]:
    """Each candidate's burst (id -> its messages, itself among them), for the bursts of
    two or more: messages of one speaker in consecutive turns of the run, each within
    :data:`BURST_GAP` of the one before.  Only candidates are read, so a burst whose middle
    message is no candidate is two (who said the turn between is not known here)."""
    found: dict[str, list[EventRecord]] = {}
    burst: list[EventRecord] = []
    for event in turns:
        if burst and not _continues(burst[-1], event):
            _keep_burst(found, burst)
            burst = []
        burst.append(event)
    _keep_burst(found, burst)
    return found


def bursts_by_run(events: Iterable[EventRecord]) -> dict[str, list[EventRecord]]:
    """Each event's burst (id -> its messages in the order sent, itself among them), for the
    bursts of two or more among ``events`` (see :func:`_bursts`)."""
    found: dict[str, list[EventRecord]] = {}
    for turns in _by_run(events).values():
        found.update(_bursts(turns))
    return found


def _continues(last: EventRecord, event: EventRecord) -> bool:
    return (
        event.iteration == last.iteration + 1
        and event.role == last.role
        and event.segment_type in BURST_TYPES
        and last.segment_type in BURST_TYPES
        and 0 <= event.ts - last.ts <= BURST_GAP
    )


def _keep_burst(found: dict[str, list[EventRecord]], burst: list[EventRecord]) -> None:
    if len(burst) > 1:
        found.update(dict.fromkeys((event.id for event in burst), burst))


def _share(other: EventRecord, event: EventRecord) -> float:
    """What ``event`` takes of its neighbour ``other``'s score: a reply to a question takes
    :data:`ANSWER_SHARE` of it, any other neighbour :data:`NEIGHBOUR_SHARE`."""
    before = (other.iteration, other.segment) < (event.iteration, event.segment)
    if before and other.role != event.role and _asks(other.content):
        return ANSWER_SHARE
    return NEIGHBOUR_SHARE


_ATTACHED = re.compile(r"(?<!\s)\s*\[[^\[\]]{0,2000}\]\s*$")  # (?<!\s): linear on spaces
"""What a chat appends to a message: "[shared an image: a photo of ...]"."""


def _asks(text: str) -> bool:
    """Whether a turn ends by asking ("Any plans for the summer?", "Really? 😂", "你呢？"):
    its last mark before any emoji, smiley or attachment is a question mark."""
    tail = _ATTACHED.sub("", text[-2500:])
    end = len(tail)
    while end and not (tail[end - 1].isalnum() or tail[end - 1] in "?？"):
        end -= 1
    return end > 0 and tail[end - 1] in "?？"


def _asking_penalty(scores: dict[str, float], events: Mapping[str, EventRecord]) -> None:
    for key, event in events.items():
        if _only_asks(event.content):
            scores[key] -= ASKING_PENALTY


def _only_asks(text: str) -> bool:
    """Whether a turn is short and ends asking: it holds no answer to what it names."""
    return len(text) < 400 and len(text.split()) <= ASKING_WORDS and _asks(text)


def _term_pattern(terms: Iterable[str]) -> re.Pattern[str]:
    """One pass over a turn finds which of ``terms`` it holds.  A term matches at the start of
    a word, so a stem finds its word ("camp" in "camped") without tokenizing the turn, which
    cost ~0.2-0.4 ms a turn (a search reads up to ~200 candidates, most new to any cache);
    a term that starts with another is left out (it would always match with it), and short
    Latin terms must be whole words ("go" is not "good"; "wed" and "wedding" both stay)."""
    prefixes = [t for t in terms if len(t) > SHORT_TERM]
    kept = [t for t in set(terms) if not any(o != t and t.startswith(o) for o in prefixes)]
    alternatives = [_alternative(t) for t in sorted(kept, key=len, reverse=True)]
    return re.compile("|".join(alternatives))


def _alternative(term: str) -> str:
    """A Latin term starts a word (and a short one ends it too); a Chinese one matches
    anywhere (Chinese text has no spaces between words)."""
    if not term.isascii():
        return re.escape(term)
    end = r"(?!\w)" if len(term) <= SHORT_TERM else ""
    return rf"\b{re.escape(term)}{end}"


def _coverage_bonus(
    scores: dict[str, float], runs: Mapping[str, list[EventRecord]], signals: QuerySignals
) -> None:
    if len(runs) < 2 or not signals.terms:
        return
    pattern = _term_pattern(signals.terms)
    found = {
        event.id: frozenset(pattern.findall(_searchable(event)))
        for turns in runs.values()
        for event in turns
    }
    counts = Counter(term for terms in found.values() for term in terms)
    rarity = {term: math.log((len(found) + 1) / (1 + n)) for term, n in counts.items()}
    cover = {
        run: sum(rarity[t] for t in frozenset().union(*(found[e.id] for e in turns)))
        for run, turns in runs.items()
    }
    mean = sum(cover.values()) / len(cover)
    spread = math.sqrt(sum((c - mean) ** 2 for c in cover.values()) / len(cover))
    if spread == 0:
        return
    for run, turns in runs.items():
        for event in turns:
            scores[event.id] += COVERAGE_WEIGHT * (cover[run] - mean) / spread


def run_similarity_bonus(
    scores: dict[str, float],
    events: Mapping[str, EventRecord],
    similarity: Mapping[str, float],
    weight: float = RUN_SIMILARITY_WEIGHT,
) -> None:
    """Each candidate turn gains ``weight`` times its run's z-score among the candidates'
    runs, by ``similarity`` (run id -> cosine of the query and the run's mean vector); runs
    without a similarity are left as they are."""
    runs = {e.run_id for e in events.values() if e.run_id in similarity}
    if len(runs) < 2:
        return
    values = [similarity[run] for run in runs]
    mean = sum(values) / len(values)
    spread = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
    if spread == 0:
        return
    for key, event in events.items():
        if event.run_id in runs and key in scores:
            scores[key] += weight * (similarity[event.run_id] - mean) / spread


def _searchable(event: EventRecord) -> str:
    """What the keyword index reads of a turn (its day, its speaker and its text), lower-cased
    as the query's terms are."""
    return f"{_day(int(event.ts // DAY))} {event.role} {event.content}".lower()


@lru_cache(maxsize=4096)
def _day(day: int) -> str:
    return event_day(day * DAY).lower()


def apply_boosts(
    scores: dict[str, float],
    events: Mapping[str, EventRecord],
    facts: Mapping[str, FactRecord],
    signals: QuerySignals,
    boosts: Boosts,
) -> None:
    """Adjust ``scores`` (fused, by id) in place; ``events``/``facts``: the candidates."""
    if boosts.speakers:
        _speaker_bonus(scores, events, signals, boosts.aliases)
    if boosts.said_by:
        _said_by_bonus(scores, events, signals)
    if boosts.time:
        _time_bonus(scores, events, facts, signals)
    if boosts.told_when:
        _told_when_bonus(scores, events, signals)
    runs = _by_run(events.values())
    if boosts.episodes or boosts.neighbours or boosts.bursts:
        _context_bonus(scores, runs, boosts)
    if boosts.asking:
        _asking_penalty(scores, events)
    if boosts.coverage:
        _coverage_bonus(scores, runs, signals)
