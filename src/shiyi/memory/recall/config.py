"""What a recall runs with, in one place: the mode table, the rerank weights and the boosts.

* :data:`MODE_PATHS`: which recall paths each mode runs (:mod:`~shiyi.memory.recall.paths`).
  ``hybrid`` runs them all and fuses them; the single-path modes are the baselines it must beat.
* :class:`RerankWeights`: how much each path's vote counts in the fusion
  (:mod:`~shiyi.memory.recall.scoring`) and how kind, recency and use rerank the fused memories.
* :class:`Boosts`: which query-aware adjustments of the fused scores run
  (:mod:`~shiyi.memory.recall.boosts`); the recall bench turns each off in turn.

The values are the measured defaults; ``bench/recall_bench.py`` builds its variants from these.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Literal, TypeAlias

Mode: TypeAlias = Literal["hybrid", "semantic", "graph", "recent", "keyword"]
Fusion: TypeAlias = Literal["score", "rrf"]
MODES: tuple[Mode, ...] = ("hybrid", "semantic", "graph", "recent", "keyword")
MODE_PATHS: dict[Mode, tuple[str, ...]] = {
    "hybrid": ("vector", "keyword", "graph", "recent"),
    "semantic": ("vector",),
    "keyword": ("keyword",),
    "graph": ("graph",),
    "recent": ("recent",),
}

# Procedures beat general knowledge, which beats what merely happened (seed 001, 3.1).
DEFAULT_KIND_WEIGHTS: dict[str, float] = {
    "procedural": 1.3,
    "preference": 1.15,
    "convention": 1.15,
    "decision": 1.15,
    "semantic": 1.1,
    "todo": 1.05,
    "episodic": 1.0,
    "event": 1.0,
}


# How much each recall path's vote counts in the fusion (RRF uses all four; score fusion
# lets recency only break ties).  Graph at 0.5: on the LoCoMo dev set recall@10 was 0.764
# at 0.25, 0.767 at 0.5 and 0.763 at 1.0.
DEFAULT_PATH_WEIGHTS: dict[str, float] = {
    "vector": 1.0,
    "keyword": 1.0,
    "graph": 0.5,
    "recent": 0.25,
}


@dataclass(slots=True, frozen=True)
class RerankWeights:
    rrf_k: int = 60
    path_weights: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_PATH_WEIGHTS))
    recency_half_life_days: float = 30.0
    recency_weight: float = 0.3
    """Recency's full boost, used when the query asks for what is recent ("latest",
    "currently"); otherwise :attr:`recency_tie_weight` applies."""
    recency_tie_weight: float = 0.02
    """A tie-breaker: a 30% boost for the newest turn pushed older, better matches out of an
    imported history (hybrid below keyword alone on real conversations)."""
    frequency_weight: float = 0.05
    """Small: every retrieval counts as a use, so a larger boost lets often-shown memories
    crowd out better matches (lifecycle bench: 0.1 ranked the current value first in 92%
    of queries, 0.05 in 98%)."""
    kind_weights: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_KIND_WEIGHTS))


@dataclass(slots=True, frozen=True)
class Boosts:
    """Which adjustments run (all by default; the recall bench turns each off in turn)."""

    framing: bool = True
    """A question is searched without its greeting, its request to recall ("do you
    remember", "can you remind me") and its thanks (:mod:`shiyi.memory.recall.framing`)."""
    slips: bool = True
    """A question's typing slips are read as the words the memory holds before any path
    searches (:mod:`shiyi.index.spelling`; the keyword index reads them anyway)."""
    language: bool = True
    """An English-only embedder's vote counts by the share of the question that is English
    (:func:`~shiyi.memory.recall.scoring.votes_for`): a question in Indonesian is the
    keyword path's to answer."""
    speakers: bool = True
    aliases: bool = True
    """The speaker boost also finds people named otherwise than their speaker field: nicknames,
    short forms, near-spellings, what the conversation calls them
    (:mod:`shiyi.memory.text.people`)."""
    speaker_words: bool = True
    """The vector path embeds a question also without the words that name a speaker of the
    asker's memory, and searches with both (:mod:`shiyi.memory.recall.speaker_words`); a name
    only others call a speaker by is left out of both, and out of the keyword search."""
    time: bool = True
    told_when: bool = True
    """A "when" question favours turns that place an event in time
    (:mod:`shiyi.memory.text.time_words`), a "how often" one turns that give a rate
    (:mod:`shiyi.memory.text.how_often`)."""
    episodes: bool = True
    neighbours: bool = True
    bursts: bool = True
    """A message takes a share of the best other message of its burst (one speaker's messages
    in a row, as people chat in pieces), beside what it takes of its neighbours."""
    own_facts: bool = True
    """Asked about themself ("where do I live?"), the user's own facts of an attribute come
    before someone else's (:mod:`shiyi.memory.recall.own_facts`)."""
    users_word: bool = True
    """A fact the user stated comes before the assistant's turns on its topic (a small
    model's wrong answer, stored as a turn, had outranked it:
    :mod:`shiyi.memory.recall.users_word`)."""
    jointly: bool = True
    """A question about what several named people each or all did ("What do Jon and Gina
    both like?") lets their turns take turns in the top k
    (:func:`~shiyi.memory.recall.scoring.turn_about`), so one person's matches do not fill
    it."""
    grouped: bool = True
    """A burst's pieces among the hits are shown as one hit, its best piece's place
    (:mod:`shiyi.memory.recall.burst_hits`), so one thing said in pieces takes one place of
    the top k."""
    beside: bool = True
    """The turns just before and after the best hits, and the rest of their bursts, join the
    candidates though no path found them (:mod:`shiyi.memory.recall.beside`), so the two
    above can lift them."""
    asking: bool = True
    """A short turn that only asks ("how's the cello going?") loses :data:`ASKING_PENALTY`
    after its answer took its share of it (:mod:`shiyi.memory.recall.boosts`): it names the
    subject and holds no answer."""
    coverage: bool = True
    """A run whose candidate turns together hold the query's rarer words gains
    (:mod:`shiyi.memory.recall.boosts`); in a task memory it ranks the runs that
    ``spread`` then takes one turn of each."""
    bridge: bool = True
    """Two hops through the graph (:mod:`shiyi.memory.recall.retriever`): the best matches' entities
    lead to other turns that mention them."""
    run_similarity: bool = True
    """In a user–assistant memory, a run whose turns, averaged, lie nearer the query gains
    (:func:`~shiyi.memory.recall.boosts.run_similarity_bonus`)."""
    feedback: bool = True
    """In a user–assistant memory, the query moved towards what its best runs are about
    ranks the runs too (:mod:`shiyi.memory.recall.feedback`)."""
    said_by: bool = True
    """In a user–assistant memory, a question about what "you" said or made favours the
    assistant's turns, one about what "I" said the user's
    (:mod:`shiyi.memory.recall.addressed`)."""
    spread: bool = True
    """In a user–assistant memory, one task does not fill the top k
    (:func:`~shiyi.memory.recall.scoring.one_per_run`: every run enters once before any
    enters twice), nor lift its every turn (no ``episodes`` share there)."""

    @classmethod
    def none(cls) -> Boosts:
        """Every adjustment off (a field added later is off here too)."""
        return cls(**{f.name: False for f in fields(cls)})
