"""A burst's pieces among the hits shown as one hit (:mod:`shiyi.memory.recall.burst_hits`)."""

from __future__ import annotations

from shiyi.memory.models import EventRecord, MemoryHit
from shiyi.memory.recall.boosts import BURST_GAP
from shiyi.memory.recall.burst_hits import group_bursts

AT = 1_683_550_800.0  # 8 May 2023


def sent(key: str, role: str, iteration: int, text: str, ts: float = AT) -> EventRecord:
    return EventRecord(key, "conv", "s1", ts, role, text, "imported", iteration)


def hit(event: EventRecord, score: float) -> MemoryHit:
    return MemoryHit(id=event.id, node="event", text=f"{event.role}: {event.content}", ts=event.ts,
                     score=score, anchor=event.anchor)  # fmt: skip


def grouped(ranked: list[tuple[EventRecord, float]]) -> list[MemoryHit]:
    return group_bursts([hit(e, s) for e, s in ranked], {e.id: e for e, _ in ranked})


CHAT = [
    sent("hi", "gina", 0, "how was the weekend?"),
    sent("lake", "jon", 1, "we went to the lake"),
    sent("trout", "jon", 2, "caught 3 trout!!"),
    sent("calm", "jon", 3, "so peaceful"),
    sent("nice", "gina", 4, "omg nice"),
    sent("later", "jon", 5, "anyway, work tomorrow"),  # after her reply: a burst of its own
]
BY_KEY = {e.id: e for e in CHAT}


def test_the_best_piece_shows_its_burst_in_the_order_sent_and_takes_one_place() -> None:
    order = [("trout", 3.0), ("nice", 2.5), ("lake", 2.0), ("later", 1.5), ("calm", 1.0)]
    hits = grouped([(BY_KEY[k], s) for k, s in order])
    assert [h.id for h in hits] == ["trout", "nice", "later"]
    best = hits[0]
    assert best.joined == ["lake", "calm"]
    assert best.text == "Jon: we went to the lake\ncaught 3 trout!!\nso peaceful"
    assert best.score == 3.0  # its own place and score
    assert hits[1].text == "gina: omg nice" and hits[1].joined == []


def test_only_the_pieces_among_the_hits_are_shown() -> None:
    hits = grouped([(BY_KEY["trout"], 2.0), (BY_KEY["lake"], 1.0)])
    assert [h.id for h in hits] == ["trout"]
    assert hits[0].text == "Jon: we went to the lake\ncaught 3 trout!!"
    # with the middle piece no hit, who said the turn between is not known: two hits
    assert len(grouped([(BY_KEY["calm"], 2.0), (BY_KEY["lake"], 1.0)])) == 2


def test_a_pause_a_reply_or_a_tool_call_ends_a_burst() -> None:
    pause = [sent("a", "jon", 0, "we went to the lake"),
             sent("b", "jon", 1, "hey u there", ts=AT + BURST_GAP + 60)]  # fmt: skip
    assert [h.id for h in grouped([(pause[0], 2.0), (pause[1], 1.0)])] == ["a", "b"]
    replied = [BY_KEY["lake"], BY_KEY["nice"], BY_KEY["later"]]
    assert len(grouped([(e, 1.0) for e in replied])) == 3
    tool = [EventRecord("ask", "conv", "r1", AT, "assistant", "search", "tool_call", 0),
            EventRecord("said", "conv", "r1", AT, "assistant", "Done.", "response", 1)]  # fmt: skip
    assert [h.id for h in grouped([(tool[0], 2.0), (tool[1], 1.0)])] == ["ask", "said"]


def test_facts_keep_their_places() -> None:
    hits = [
        hit(BY_KEY["lake"], 3.0),
        MemoryHit(id="f1", node="fact", text="Jon likes fishing", ts=AT, score=2.0),
        hit(BY_KEY["trout"], 1.0),
    ]
    out = group_bursts(hits, {k: BY_KEY[k] for k in ("lake", "trout")})
    assert [(h.id, h.joined) for h in out] == [("lake", ["trout"]), ("f1", [])]
