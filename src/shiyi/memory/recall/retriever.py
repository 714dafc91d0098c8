"""Multi-path recall: vector, keyword, graph and recency paths, fused and reranked.

Each path is a separate store query (one combined Cypher query was measured 50x slower);
the paths run side by side and their records load while the vector path still scans (see
:mod:`shiyi.memory.recall.paths`).

A hybrid search reads the query first (:mod:`shiyi.memory.recall.query_signals`: names, time
windows, intent), fuses the paths by score (:func:`~shiyi.memory.recall.scoring.score_fusion`),
adjusts the fused scores by what the candidates' records say (:mod:`shiyi.memory.recall.boosts`:
speakers, time windows, episodes, neighbours) and reranks by kind, confidence and use.
Single-path modes return that path's own order: they are the baselines hybrid must beat.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, wait
from dataclasses import replace
from functools import partial

from shiyi.index.fusion import rrf
from shiyi.index.spelling import read_as
from shiyi.memory.models import (
    EventRecord,
    History,
    MemoryHit,
    NodeKind,
    RelationFilter,
    Scored,
)
from shiyi.memory.protocol import Embedder, MemoryStore
from shiyi.memory.recall.beside import BESIDE_REACH, BESIDE_TOP, turns_beside
from shiyi.memory.recall.boosts import apply_boosts, named_in, run_similarity_bonus
from shiyi.memory.recall.burst_hits import group_bursts
from shiyi.memory.recall.config import MODE_PATHS, MODES, Boosts, Fusion, Mode, RerankWeights
from shiyi.memory.recall.feedback import FEEDBACK_WEIGHT, best_runs, moved_query
from shiyi.memory.recall.framing import asked
from shiyi.memory.recall.graph_hops import bridge, graph_path, query_entities
from shiyi.memory.recall.hits import ARCHIVE_WEIGHT, archives_after_facts, kind_matches, materialize
from shiyi.memory.recall.own_facts import asks_about_me, own_facts_first
from shiyi.memory.recall.paths import Found, Records, run_paths, showable, touch_later
from shiyi.memory.recall.query_signals import QuerySignals, understand
from shiyi.memory.recall.reading import slips_seen, unshouted
from shiyi.memory.recall.scoring import (
    newest_of_equals,
    one_per_run,
    rerank,
    score_fusion,
    turn_about,
    votes_for,
)
from shiyi.memory.recall.speaker_words import NEWEST, SpeakerWords
from shiyi.memory.recall.users_word import users_word_first
from shiyi.memory.recall.widen import widen_crowded
from shiyi.memory.scopes import Viewer
from shiyi.memory.text.echoes import asks_about_runs, terms
from shiyi.memory.text.subjects import USER_NAMES

RECENT_DEPTH = 5  # the recency path only nudges: a handful of the newest turns


class Retriever:
    def __init__(
        self,
        store: MemoryStore,
        embedder: Embedder | None,
        weights: RerankWeights | None = None,
        candidates: int = 40,
        *,
        fusion: Fusion = "score",
        boosts: Boosts | None = None,
        configured: Viewer | None = None,
    ) -> None:
        self.store = store
        self.configured = configured or Viewer()
        """The store's own identity: the only one that walks relations stored without owner."""
        self.embedder = embedder
        self.weights = weights or RerankWeights()
        self.candidates = candidates
        self.fusion: Fusion = fusion
        self.boosts = Boosts() if boosts is None else boosts
        self._touching: Future[None] | None = None
        self._last_vector: tuple[str, list[float]] | None = None
        """The last query and its embedding (one tuple: replaced whole, safe across threads)."""
        self._speakers = SpeakerWords(self._newest_of)

    def search(
        self,
        query: str,
        *,
        mode: Mode = "hybrid",
        kinds: Sequence[str] | None = None,
        limit: int = 5,
        touch: bool = True,
        viewer: Viewer | None = None,
        history: History | None = None,
    ) -> list[MemoryHit]:
        """Fused, reranked memories ``viewer`` may see (default: the default identity).

        Superseded facts are included when ``history`` is true or, by default, when the query
        asks about the past ("where did I live before?"); current facts still rank first.
        ``history="all"`` shows expired facts too (a forget must find every stored copy).
        Between people, a burst's messages (one speaker's pieces in a row) come as one hit
        (:mod:`~shiyi.memory.recall.burst_hits`).
        """
        if mode not in MODE_PATHS:
            raise ValueError(f"unknown mode {mode!r}; use one of {', '.join(MODES)}")
        who = viewer or Viewer()
        query = self._asked(unshouted(query))
        query = read_as(query, self._slips_of(query, who))
        signals = understand(query, partial(self._now, who))
        past = signals.history if history is None else history
        follows = who.relations(self.configured)
        limits = {name: self._limit(name) for name in MODE_PATHS[mode]}
        embedded = self._embedded(query, signals, who)
        searched = self._searched(query, signals, who)

        def ask(name: str, limit: int) -> Found:
            if name == "vector" and embedded != (query,):
                return self._vector(query, who.owners(), limit, texts=embedded)
            return self._path(name, searched if name == "keyword" else query, follows, who, limit)

        found, records = run_paths(self.store, MODE_PATHS[mode], lambda n: ask(n, limits[n]))
        # Ranks count only what may be shown: a superseded version or another user's memory
        # must not push the current, visible one down a path (and so down the fusion).
        everything = list(dict.fromkeys(s.id for path in found.values() for s in path.ranked))
        shown = showable(records, everything, who, past)
        visible = partial(showable, records, viewer=who, history=past)
        # not the recency path: it only nudges, and the store's newest-first read of 320
        # turns took 37 ms at 100k
        crowdable = {name: limit for name, limit in limits.items() if name != "recent"}
        shown = widen_crowded(self.store, found, crowdable, records, shown, ask, visible)
        self._speakers.seen(who, records.events_in(list(shown)))  # only what they may see
        ranked = {name: [s for s in path.ranked if s.id in shown] for name, path in found.items()}
        abstain = _unscored(found, records, shown)
        tasks = self.boosts.spread and len(MODE_PATHS[mode]) > 1 and _runs_are_tasks(records, shown)
        scores, ranks = self._fuse(
            query,
            ranked,
            records,
            signals,
            abstain,
            single=len(ranked) == 1,
            tasks=tasks,
            visible=visible,
            called=self._called(who),
        )
        archives = 1.0 if asks_about_runs(query) else ARCHIVE_WEIGHT
        hits = [
            h
            for h in materialize(scores, ranks, who, past, records, archives)
            if kind_matches(h, kinds)
        ]
        order = rerank(hits, self.weights, recent=signals.recent, prefer=signals.kinds)
        facts = {f.id: f for f in records.facts_in([h.id for h in order if h.node == "fact"])}
        if self.boosts.own_facts and asks_about_me(query, signals.people):
            order = own_facts_first(order, facts, [*USER_NAMES, who.user_id])
        if tasks:
            order = one_per_run(order)
        elif len(ranked) > 1:
            order = self._between_people(order, records, signals)
        best = (order if archives == 1.0 else archives_after_facts(order))[:limit]
        if tasks and not past:
            # among what is shown: a newer turn from below the cut would take an older one's
            # run out of the top k (RealMem dev R@10 0.722 -> 0.718 when the whole order was)
            said_by = signals.said_by if self.boosts.said_by else ""
            best = newest_of_equals(best, _answer_words(query, records, best, said_by))
        if self.boosts.users_word and facts:
            turns = {e.id: e for e in records.events_in([h.id for h in best if h.node == "event"])}
            best = users_word_first(best, facts, turns)
        if touch and best:
            self._touch(best)
        return best

    def _between_people(
        self, order: list[MemoryHit], records: Records, signals: QuerySignals
    ) -> list[MemoryHit]:
        """``order`` with each burst shown as one hit, and the people a question asks about
        together taking turns (:func:`~shiyi.memory.recall.scoring.turn_about`)."""
        if not (self.boosts.grouped or (self.boosts.jointly and signals.jointly)):
            return order
        turns = {e.id: e for e in records.events_in([h.id for h in order if h.node == "event"])}
        if self.boosts.grouped:
            order = group_bursts(order, turns)
        if self.boosts.jointly and signals.jointly:
            _, named = named_in(turns, signals, self.boosts.aliases)
            if len(named) > 1:
                order = turn_about(order, {k: e.role for k, e in turns.items() if e.role in named})
        return order

    def _embedded(self, query: str, signals: QuerySignals, who: Viewer) -> tuple[str, ...]:
        """What the vector path embeds of ``query``: also without the names of ``who``'s
        speakers (:mod:`~shiyi.memory.recall.speaker_words`)."""
        if not self.boosts.speaker_words:
            return (query,)
        return self._speakers.embedded(query, signals, who, aliases=self.boosts.aliases)

    def _searched(self, query: str, signals: QuerySignals, who: Viewer) -> str:
        """What the keyword path searches of ``query``: without the names only others call
        ``who``'s speakers by (:meth:`~.speaker_words.SpeakerWords.searched`)."""
        if not self.boosts.speaker_words:
            return query
        return self._speakers.searched(query, signals, who, aliases=self.boosts.aliases)

    def _called(self, who: Viewer) -> frozenset[str]:
        """What ``who``'s chat calls its speakers by (not their fields): no graph bridge."""
        if not (self.boosts.bridge and self.boosts.aliases):
            return frozenset()
        return frozenset(self._speakers.called(who))

    def _newest_of(self, viewer: Viewer) -> list[EventRecord]:
        return self.store.recent_events(NEWEST, owner=(viewer.user_id, viewer.agent_id))

    def _asked(self, query: str) -> str:
        """What ``query`` asks, without its greeting, request to recall and thanks
        (:mod:`~shiyi.memory.recall.framing`)."""
        return asked(query) if self.boosts.framing else query

    def read_as(self, query: str, viewer: Viewer | None = None) -> dict[str, str]:
        """The typing slips of ``query`` a search reads as words ``viewer``'s memories hold
        (``{"resturant": "restaurant"}``), for telling the user how their question was read;
        empty when it is read as typed."""
        return self._slips_of(self._asked(unshouted(query)), viewer or Viewer())

    def _slips_of(self, query: str, who: Viewer) -> dict[str, str]:
        if not self.boosts.slips:
            return {}
        return slips_seen(self.store, query, who, self.candidates)

    def _now(self, viewer: Viewer | None = None) -> float:
        """What relative times ("last week") count back from: the newest time of the viewer's
        own memories (an imported history asks about its own past; another user's newer
        turns are not their clock), or the clock when they have none."""
        who = viewer or Viewer()
        newest = self.store.recent_events(1, owner=(who.user_id, who.agent_id))
        return newest[0].ts if newest else time.time()

    def _fuse(
        self,
        query: str,
        ranked: dict[str, list[Scored]],
        records: Records,
        signals: QuerySignals,
        abstain: dict[str, set[str]],
        *,
        single: bool,
        tasks: bool,
        visible: Callable[[list[str]], set[str]] | None = None,
        called: frozenset[str] = frozenset(),
    ) -> tuple[dict[str, float], dict[str, dict[str, int]]]:
        """Fused scores, positive and multiplicative (for :func:`rerank`), with ranks.

        ``tasks``: the candidates' runs are tasks (:func:`_runs_are_tasks`) and runs are to be
        spread (``Boosts.spread``).  Then a run does not share its best score with its other
        turns (the episodes boost): that lifts a task's every turn together, while the order
        takes one turn per run (:func:`~shiyi.memory.recall.scoring.one_per_run`), and a run's
        best turn lifted by its own best score only repeats it.  Run coverage stays: it says
        which runs hold more of the question's words, which is what ranks runs.  RealMem dev
        recall@5/10/20, one turn per run first: 0.584 / 0.706 / 0.808 without coverage,
        0.588 / 0.711 / 0.820 with; with the episodes share as well 0.586 / 0.713 / 0.818.
        (LoCoMo dev: not a task memory, both stay; the share is worth 0.025 there.)  Runs
        that are tasks are also ranked by their mean vector's similarity to the query
        (``Boosts.run_similarity``).  ``visible`` (which of some ids the viewer may see): the
        turns beside the best hits join the candidates (:mod:`~shiyi.memory.recall.beside`).
        """
        votes = self._votes(query)
        if self.fusion == "rrf":
            return rrf(ranked, self.weights.rrf_k, votes)
        scores, ranks = score_fusion(ranked, votes, abstain=abstain)
        if not single and scores and visible is not None and not tasks:
            # in a task memory a run's second turn waits for every run's first: none would join
            self._join_beside(scores, ranks, records, visible)
        if not single and scores:
            ids = list(scores)
            events = {e.id: e for e in records.events_in(ids)}
            facts = {f.id: f for f in records.facts_in(ids)}
            boosts = replace(self.boosts, episodes=False) if tasks else self.boosts
            apply_boosts(scores, events, facts, signals, boosts)
            if tasks and self.boosts.run_similarity:
                self._run_similarity(query, scores, events)
            if self.boosts.bridge:
                bridge(self.store, self.candidates, scores, ranks, records, events, signals, called)
        # z-score units become a positive factor scale: rerank's x1.3 is then worth +0.26
        return {key: math.exp(value) for key, value in scores.items()}, ranks

    def _votes(self, query: str) -> Mapping[str, float]:
        if not self.boosts.language or self.embedder is None:
            return self.weights.path_weights
        return votes_for(query, self.weights.path_weights, self.embedder.model_id)

    def _join_beside(
        self,
        scores: dict[str, float],
        ranks: dict[str, dict[str, int]],
        records: Records,
        visible: Callable[[list[str]], set[str]],
    ) -> None:
        """The turns beside the best hits join the candidates at the lowest fused score,
        found by no path (their ``ranks`` name ``beside``, as the graph bridge's ``bridge``)."""
        if not self.boosts.beside or not (self.boosts.neighbours or self.boosts.bursts):
            return
        events = records.events_in(list(scores))
        top = sorted(events, key=lambda e: scores[e.id], reverse=True)[:BESIDE_TOP]
        if not top:
            return
        around = self.store.turns_around([(e.run_id, e.iteration) for e in top], BESIDE_REACH)
        joining = [e for e in turns_beside(top, around) if e.id not in scores]
        records.add_events(joining)
        floor = min(scores.values())
        for key in visible([e.id for e in joining]):
            scores[key] = floor
            ranks[key] = {"beside": 1}

    def _run_similarity(
        self, query: str, scores: dict[str, float], events: dict[str, EventRecord]
    ) -> None:
        if self.embedder is None or not query.strip():
            return
        vector = self._query_vector(query)
        runs = sorted({event.run_id for event in events.values()})
        run_similarity_bonus(scores, events, self.store.run_similarity(runs, vector))
        if self.boosts.feedback and len(runs) > 1:
            centroid = self.store.run_centroid(best_runs(scores, events))
            if centroid:
                moved = self.store.run_similarity(runs, moved_query(vector, centroid))
                run_similarity_bonus(scores, events, moved, FEEDBACK_WEIGHT)

    def _query_vector(self, query: str) -> list[float]:
        """The query's embedding, computed once per search (the vector path asks first)."""
        assert self.embedder is not None
        last = self._last_vector
        if last is not None and last[0] == query:
            return last[1]
        vector = self.embedder.embed([query])[0]
        self._last_vector = (query, vector)
        return vector

    def count_access(self, hits: Sequence[MemoryHit]) -> None:
        """Count a retrieval of ``hits`` that did not search (a cached answer)."""
        if hits:
            self._touch(hits)

    def _touch(self, hits: Sequence[MemoryHit]) -> None:
        """Facts now (their counts feed reranking and promotion); events in the background."""
        at = time.time()
        facts = [h.id for h in hits if h.node == "fact"]
        if facts:
            self.store.touch(facts, at=at)
        events = [i for h in hits if h.node == "event" for i in (h.id, *h.joined)]
        if events:
            self._touching = touch_later(self.store, events, at)

    def flush(self) -> None:
        """Wait until the access counts of earlier searches are written."""
        if self._touching is not None:
            wait([self._touching])

    # --- recall paths ------------------------------------------------------------------

    def _limit(self, name: str) -> int:
        """How many ids a path is first asked for."""
        return RECENT_DEPTH if name == "recent" else self.candidates

    def _path(
        self, name: str, query: str, follows: RelationFilter, who: Viewer, limit: int
    ) -> Found:
        """Path ``name``'s best ``limit`` for ``query``: the keyword, vector and recency paths
        search only what viewer ``who`` owns, so another user's memories cannot crowd its own
        out."""
        owners = who.owners()
        if name == "vector":
            return self._vector(query, owners, limit)
        if name == "keyword":
            found = self.store.keyword_search(query, limit, owners)
            return Found(
                found,
                {s.id for s in found if s.node == "event"},
                {s.id for s in found if s.node == "fact"},
            )
        if name == "graph":
            return graph_path(self.store, query, follows, (who.user_id, who.agent_id), limit)
        newest = self.store.recent_events(limit, owner=(who.user_id, who.agent_id))
        recent = {e.id: e for e in newest}
        return Found([Scored(e.id, e.ts) for e in recent.values()], set(recent), records=recent)

    def _vector(
        self, query: str, owners: frozenset[str], limit: int, texts: tuple[str, ...] = ()
    ) -> Found:
        """The nearest events and facts to ``query``'s embedding; with ``texts`` (the query
        also without its speakers' names, :mod:`~shiyi.memory.recall.speaker_words`), to the
        direction of the sum of their embeddings."""
        if self.embedder is None or not query.strip():
            return Found([])
        vector = self._query_vector(query)
        if texts and texts != (query,):
            others = [t for t in texts if t != query]
            vectors = self.embedder.embed(others) + ([vector] if query in texts else [])
            summed = [sum(parts) for parts in zip(*vectors, strict=True)]
            norm = math.sqrt(sum(x * x for x in summed)) or 1.0
            vector = [x / norm for x in summed]  # a unit vector, as every embedding is
        events = self.store.vector_search("event", vector, limit, owners)
        facts = self.store.vector_search("fact", vector, limit, owners)
        merged = sorted(events + facts, key=lambda s: s.score, reverse=True)
        complete: set[NodeKind] = set()
        complete |= {"event"} if len(events) < limit else set()
        complete |= {"fact"} if len(facts) < limit else set()
        return Found(
            merged[:limit],
            {s.id for s in events},
            {s.id for s in facts},
            exhaustive=frozenset(complete),
            cut={s.id for s in merged[limit:]},
        )

    def query_entities(self, query: str) -> list[str]:
        """Known entities named in the query (:func:`~.graph_hops.query_entities`)."""
        return query_entities(self.store, query)


AGENT_ROLES = frozenset({"user", "assistant", "tool"})


def _runs_are_tasks(records: Records, ids: set[str]) -> bool:
    """Whether most candidate turns are a user's and an assistant's: then a run is one task
    or one thread of work, its turns repeat each other's subject, and a question about that
    work ("what did we settle so far?") is answered across runs, so each run enters the top
    once before any enters twice (:func:`~shiyi.memory.recall.scoring.one_per_run`).  Between
    people a run is a day's chat over many subjects, and turns of the same day are separate
    evidence (LoCoMo dev recall@10 0.766 without spreading, 0.722 with a softer spread;
    RealMem dev, a user and an assistant: 0.595 without, 0.706 with one turn per run)."""
    roles = [event.role for event in records.events_in(list(ids))]
    return bool(roles) and sum(role in AGENT_ROLES for role in roles) * 2 > len(roles)


def _answer_words(
    query: str, records: Records, hits: Sequence[MemoryHit], said_by: str = ""
) -> dict[str, frozenset[str]]:
    """Per turn among ``hits``, the question's words (stems) it holds, when it holds at least
    half of them (and two): a turn that answers the question rather than sharing a word
    with it.  Two turns holding the same such words are told apart only by time
    (:func:`~shiyi.memory.recall.scoring.newest_of_equals`).  ``said_by``: the role whose
    words the question asks about ("what you suggested": the assistant's); the other
    role's turns answer nothing, so a user's later mention does not take the place of the
    assistant's suggestion (:mod:`~shiyi.memory.recall.addressed`)."""
    asked = terms(query)
    need = max(2, (len(asked) + 1) // 2)
    held: dict[str, frozenset[str]] = {}
    for event in records.events_in([hit.id for hit in hits if hit.node == "event"]):
        if said_by and event.role != said_by:
            continue
        words = asked & terms(event.content)
        if len(words) >= need:
            held[event.id] = words
    return held


def _unscored(found: dict[str, Found], records: Records, shown: set[str]) -> dict[str, set[str]]:
    """Per path, the shown candidates it could not score: records of a kind it returned in
    full (it ran out before its limit) that it still missed, such as a fact stored a moment
    ago whose vector the worker has not computed yet."""
    kinds: dict[str, NodeKind] = {key: "fact" for key in records.facts}
    kinds.update((key, "event") for key in records.events)
    unscored: dict[str, set[str]] = {}
    for name, path in found.items():
        if path.exhaustive:
            scored = {item.id for item in path.ranked} | path.cut
            unscored[name] = {
                key for key in shown if key not in scored and kinds.get(key) in path.exhaustive
            }
    return unscored
