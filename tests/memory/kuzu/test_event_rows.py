"""The SQLite mirror of event records: exact with the graph, and the graph stays the truth."""

from __future__ import annotations

from pathlib import Path

import pytest

from shiyi.memory.kuzu.store import EmbeddedStore
from shiyi.memory.models import EventRecord
from tests.support.records import turn


def _event(i: int, session: str = "s1", content: str | None = None) -> EventRecord:
    """A turn with every optional field set, so the mirror is seen to keep them all."""
    text = content or f"message number {i}"
    extra = {"segment": 0, "summary": f"summary {i}", "user_id": "alice", "agent_id": "shiyi"}
    return turn(i, text, session=session, segment_type="message", **extra)


@pytest.fixture
def store(tmp_path: Path) -> EmbeddedStore:
    opened = EmbeddedStore(tmp_path / "mem", check_model=False)
    yield opened  # type: ignore[misc]
    opened.close()


def test_get_events_reads_the_mirror_with_every_field(store: EmbeddedStore) -> None:
    events = [_event(i) for i in range(3)]
    store.add_events(events)
    assert store.event_rows.get(["e0", "e1", "e2"]) == {e.id: e for e in events}
    assert store.get_events(["e2", "e0", "e2", "missing"]) == [events[2], events[0]]


def test_a_repeated_id_keeps_the_first_record_in_both(store: EmbeddedStore) -> None:
    store.add_events([_event(1)])
    store.add_events([_event(1, content="rewritten")])
    assert store.event_rows.get(["e1"])["e1"].content == "message number 1"
    assert store.graph.get_events(["e1"])[0].content == "message number 1"


def test_deleted_events_leave_the_mirror(store: EmbeddedStore) -> None:
    store.add_events([_event(1), _event(2)])
    store.delete(["e1"])
    assert set(store.event_rows.get(["e1", "e2"])) == {"e2"}
    assert [e.id for e in store.get_events(["e1", "e2"])] == ["e2"]


def test_an_event_missing_from_the_mirror_is_read_from_the_graph(store: EmbeddedStore) -> None:
    """A crash between the graph write and the mirror write must not hide the event."""
    store.add_events([_event(1)])
    store.event_rows.delete(["e1"])
    assert [e.content for e in store.get_events(["e1"])] == ["message number 1"]


def test_an_older_store_is_backfilled_once_on_open(tmp_path: Path) -> None:
    path = tmp_path / "mem"
    store = EmbeddedStore(path, check_model=False)
    store.add_events([_event(i) for i in range(7)])
    with store.sqlite.write("simulate a store from before the mirror") as conn:
        conn.execute("DELETE FROM ev_rows")
        conn.execute("DELETE FROM ev_rows_meta")
    store.close()

    reopened = EmbeddedStore(path, check_model=False)
    try:
        assert reopened.event_rows.complete
        assert len(reopened.event_rows.get([f"e{i}" for i in range(7)])) == 7
        assert reopened.event_rows.backfill(reopened.graph.all_events) == 0  # only once
    finally:
        reopened.close()


def test_keyword_hits_say_whether_they_are_events_or_facts(store: EmbeddedStore) -> None:
    store.add_events([_event(1, content="the zebra crossing")])
    store.keywords.add([("f1", "fact", "zebra stripes are unique")])
    nodes = {s.id: s.node for s in store.keyword_search("zebra", 10)}
    assert nodes == {"e1": "event", "f1": "fact"}


def test_event_owners_ask_the_graph_until_the_mirror_is_complete(store: EmbeddedStore) -> None:
    store.add_events([_event(1), turn(2, id="b2", session="s9", user_id="bob")])
    with store.event_rows._file.write("forget the mirror") as conn:  # an older store's state
        conn.execute("DELETE FROM ev_rows")
        conn.execute("DELETE FROM ev_rows_meta")
    assert store.event_owners(["e1"], "none") == {("alice", "shiyi")}
    assert store.event_owners([], "s9") == {("bob", "shiyi")}
