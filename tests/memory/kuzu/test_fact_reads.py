"""Facts read by id are the same whether read one by one through the primary-key index (a
few among many) or with one scan of the table (many, or a small table)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from shiyi.memory.kuzu import reads
from shiyi.memory.kuzu.store import EmbeddedStore
from shiyi.memory.models import EntityRecord, FactRecord
from tests.support.records import turn


@pytest.fixture
def store(tmp_path: Path) -> Iterator[EmbeddedStore]:
    opened = EmbeddedStore(tmp_path / "mem", check_model=False)
    yield opened
    opened.close()


def _facts() -> list[FactRecord]:
    linked = FactRecord(
        id="fact_linked",
        key="lives in",
        value="My sister Ana lives in Porto",
        entities=["ana", "porto"],
        source_events=["e1", "e2"],
        steps=["one", "two"],
        created_at=5.0,
        updated_at=6.0,
        user_id="alice",
    )
    plain = [FactRecord(id=f"fact_{i}", key="k", value=f"value {i}") for i in range(40)]
    return [linked, *plain]


@pytest.mark.parametrize("one_by_one", [True, False])
def test_either_way_of_reading_facts_gives_the_same_records(
    store: EmbeddedStore, monkeypatch: pytest.MonkeyPatch, one_by_one: bool
) -> None:
    store.add_events([turn(1, "Ana moved to Porto"), turn(2, "She likes it there")])
    store.upsert_entities([EntityRecord("ana", "person"), EntityRecord("porto", "place")])
    facts = _facts()
    store.upsert_facts(facts)
    # A small table is scanned; a per-lookup share of 0 makes any table "large".
    monkeypatch.setattr(reads, "FACTS_PER_LOOKUP", 0 if one_by_one else 10**9)
    store.graph._facts_counted = (-reads.COUNT_TTL, 0)
    wanted = ["fact_3", "missing", "fact_linked", "fact_3"]
    found = store.get_facts(wanted)
    assert [f.id for f in found] == ["fact_3", "fact_linked"]
    linked = found[1]
    assert sorted(linked.entities) == ["ana", "porto"]
    assert sorted(linked.source_events) == ["e1", "e2"]
    assert (linked.steps, linked.user_id, linked.updated_at) == (["one", "two"], "alice", 6.0)
    assert found[0] == facts[4]
