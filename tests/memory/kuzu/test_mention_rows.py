"""The SQLite mirror of MENTIONS edges: the graph path reads it, and it agrees with Kuzu."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from shiyi.index.sqlite_file import SqliteFile
from shiyi.memory.kuzu.graph import KuzuMentions
from shiyi.memory.kuzu.store import EmbeddedStore
from shiyi.memory.models import EntityRecord
from tests.support.records import BASE_TS, turn


def _filled(path: Path) -> EmbeddedStore:
    opened = EmbeddedStore(path, check_model=False)
    opened.add_events([turn(i) for i in range(6)])
    opened.upsert_entities([EntityRecord(n, "topic", n) for n in ("pottery", "camping", "biscuit")])
    # pottery: 4 turns, camping: 2, biscuit: 1 (the pair repeated, as a re-link would)
    pairs = [(f"e{i}", "pottery") for i in range(4)] + [("e4", "camping"), ("e5", "camping")]
    opened.link_mentions([*pairs, ("e5", "biscuit"), ("e5", "biscuit")])
    return opened


@pytest.fixture
def store(tmp_path: Path) -> Iterator[EmbeddedStore]:
    opened = _filled(tmp_path / "mem")
    yield opened
    opened.close()


def test_degree_and_mentions_agree_with_the_graph(store: EmbeddedStore) -> None:
    names = ["pottery", "camping", "biscuit", "unknown"]
    kuzu = KuzuMentions(store.graph._reader())
    assert (
        store.mention_rows.degree(names)
        == kuzu.degree(names)
        == {
            "pottery": 4,
            "camping": 2,
            "biscuit": 1,
        }
    )
    mirrored = sorted(store.mention_rows.mentioning(["camping", "biscuit"]))
    assert mirrored == sorted(kuzu.mentioning(["camping", "biscuit"]))
    assert mirrored == [
        ("e4", "camping", BASE_TS + 4 * 60),
        ("e5", "biscuit", BASE_TS + 5 * 60),
        ("e5", "camping", BASE_TS + 5 * 60),
    ]


def test_a_mention_of_an_event_not_stored_is_skipped_like_the_graph_skips_it(
    store: EmbeddedStore,
) -> None:
    store.link_mentions([("never-stored", "pottery")])
    assert store.mention_rows.degree(["pottery"]) == {"pottery": 4}


def test_forgetting_events_and_entities_updates_the_mirror(store: EmbeddedStore) -> None:
    store.delete(["e0", "e5"])
    assert store.mention_rows.degree(["pottery", "camping", "biscuit"]) == {
        "pottery": 3,
        "camping": 1,
    }
    store.delete_entities(["pottery"])
    assert store.mention_rows.mentioning(["pottery"]) == []
    assert store.mention_rows.degree(["pottery", "camping"]) == {"camping": 1}
    kuzu = KuzuMentions(store.graph._reader())
    assert kuzu.degree(["pottery", "camping"]) == {"camping": 1}


def test_the_graph_path_ranks_the_same_from_the_mirror_as_from_kuzu(store: EmbeddedStore) -> None:
    names = ["pottery", "camping", "biscuit"]
    from_kuzu = store.graph.neighbourhood(names, 2, 10)
    from_mirror = store.neighbourhood(names, 2, 10)
    assert from_mirror.event_ids == from_kuzu.event_ids
    # the rarest entity weighs most: the turn naming biscuit and camping comes first
    assert from_mirror.event_ids[0].id == "e5"


def test_an_older_store_is_backfilled_once_on_open(tmp_path: Path) -> None:
    path = tmp_path / "mem"
    store = _filled(path)
    with store.sqlite.write("simulate a store from before the mirror") as conn:
        conn.execute("DELETE FROM mentions")
        conn.execute("DELETE FROM mention_counts")
        conn.execute("DELETE FROM mentions_meta")
    store.close()
    reopened = EmbeddedStore(path, check_model=False)
    try:
        assert reopened.mention_rows.complete
        assert reopened.mention_rows.degree(["pottery", "camping"]) == {"pottery": 4, "camping": 2}
        assert reopened.mention_rows.backfill(reopened.graph.all_mentions) == 0  # only once
    finally:
        reopened.close()


def test_owner_reads_agree_with_the_graph(store: EmbeddedStore) -> None:
    names = ["pottery", "camping", "biscuit"]
    kuzu = KuzuMentions(store.graph._reader())
    mine, nobody = ("default", "shiyi"), ("bo", "shiyi")
    for owner in (mine, nobody):
        assert store.mention_rows.degree(names, owner, 3) == kuzu.degree(names, owner, 3)
        assert sorted(store.mention_rows.mentioning(names, owner)) == sorted(
            kuzu.mentioning(names, owner)
        )
    # pottery: 4 of the owner's mentions, over a hub cap of 3: weighed by everyone's count
    assert store.mention_rows.degree(names, mine, 3) == {"pottery": 4, "camping": 2, "biscuit": 1}
    assert store.mention_rows.degree(names, nobody, 3) == {}
    assert len(store.mention_rows.mentioning(names, mine)) == 7


def test_a_mirror_from_before_owners_learns_them_when_the_store_opens(tmp_path: Path) -> None:
    _filled(tmp_path / "mem").close()
    file = SqliteFile(tmp_path / "mem" / "memory.sqlite3")
    with file.write("as before owners") as conn:
        conn.execute("DROP INDEX mentions_by_owner")
        conn.execute("ALTER TABLE mentions DROP COLUMN user_id")
        conn.execute("ALTER TABLE mentions DROP COLUMN agent_id")
        conn.execute("DELETE FROM mentions_meta WHERE key = 'owners'")
    file.close()
    again = EmbeddedStore(tmp_path / "mem", check_model=False)
    try:
        assert len(again.mention_rows.mentioning(["pottery"], ("default", "shiyi"))) == 4
        assert again.mention_rows.mentioning(["pottery"], ("bo", "shiyi")) == []
    finally:
        again.close()
