"""Query-aware adjustments of fused scores, from what the candidates' records say.

After fusion (:mod:`shiyi.memory.recall.scoring`) every candidate has a score in z-score units (a
strong match is 2 or more).  These add to it, each switchable for the recall bench
(:class:`~shiyi.memory.recall.config.Boosts`):

* **speakers**: an event said by a person the query names ("What did *Melanie* paint?") gains
  :data:`SPEAKER_BONUS`, unless the query names every speaker among the candidates.  With
  ``aliases``, "Mel", "Melanie's" misspelt or a name the other speaker calls her by name her
  too (:mod:`shiyi.memory.text.people`).
* **time**: an event or fact inside one of the query's time windows, or in a month it names,
  gains :data:`TIME_BONUS`.  A window is widened by :data:`TIME_GRACE` after its end, since
  people tell what happened in the days after.
* **told when**: asked when something happened, with no time of its own ("When did Ana
  start pottery?"), a turn that places an event in time ("I started a pottery class last
  week") gains :data:`TOLD_WHEN_BONUS` (:mod:`shiyi.memory.text.time_words`): the turns that
  only mention the thing later do not answer "when".
* **episodes**: a run (a LoCoMo session, an agent task) is about a few things, so a turn gains
  :data:`EPISODE_SHARE` of the best score in its run: the evidence of a question tends to sit
  where its best match is.
* **neighbours**: a turn gains :data:`NEIGHBOUR_SHARE` of the better of the turns just before
  and after it (when positive): a short reply ("Yes, it was!") means what the turn it answers
  means.

Measured by ``bench/recall_bench.py`` on the LoCoMo dev conversations, each switched off
alone from hybrid's 0.758 (recall@10): speakers +0.025, time windows +0.013 (most of its 46
questions were found anyway), episodes +0.031, neighbours +0.010.  The constants are round
numbers from the middle of ranges that all helped in development (episodes and neighbours
0.1-0.3 each), not fitted values.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime

from shiyi.memory.models import EventRecord, FactRecord
from shiyi.memory.recall.config import Boosts
from shiyi.memory.recall.query_signals import DAY, QuerySignals
from shiyi.memory.text.people import called, named_speakers
from shiyi.memory.text.time_words import says_when

SPEAKER_BONUS = 0.5
TIME_BONUS = 0.6
TIME_GRACE = 10 * DAY
TOLD_WHEN_BONUS = 0.3
"""Half the time window's: saying when is a hint that a turn answers, not that it matches."""
EPISODE_SHARE = 0.2
NEIGHBOUR_SHARE = 0.1
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


def _speaker_bonus(
    scores: dict[str, float],
    events: Mapping[str, EventRecord],
    signals: QuerySignals,
    aliases: bool,
) -> None:
    speakers = {e.role for e in events.values() if e.role not in NOT_SPEAKERS}
    named = speakers & signals.names
    if aliases and signals.people - speakers and speakers:
        turns = [(e.role, e.content) for e in events.values() if e.role in speakers]
        named |= named_speakers(signals.people, speakers, lambda: called(turns, speakers))
    if not named or named == speakers:
        return
    for key, event in events.items():
        if event.role in named:
            scores[key] += SPEAKER_BONUS


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
    if signals.intent != "temporal" or signals.timed:
        return  # a question giving its own time is placed by the time windows
    for key, event in events.items():
        if says_when(event.content):
            scores[key] += TOLD_WHEN_BONUS


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
        for i, event in enumerate(turns):
            if boosts.episodes:
                scores[event.id] += EPISODE_SHARE * best
            if boosts.neighbours:
                around = [
                    base[other.id]
                    for other in turns[max(0, i - 1) : i + 2]
                    if other is not event and _adjacent(event, other)
                ]
                if around and max(around) > 0:
                    scores[event.id] += NEIGHBOUR_SHARE * max(around)


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
    if boosts.time:
        _time_bonus(scores, events, facts, signals)
    if boosts.told_when:
        _told_when_bonus(scores, events, signals)
    if boosts.episodes or boosts.neighbours:
        _context_bonus(scores, _by_run(events.values()), boosts)
