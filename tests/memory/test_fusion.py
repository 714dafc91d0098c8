from __future__ import annotations

from shiyi.memory.fusion import RerankWeights, rerank, rrf
from shiyi.memory.models import MemoryHit, Scored

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
