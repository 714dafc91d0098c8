"""The graph's two uses in recall: a path of its own, and a bridge to a second hop.

* :func:`graph_path`: the viewer's turns and facts around the query's entities and, one
  RELATED_TO hop on, the entities the viewer's own relations tie them to.
* :func:`bridge`: the second hop of a multi-hop question ("what did the puppy Jon's sister
  adopted chew?"): the names a best match mentions but the query does not (the puppy's name)
  lead to other turns that mention them, which gain a share of that match's score.
"""

from __future__ import annotations

from shiyi.index.text import query_terms, stem_word
from shiyi.memory.models import EventRecord, RelationFilter, Scored
from shiyi.memory.protocol import MemoryStore
from shiyi.memory.recall.paths import Found, Records
from shiyi.memory.recall.query_signals import QuerySignals
from shiyi.memory.text.entities import extract_entities, normalize_name
from shiyi.memory.text.topics import extract_topics

BRIDGE_SEEDS = 1
"""How many of the best matches the graph bridge starts from."""
BRIDGE_SHARE = 0.3
"""What a bridged turn gains, as a share of its seed's fused score."""
BEHIND_SEED = 0.01
"""How far (fused score, z units) a bridged turn stays behind the match it was reached from:
a second hop never overtakes its first (two friends' lessons at one school put hers above his
when his was asked about)."""


def query_entities(store: MemoryStore, query: str) -> list[str]:
    """Known entities named in the query: extracted names and topics, plus plain terms and
    their stems that match (a topic's key is a stem: "camped" finds "camping")."""
    names = {e.name for e in [*extract_entities(query), *extract_topics(query)]}
    terms = query_terms(query)
    names |= {normalize_name(term) for term in terms} | {stem_word(term) for term in terms}
    known = store.find_entities(sorted(n for n in names if n))
    return [entity.name for entity in known]


def graph_path(
    store: MemoryStore, query: str, follows: RelationFilter, owner: tuple[str, str], limit: int
) -> Found:
    """The viewer's (``owner``'s) turns and facts around the query's entities and, one
    RELATED_TO hop on, the entities the viewer's own relations tie them to (never another
    user's relations)."""
    names = query_entities(store, query)
    if not names:
        return Found([])
    around = store.neighbourhood(names, hops=2, limit=limit, follows=follows, owner=owner)
    merged = [*around.event_ids, *around.fact_ids]
    return Found(
        sorted(merged, key=lambda s: s.score, reverse=True)[:limit],
        {s.id for s in around.event_ids},
        {s.id for s in around.fact_ids},
    )


def bridge(
    store: MemoryStore,
    candidates: int,
    scores: dict[str, float],
    ranks: dict[str, dict[str, int]],
    records: Records,
    events: dict[str, EventRecord],
    signals: QuerySignals,
    called: frozenset[str] = frozenset(),
) -> None:
    """The entities a best match mentions but the query does not name lead to up to
    ``candidates`` other turns that mention them, which gain a share of that match's score
    (and join the candidates if no path found them; their ``ranks`` name ``bridge``).

    Neither a speaker field nor what the chat ``called`` a speaker is a bridge: "Thanks,
    Caroline!" names the one addressed, and every turn addressed to her would be a second
    hop from every other.  LoCoMo dev with speaker fields ``user_1``/``user_2`` (the chat
    calls them Caroline, Melanie), R@10 0.816 -> 0.827, six questions gained in all three
    conversations, one lost; named by their fields 0.836 -> 0.833 (that one: its evidence
    said "Mel", the addressee, and was bridged from another turn saying "Mel"); asked by
    nicknames unchanged."""
    speakers = {e.role for e in events.values()} | called
    seeds = sorted(events, key=scores.__getitem__, reverse=True)[:BRIDGE_SEEDS]
    gains: dict[str, tuple[float, int, float]] = {}
    for seed in seeds:
        if scores[seed] <= 0:
            break
        names = [
            n
            for n in _named_in(records.events[seed].content)
            if n not in signals.names and n not in speakers
        ]
        if not names:
            continue
        gain = BRIDGE_SHARE * scores[seed]
        said = records.events[seed]  # the viewer's: the turns it leads to are theirs too
        found = store.neighbourhood(
            names, hops=1, limit=candidates, owner=(said.user_id, said.agent_id)
        )
        for rank, item in enumerate(found.event_ids, start=1):
            if item.id not in seeds and gain > gains.get(item.id, (0.0, 0, 0.0))[0]:
                gains[item.id] = (gain, rank, scores[seed] - BEHIND_SEED)
    fresh = [key for key in gains if key not in scores]
    if fresh:
        records.load(store, [Found([Scored(k, 0.0) for k in fresh], set(fresh))])
    floor = min(scores.values())
    for key, (gain, rank, ceiling) in gains.items():
        if key in records.events:
            now = scores.get(key, floor)
            scores[key] = max(now, min(now + gain, ceiling))
            ranks.setdefault(key, {})["bridge"] = rank


def _named_in(text: str) -> list[str]:
    """Names (not topics) in a turn: a bridge over every topic of the best match led to turns
    that merely share a common word (LoCoMo dev recall@10 0.757 with, 0.765 without)."""
    return [entity.name for entity in extract_entities(text)]
