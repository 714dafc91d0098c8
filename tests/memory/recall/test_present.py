"""How memories read to the model (the ``<memory>`` block)."""

from __future__ import annotations

from shiyi.memory.models import Anchor, MemoryHit
from shiyi.memory.recall.present import format_hits

NOW = 1_800_000_000.0
ANCHOR = Anchor("s1", "run_abc", 0, 1, "text", NOW - 60)
HITS = [
    MemoryHit("fact_1", "fact", "The user drinks tea", NOW - 60, fact_kind="preference",
              anchor=ANCHOR),
    MemoryHit("ev_1", "event", "User: I like green tea", NOW - 60, anchor=ANCHOR),
]  # fmt: skip


def test_handles_name_the_anchor_and_id_for_expand() -> None:
    block = format_hits(HITS, now=NOW)
    assert "anchor run_abc:0:1" in block and "id fact_1" in block


def test_without_handles_the_same_memories_come_without_anchor_or_id() -> None:
    block = format_hits(HITS, now=NOW, handles=False)
    assert "The user drinks tea (confidence 100%, 1min ago)" in block
    assert "User: I like green tea" in block
    assert "anchor" not in block and "fact_1" not in block


def test_a_burst_shown_as_one_hit_has_the_room_of_its_pieces() -> None:
    pieces = ["so we finally went camping " + "la " * 60, "u won't believe this",
              "a bear walked right past our tent at 3am"]  # fmt: skip
    burst = MemoryHit("ev_2", "event", "Sam: " + "\n".join(pieces), NOW - 60,
                      joined=["ev_3", "ev_4"])  # fmt: skip
    block = format_hits([burst], now=NOW, width=200)
    assert "u won't believe this a bear walked right past our tent at 3am" in block
    alone = MemoryHit("ev_5", "event", burst.text, NOW - 60)
    assert "a bear walked" not in format_hits([alone], now=NOW, width=200)
