"""Imports never reuse another owner's names (both backends): a second user importing the same
file gets their tag on the session, runs and ids, and neither import replaces the other's
turns or keyword text."""

from __future__ import annotations

import pytest

from shiyi.errors import ImportFormatError
from shiyi.memory.models import EventRecord
from shiyi.memory.protocol import MemoryStore
from shiyi.memory.scopes import Viewer
from shiyi.memory.service import Memory
from shiyi.memory.transfer.export import export_lines
from shiyi.memory.transfer.import_claims import importer_tag
from tests.memory.conftest import unwrapped
from tests.support.records import turn

ALICE = Viewer("alice", "shiyi")
BOB = Viewer("bob", "shiyi")
DAY = "conv-1:2024-05-01"


@pytest.fixture
def memory(vectorless_memory: Memory) -> Memory:
    return vectorless_memory


def conversation(said: str, session: str = "conv-1") -> list[EventRecord]:
    """Three turns as the LoCoMo importer names them (``<session>:D1:<n>``)."""
    return [
        turn(
            i,
            f"{said} {i}",
            id=f"{session}:D1:{i}",
            session=session,
            run=f"{session}:2024-05-01",
            segment_type="imported",
        )
        for i in range(3)
    ]


def imported(
    memory: Memory, who: Viewer, events: list[EventRecord], session: str = "conv-1"
) -> str:
    claimed = memory.scoped(who).import_conversation(session, events)
    assert memory.worker.drain(timeout=60)
    return claimed.session_id


def contents(memory: Memory, who: Viewer) -> dict[str, str]:
    """Every event ``who`` owns, id to text, as the export sees them."""
    import json

    records = [json.loads(line) for line in export_lines(memory.store, who)]
    return {r["id"]: r["content"] for r in records if r["node"] == "event"}


def test_the_same_file_imported_by_two_users_keeps_both(memory: Memory) -> None:
    assert imported(memory, ALICE, conversation("alice kiwi")) == "conv-1"
    tagged = imported(memory, BOB, conversation("bob mango"))
    tag = importer_tag(BOB)
    assert tagged == f"conv-1{tag}"

    assert contents(memory, ALICE) == {f"conv-1:D1:{i}": f"alice kiwi {i}" for i in range(3)}
    assert contents(memory, BOB) == {f"conv-1{tag}:D1:{i}": f"bob mango {i}" for i in range(3)}
    [bobs] = memory.store.get_events([f"conv-1{tag}:D1:0"])
    assert (bobs.session_id, bobs.run_id, bobs.user_id) == (
        tagged,
        f"conv-1{tag}:2024-05-01",
        "bob",
    )
    # Each one's words are found only as theirs.
    assert not memory.search("mango", mode="keyword", viewer=ALICE)
    assert {h.id for h in memory.search("mango", mode="keyword", viewer=BOB)} == set(
        contents(memory, BOB)
    )


def test_importing_again_reuses_the_same_names(memory: Memory) -> None:
    imported(memory, ALICE, conversation("alice kiwi"))
    first = imported(memory, BOB, conversation("bob mango"))
    assert imported(memory, BOB, conversation("bob mango")) == first
    assert imported(memory, ALICE, conversation("alice kiwi")) == "conv-1"
    assert len(contents(memory, BOB)) == 3 and len(contents(memory, ALICE)) == 3


def test_a_squatted_tag_moves_the_import_on(memory: Memory) -> None:
    """Alice takes the name Bob's tag would give: Bob's import goes to the next one."""
    tag = importer_tag(BOB)
    imported(memory, ALICE, conversation("alice kiwi"))
    imported(memory, ALICE, conversation("alice squat", f"conv-1{tag}"), f"conv-1{tag}")
    stored = imported(memory, BOB, conversation("bob mango"))
    assert stored == f"conv-1{importer_tag(BOB, 2)}"
    assert set(contents(memory, BOB).values()) == {f"bob mango {i}" for i in range(3)}
    assert "alice squat 0" in contents(memory, ALICE).values()


def test_a_turn_whose_run_is_outside_its_session_is_refused(memory: Memory) -> None:
    events = conversation("alice kiwi")
    events[1].run_id = "run_of_someone_else"
    with pytest.raises(ImportFormatError, match="run 'run_of_someone_else' must start with"):
        memory.scoped(ALICE).import_conversation("conv-1", events)
    assert memory.jobs.ready_count() == 0  # nothing of the conversation was queued


def test_a_reused_id_does_not_replace_the_first_owners_keyword_text(store: MemoryStore) -> None:
    """The stores themselves: the first record of an id stays, and so does its index entry."""
    first = turn(1, "alice walrus", id="x1", user_id="alice")
    store.add_events([first])
    store.add_events([turn(1, "bob narwhal", id="x1", user_id="bob")])
    [kept] = store.get_events(["x1"])
    assert (kept.content, kept.user_id) == ("alice walrus", "alice")
    assert [h.id for h in unwrapped(store).keyword_search("walrus", 5)] == ["x1"]
    assert unwrapped(store).keyword_search("narwhal", 5) == []


def test_event_owners_names_whoever_holds_the_ids_or_the_session(store: MemoryStore) -> None:
    store.add_events([turn(1, id="x1", user_id="alice"), turn(2, id="y1", session="s2")])
    store.add_events([turn(3, id="z1", session="s2", user_id="bob", agent_id="helper")])
    assert store.event_owners(["x1"], "elsewhere") == {("alice", "shiyi")}
    assert store.event_owners(["nope"], "s2") == {("default", "shiyi"), ("bob", "helper")}
    assert store.event_owners(["nope"], "elsewhere") == set()


def _one_turn(event_id: str, said: str, session: str = "conv-7") -> list[EventRecord]:
    return [
        turn(0, said, id=event_id, session=session, run=f"{session}:d", segment_type="imported")
    ]


def test_names_shaped_like_internal_ids_are_never_used_as_they_are(memory: Memory) -> None:
    """A chat's next message would find such an id taken: the import gets its tag instead,
    and is stored (not dropped) under it."""
    tag = importer_tag(BOB)
    for session, event_id in (("conv-7", "ev_12_0"), ("conv-8", "ev_ab12cd34ef_9_1"),
                              ("ses_0123456789ab", "ses_0123456789ab:D1:1")):  # fmt: skip
        stored = imported(memory, BOB, _one_turn(event_id, f"bob {event_id}", session), session)
        assert stored == session + tag
    assert set(contents(memory, BOB)) == {
        f"ev_12_0{tag}",
        f"ev_ab12cd34ef_9_1{tag}",
        f"ses_0123456789ab{tag}:D1:1",
    }


def test_an_import_never_takes_a_facts_id_even_its_own(memory: Memory) -> None:
    alices = memory.scoped(ALICE).remember("alice keeps the walrus key")
    bobs = memory.scoped(BOB).remember("bob keeps the narwhal key")
    for fact in (alices, bobs):
        stored = imported(memory, BOB, _one_turn(fact.id, "bob squats"), "conv-7")
        assert stored == "conv-7" + importer_tag(BOB)
        [kept] = memory.store.get_facts([fact.id])
        assert kept.text == fact.text
        assert memory.store.get_events([fact.id]) == []


def test_names_another_owner_has_queued_are_taken(memory: Memory) -> None:
    """Claimed names are checked against the queue too: Alice's turns, not stored yet, keep
    their names, and Bob's are not dropped behind them."""
    memory.scoped(ALICE).import_conversation("conv-1", conversation("alice kiwi"))
    claimed = memory.scoped(BOB).import_conversation("conv-1", conversation("bob mango"))
    assert claimed.session_id == "conv-1" + importer_tag(BOB)
    assert memory.worker.drain(timeout=60)
    assert len(contents(memory, ALICE)) == 3 and len(contents(memory, BOB)) == 3
