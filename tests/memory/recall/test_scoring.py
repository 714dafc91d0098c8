from __future__ import annotations

import pytest

from shiyi.index.fusion import rrf
from shiyi.memory.models import Anchor, MemoryHit, Scored
from shiyi.memory.recall.config import DEFAULT_PATH_WEIGHTS, RerankWeights
from shiyi.memory.recall.scoring import (
    newest_of_equals,
    one_per_run,
    placed_scores,
    rerank,
    score_fusion,
    turn_about,
    votes_for,
)

DAY = 86400.0


def test_rrf_rewards_agreement_between_paths() -> None:
    scores, ranks = rrf(
        {
            "vector": [Scored("a", 0.9), Scored("b", 0.8)],
            "keyword": [Scored("b", 5.0), Scored("c", 4.0)],
        },
        k=60,
    )
    assert max(scores, key=scores.__getitem__) == "b"
    assert ranks["b"] == {"vector": 2, "keyword": 1}
    assert scores["a"] == 1 / 61


def test_recency_is_measured_from_the_newest_memory_not_the_clock() -> None:
    # An imported history from years ago: the latest of its turns still gets the boost.
    old, older = 1_000_000_000.0, 1_000_000_000.0 - 365 * DAY
    hits = [MemoryHit("x", "event", "", older, score=1.0), MemoryHit("y", "event", "", old, 1.0)]
    ranked = rerank(hits, RerankWeights())
    assert [h.id for h in ranked] == ["y", "x"]
    assert ranked[0].score > 1.29  # full recency boost (1 + 0.3 * 1.0)


def test_procedures_outrank_episodes_and_confidence_matters() -> None:
    ts = 1_000.0
    hits = [
        MemoryHit("e", "event", "", ts, score=1.0),
        MemoryHit("p", "fact", "", ts, score=1.0, fact_kind="procedural"),
        MemoryHit("low", "fact", "", ts, score=1.0, fact_kind="procedural", confidence=0.2),
    ]
    assert [h.id for h in rerank(hits, RerankWeights())] == ["p", "e", "low"]


def test_frequently_used_memories_rank_higher() -> None:
    hits = [
        MemoryHit("rare", "fact", "", 0.0, score=1.0, fact_kind="semantic"),
        MemoryHit("used", "fact", "", 0.0, score=1.0, fact_kind="semantic", access_count=20),
    ]
    assert rerank(hits, RerankWeights())[0].id == "used"


def test_score_fusion_follows_a_match_that_stands_out() -> None:
    # keyword: "x" stands far above the rest; vector: "a" and "x" nearly level at the top
    keyword = [Scored("x", 12.0), Scored("a", 3.0), Scored("b", 2.9), Scored("c", 2.8)]
    vector = [Scored("a", 0.60), Scored("x", 0.59), Scored("b", 0.40), Scored("c", 0.39)]
    scores, ranks = score_fusion({"keyword": keyword, "vector": vector})
    assert sorted(scores, key=scores.__getitem__, reverse=True)[:2] == ["x", "a"]
    assert scores["x"] - scores["a"] > 0.5
    assert ranks["x"] == {"keyword": 1, "vector": 2}
    # RRF sees ranks only: first and second place swapped between paths is a tie
    rrf_scores, _ = rrf({"keyword": keyword, "vector": vector}, k=60)
    assert rrf_scores["a"] == pytest.approx(rrf_scores["x"])


def test_an_id_a_path_missed_gets_that_paths_lowest_score() -> None:
    keyword = [Scored("a", 9.0), Scored("b", 5.0), Scored("c", 1.0)]
    vector = [Scored("d", 0.9), Scored("b", 0.5)]
    scores, _ = score_fusion({"keyword": keyword, "vector": vector})
    # "d" is best by vector but missed by keyword: it counts as keyword's last, like "c"
    assert scores["a"] > scores["c"]
    assert scores["b"] > scores["c"]
    assert scores["d"] > scores["c"]


def test_recency_breaks_ties_but_never_lifts_a_weak_match() -> None:
    keyword = [Scored("strong", 10.0), Scored("weak", 5.0)]
    keyword += [Scored(f"other{i}", 4.0 - i) for i in range(4)]
    scores, ranks = score_fusion({"keyword": keyword, "recent": [Scored("weak", 1.0)]})
    assert scores["strong"] > scores["weak"] > scores["other0"]
    assert "recent" in ranks["weak"]
    # found only by the recency path: it counts as the keyword path's last, and no more
    scores, _ = score_fusion({"keyword": keyword, "recent": [Scored("new", 1.0)]})
    assert scores["new"] < scores["other2"]


def test_the_graph_votes_with_half_the_weight_of_a_text_path() -> None:
    keyword = [Scored("a", 3.0), Scored("b", 2.0), Scored("c", 1.0)]
    graph = [Scored("c", 3.0), Scored("b", 2.0), Scored("a", 1.0)]
    scores, ranks = score_fusion({"keyword": keyword, "graph": graph}, DEFAULT_PATH_WEIGHTS)
    assert ranks["c"]["graph"] == 1
    # mirrored orders: the full-weight keyword path decides, the graph narrows the gap
    assert scores["a"] > scores["b"] > scores["c"]
    alone, _ = score_fusion({"keyword": keyword})
    assert scores["a"] - scores["c"] < alone["a"] - alone["c"]


def test_recency_is_a_tie_breaker_unless_the_query_asks_for_it() -> None:
    old, new = 1_000_000_000.0 - 365 * DAY, 1_000_000_000.0

    def hits() -> list[MemoryHit]:
        return [
            MemoryHit("better", "event", "", old, score=1.10),
            MemoryHit("newer", "event", "", new, score=1.0),
        ]

    assert rerank(hits(), RerankWeights(), recent=False)[0].id == "better"
    assert rerank(hits(), RerankWeights(), recent=True)[0].id == "newer"


def test_the_kind_an_intent_prefers_wins_a_tie() -> None:
    hits = [
        MemoryHit("fact", "fact", "", 0.0, score=1.0, fact_kind="semantic"),
        MemoryHit("howto", "fact", "", 0.0, score=1.0, fact_kind="episodic"),
    ]
    assert rerank(hits, RerankWeights(), prefer=("episodic",))[0].id == "howto"


def test_a_path_that_found_one_memory_still_votes_for_it() -> None:
    # keyword found only the fact naming the rare word; vector slightly prefers two turns
    keyword = [Scored("fact", 7.5)]
    vector = [Scored("turn1", 0.42), Scored("turn2", 0.41), Scored("fact", 0.40)]
    vector += [Scored(f"other{i}", 0.2 - i / 100) for i in range(5)]
    scores, _ = score_fusion({"keyword": keyword, "vector": vector})
    assert max(scores, key=scores.__getitem__) == "fact"
    # and when every found memory scores alike, each still beats the ones missed
    tied, _ = score_fusion({"keyword": [Scored("a", 2.0), Scored("b", 2.0)], "vector": vector})
    assert tied["a"] == tied["b"] > tied["other0"]


def _turn(key: str, run: str, score: float) -> MemoryHit:
    anchor = Anchor("s", run, 1, 0, "user", 0.0)
    return MemoryHit(id=key, node="event", text=key, ts=0.0, score=score, anchor=anchor)


def test_each_run_enters_the_top_once_before_any_enters_twice() -> None:
    # The trip was planned in one long session and its budget settled in a later one.
    hits = [
        _turn("flights", "planning", 1.00),
        _turn("hotel", "planning", 0.95),
        _turn("packing", "planning", 0.90),
        _turn("budget", "budget-talk", 0.80),
        _turn("visa", "papers", 0.30),
    ]
    order = [h.id for h in one_per_run(hits)]
    assert order == ["flights", "budget", "visa", "hotel", "packing"]
    assert [h.score for h in hits] == [1.00, 0.95, 0.90, 0.80, 0.30]  # scores untouched


def test_second_hits_follow_in_score_order_then_third_hits() -> None:
    hits = [
        _turn("a1", "a", 3.0),
        _turn("a2", "a", 2.9),
        _turn("b1", "b", 2.0),
        _turn("a3", "a", 1.9),
        _turn("b2", "b", 1.0),
        _turn("b3", "b", 0.5),
    ]
    assert [h.id for h in one_per_run(hits)] == ["a1", "b1", "a2", "b2", "a3", "b3"]


def test_facts_without_an_anchor_never_yield() -> None:
    fact = MemoryHit(id="f", node="fact", text="lives in Oslo", ts=0.0, score=0.9)
    later = MemoryHit(id="g", node="fact", text="works at home", ts=0.0, score=0.6)
    hits = [_turn("a", "one", 1.0), fact, _turn("b", "one", 0.95), later, _turn("c", "two", 0.5)]
    assert [h.id for h in one_per_run(hits)] == ["a", "f", "g", "c", "b"]


def test_one_run_alone_keeps_its_order() -> None:
    hits = [_turn("a", "one", 1.0), _turn("b", "one", 0.95), _turn("c", "one", 0.8)]
    assert [h.id for h in one_per_run(hits)] == ["a", "b", "c"]
    assert one_per_run([]) == []


def _said(key: str, ts: float, score: float) -> MemoryHit:
    anchor = Anchor("s", key, 1, 0, "user", ts)
    return MemoryHit(id=key, node="event", text=key, ts=ts, score=score, anchor=anchor)


def test_turns_holding_the_same_words_of_the_question_come_newest_first() -> None:
    # "budget of 2,000" (day 1) scored above "budget is now 2,500" (day 9); "dates" between
    hits = [_said("old", 1 * DAY, 5.0), _said("dates", 5 * DAY, 4.0), _said("new", 9 * DAY, 3.0)]
    same = frozenset({"budget", "portug", "trip"})
    order = newest_of_equals(hits, {"old": same, "new": same, "dates": frozenset({"trip"})})
    assert [h.id for h in order] == ["new", "dates", "old"]  # the pair swaps places
    assert [h.score for h in order] == [3.0, 4.0, 5.0]  # scores untouched


def test_turns_holding_different_words_or_none_keep_their_order() -> None:
    hits = [_said("old", 1 * DAY, 5.0), _said("new", 9 * DAY, 3.0), _said("x", 10 * DAY, 1.0)]
    words = {"old": frozenset({"budget", "agre"}), "new": frozenset({"budget", "now"})}
    assert [h.id for h in newest_of_equals(hits, words)] == ["old", "new", "x"]
    fact = MemoryHit(id="f", node="fact", text="budget", ts=20 * DAY, score=0.5)
    same = frozenset({"budget", "trip"})
    order = newest_of_equals([hits[0], fact], {"old": same, "f": same})
    assert [h.id for h in order] == ["old", "f"]  # facts have their own versions


@pytest.mark.parametrize(
    ("query", "vector"),
    [
        ("Kapan istri saya jualan di pasar?", 0.0),  # Indonesian: the keyword path's to answer
        ("Bagaimana dengan motor saya yang mogok?", 0.4),  # "dengan", "yang", "mogok" unknown
        ("When does my wife sell cakes at the market?", 1.0),
        ("When did Mel go on a roadtrip to destress?", 1.0),  # two words new to the list
        ("What fields would she persue in her educaton?", 1.0),  # two slips
        ("Pak Budi?", 1.0),  # nothing to judge by
    ],
)
def test_an_english_only_embedder_votes_by_the_share_of_the_question_in_english(
    query: str, vector: float
) -> None:
    votes = votes_for(query, DEFAULT_PATH_WEIGHTS, "all-MiniLM-L6-v2")
    assert votes["vector"] == pytest.approx(DEFAULT_PATH_WEIGHTS["vector"] * vector)
    assert {k: v for k, v in votes.items() if k != "vector"} == {
        k: v for k, v in DEFAULT_PATH_WEIGHTS.items() if k != "vector"
    }


@pytest.mark.parametrize("model", ["text-embedding-3-small", "bge-m3", None])
def test_an_embedder_that_reads_other_languages_keeps_its_whole_vote(model: str | None) -> None:
    assert votes_for("Kapan istri saya jualan di pasar?", DEFAULT_PATH_WEIGHTS, model) == (
        DEFAULT_PATH_WEIGHTS
    )


def test_people_asked_about_together_take_turns_in_score_order() -> None:
    # Gina's turns match "dance" far better; Jon's one turn about it came fourth.
    hits = [
        _turn(key, "chat", score)
        for key, score in [
            ("g1", 3.0),
            ("g2", 2.8),
            ("g3", 2.5),
            ("j1", 1.0),
            ("g4", 0.9),
            ("j2", 0.5),
        ]
    ]
    speaker_of = {"g1": "gina", "g2": "gina", "g3": "gina", "g4": "gina", "j1": "jon", "j2": "jon"}
    order = [h.id for h in turn_about(hits, speaker_of)]
    assert order == ["g1", "j1", "g2", "j2", "g3", "g4"]
    assert [h.score for h in hits] == [3.0, 2.8, 2.5, 1.0, 0.9, 0.5]  # scores untouched


def test_hits_of_no_person_asked_about_take_turns_as_one_more() -> None:
    fact = MemoryHit(id="f", node="fact", text="Gina owns a store", ts=0.0, score=2.9)
    hits = [_turn("g1", "chat", 3.0), fact, _turn("g2", "chat", 2.0), _turn("j1", "chat", 1.0)]
    order = [h.id for h in turn_about(hits, {"g1": "gina", "g2": "gina", "j1": "jon"})]
    assert order == ["g1", "f", "j1", "g2"]


def test_scores_are_handed_out_by_place_after_a_reorder() -> None:
    hits = [_said("old", 1 * DAY, 5.0), _said("dates", 5 * DAY, 4.0), _said("new", 9 * DAY, 3.0)]
    same = frozenset({"budget", "trip"})
    placed = placed_scores(newest_of_equals(hits, {"old": same, "new": same}))
    assert [(h.id, h.score) for h in placed] == [("new", 5.0), ("dates", 4.0), ("old", 3.0)]
    assert [h.score for h in hits] == [5.0, 4.0, 3.0]  # the hits passed in are not changed
    assert placed_scores([]) == []
