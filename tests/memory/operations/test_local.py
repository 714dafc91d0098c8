"""Memory's operations over a real store (both backends): what the CLI, REST, MCP and the
mem0-shaped API all call."""

from __future__ import annotations

import json

import pytest

from shiyi.api.import_schemas import ImportIn, ImportTurnIn
from shiyi.api.schemas import EventOut, FactOut
from shiyi.errors import Conflict, NotFound, ScopeDenied
from shiyi.memory.operations import MemoryOperations
from shiyi.memory.operations.local import LocalMemory
from shiyi.memory.scopes import Viewer
from shiyi.memory.service import Memory


def ops_of(memory: Memory, **options: bool) -> MemoryOperations:
    return LocalMemory(memory, settle=True, **options)  # type: ignore[arg-type]


def test_a_fact_is_added_read_listed_edited_and_its_history_kept(
    vectorless_memory: Memory,
) -> None:
    ops = ops_of(vectorless_memory)
    first = ops.add("Paris", key="lives in", kind="preference")
    assert isinstance(first, FactOut) and first.value == "Paris" and first.key == "lives in"
    assert ops.get(first.id) == FactOut(**first.model_dump(exclude={"outcome", "replaces"}))

    second = ops.add("lives in: Lisbon", key="lives in")  # the key typed again is dropped
    assert second.value == "Lisbon"
    versions = ops.history(key="lives in")
    assert [(f.value, f.status) for f in versions] == [
        ("Paris", "superseded"),
        ("Lisbon", "active"),
    ]
    assert versions[0].valid_to is not None

    ops.add("tea, not coffee", kind="preference")
    listed = ops.list_facts(kinds=["preference"])
    assert [f.value for f in listed.facts] == ["tea, not coffee"]  # Paris is superseded now
    assert listed.total == 1 and listed.complete
    past = ops.list_facts(statuses=["superseded"])
    assert [f.value for f in past.facts] == ["Paris"]

    edited = ops.update(second.id, value="Porto", confidence=0.7)
    assert (edited.value, edited.confidence) == ("Porto", 0.7)
    assert ops.get(second.id) == edited
    # what it said before the edit stays in the slot's history (it had been overwritten)
    assert [(f.value, f.status) for f in ops.history(key="lives in")] == [
        ("Paris", "superseded"),
        ("Lisbon", "superseded"),
        ("Porto", "active"),
    ]
    with pytest.raises(Conflict, match="history keeps what was said"):
        ops.update(first.id, value="Madrid")  # a past version is not rewritten
    assert ops.update(second.id, confidence=0.7) == edited  # nothing changed: nothing moves
    # forgetting the fact forgets what it said before its edit ("Lisbon"), not the slot's
    # earlier value ("Paris")
    assert ops.delete(second.id).deleted == 2
    assert [f.value for f in ops.history(key="lives in")] == ["Paris"]


def test_a_key_edited_to_name_someone_makes_the_fact_theirs(vectorless_memory: Memory) -> None:
    ops = ops_of(vectorless_memory)
    porto = ops.add("Porto")  # typed without a key, then corrected on the memory page
    edited = ops.update(porto.id, key="Ana's city")
    assert edited.key == "ana s city"
    assert "ana" in vectorless_memory.store.get_facts([porto.id])[0].entities
    assert [f.id for f in ops.history(entity="Ana")] == [porto.id]
    mine = ops.add("Berlin", key="user's city")
    assert ops.update(mine.id, key="my city").key == "my city"  # the user's: no one else's
    assert vectorless_memory.store.get_facts([mine.id])[0].entities == []


def test_a_slots_history_says_whose_each_version_is(vectorless_memory: Memory) -> None:
    ops = ops_of(vectorless_memory)
    said = ("I live in Berlin", "My sister lives in Porto", "My friend Ana lives in Rome")
    for text in (*said, "I moved to Munich"):
        ops.add(text)
    versions = ops.history(key="lives in")
    assert [(f.value, f.status, f.subject) for f in versions] == [
        ("I live in Berlin", "superseded", []),
        ("My sister lives in Porto", "active", ["sister"]),
        ("My friend Ana lives in Rome", "active", ["Ana"]),  # as written, not the key "ana"
        ("I moved to Munich", "active", []),
    ]


def test_search_keeps_a_time_window_and_forget_lists_before_deleting(
    vectorless_memory: Memory,
) -> None:
    ops = ops_of(vectorless_memory)
    turns = [
        ImportTurnIn(id=f"t{i}", run="day1", ts=ts, role="alice", content=text)
        for i, (ts, text) in enumerate(
            [(1_600_000_000.0, "we adopted a kitten named Miso"), (1_700_000_000.0, "Miso ate")]
        )
    ]
    queued = ops.import_turns(ImportIn(session_id="chat1", turns=turns))
    assert queued.queued == 2 and queued.session_id == "chat1"

    both = ops.search("Miso", mode="keyword")
    assert {h.ts for h in both} == {1_600_000_000.0, 1_700_000_000.0}
    late = ops.search("Miso", mode="keyword", since=1_650_000_000.0)
    assert [h.text for h in late] == ["Alice: Miso ate"]  # the speaker is kept
    early = ops.search("Miso", mode="keyword", until=1_650_000_000.0)
    assert [h.ts for h in early] == [1_600_000_000.0]

    event = ops.get(both[0].id)
    assert isinstance(event, EventOut)
    anchor = next(h.anchor for h in both if h.anchor)
    assert anchor is not None and ops.expand(anchor, 1)

    listed = ops.forget("query", "kitten", limit=1, dry_run=True)
    assert listed.forgotten is None and listed.events == 1
    assert len(ops.search("kitten", mode="keyword")) == 1  # a dry run deletes nothing
    done = ops.forget("query", "kitten", limit=1)
    assert done.forgotten is not None and done.forgotten.deleted == 1
    assert ops.search("kitten", mode="keyword") == []
    with pytest.raises(NotFound):
        ops.forget("query", "kitten")  # nothing of the caller's matches any more


def test_another_users_memories_are_not_found(vectorless_memory: Memory) -> None:
    mine = ops_of(vectorless_memory)
    fact = mine.add("my secret is 4711", key="secret")
    theirs = ops_of(vectorless_memory.scoped(Viewer("bob", "shiyi", "default")))
    with pytest.raises(NotFound):
        theirs.get(fact.id)
    with pytest.raises(NotFound):
        theirs.update(fact.id, value="5")
    with pytest.raises(NotFound):
        theirs.delete(fact.id)
    assert theirs.search("secret 4711", mode="keyword") == []
    assert theirs.history(key="secret") == []
    assert theirs.list_facts().facts == []
    assert theirs.export() == []
    assert mine.get(fact.id).id == fact.id  # untouched by bob's tries


def test_the_queue_is_the_configured_identitys(vectorless_memory: Memory) -> None:
    view = ops_of(vectorless_memory.scoped(Viewer("bob", "shiyi", "default")))
    with pytest.raises(Conflict, match=r"server\.token"):
        view.retry_jobs()
    assert ops_of(vectorless_memory).retry_jobs().requeued == 0
    jobs = ops_of(vectorless_memory).run_jobs(5)
    assert jobs.ready == 0


def test_workspace_writes_and_edits_need_a_workspace_writer(vectorless_memory: Memory) -> None:
    shared = ops_of(vectorless_memory).add("the build uses make", scope="workspace")
    helper = ops_of(vectorless_memory.scoped(Viewer("default", "helper", "default")))
    assert helper.get(shared.id).id == shared.id  # a workspace fact: every agent reads it
    with pytest.raises(ScopeDenied):
        helper.add("the build uses ninja", scope="workspace")
    with pytest.raises(ScopeDenied):
        helper.update(shared.id, value="the build uses ninja")


def test_entities_export_delete_and_health(vectorless_memory: Memory) -> None:
    ops = ops_of(vectorless_memory)
    fact = ops.add("Alice works at Acme")
    vectorless_memory.worker.drain(timeout=30)
    before = ops.health()
    assert before.facts == 1
    records = [json.loads(line) for line in ops.export()]
    assert fact.id in {r.get("id") for r in records}
    gone = ops.delete(fact.id)
    assert gone.deleted == 1
    with pytest.raises(NotFound):
        ops.get(fact.id)
    with pytest.raises(NotFound):
        ops.delete(fact.id)
    assert ops.health().facts == 0
    assert ops.forget_ids(["nothing-like-this"]).deleted == 0


def test_entities_are_those_the_callers_facts_are_about(vectorless_memory: Memory) -> None:
    vectorless_memory.remember("Alice works at Acme", about=["Acme", "Alice"])
    vectorless_memory.remember("Acme sells anvils", about=["Acme"])
    ops = ops_of(vectorless_memory)
    assert [(e.name, e.facts) for e in ops.entities()] == [("acme", 2), ("alice", 1)]
    assert [e.name for e in ops.entities(query="ALI")] == ["alice"]
    bob = ops_of(vectorless_memory.scoped(Viewer("bob", "shiyi", "default")))
    assert bob.entities() == []
