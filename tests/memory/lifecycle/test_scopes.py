"""Shared memory: user / agent / workspace scopes, enforced on every read path."""

from __future__ import annotations

import pytest

from shiyi.config.settings import Settings
from shiyi.errors import ScopeDenied
from shiyi.llm.types import Message
from shiyi.memory.models import EntityRecord, EventRecord
from shiyi.memory.scopes import Viewer
from shiyi.memory.service import Memory
from tests.memory.lifecycle.conftest import MemoryFactory, extraction, say, user_event

ALICE = Viewer("alice", "shiyi")
BOB = Viewer("bob", "shiyi")
ALICE_REVIEWER = Viewer("alice", "reviewer")
OPERATOR = Viewer()  # the configured user ("default") and agent ("shiyi"): a writer by default
MODES = ("hybrid", "semantic", "keyword", "graph", "recent")


def _everything(memory: object, viewer: Viewer, query: str) -> set[str]:
    found: set[str] = set()
    for mode in MODES:
        hits = memory.search(query, mode=mode, limit=20, viewer=viewer)  # type: ignore[attr-defined]
        found |= {h.text for h in hits}
    return found


@pytest.fixture
def shared(open_memory: MemoryFactory) -> object:
    memory = open_memory()
    say(
        memory,
        user_event(1, "Alice's locker code is 4417 near Zanzibar", user="alice"),
        user_event(2, "Bob's locker code is 9902 near Zanzibar", session="s2", user="bob"),
    )
    memory.remember("alice prefers dark roast Zanzibar coffee", viewer=ALICE)
    memory.remember("bob prefers green Zanzibar tea", viewer=BOB)
    memory.remember("review Zanzibar PRs strictly", scope="agent", viewer=ALICE_REVIEWER)
    memory.remember("the Zanzibar repo uses trunk-based development", scope="workspace",
                    kind="convention", viewer=OPERATOR)  # fmt: skip
    assert memory.worker.drain(timeout=120)  # type: ignore[attr-defined]
    return memory


def test_nothing_leaks_across_users(shared: object) -> None:
    alice = _everything(shared, ALICE, "Zanzibar locker code coffee tea")
    bob = _everything(shared, BOB, "Zanzibar locker code coffee tea")
    assert any("4417" in t for t in alice) and not any("9902" in t for t in alice)
    assert any("9902" in t for t in bob) and not any("4417" in t for t in bob)
    assert not any("green" in t for t in alice) and not any("dark roast" in t for t in bob)


def test_agent_scope_is_private_to_that_agent(shared: object) -> None:
    assert any("strictly" in t for t in _everything(shared, ALICE_REVIEWER, "review Zanzibar PRs"))
    assert not any("strictly" in t for t in _everything(shared, ALICE, "review Zanzibar PRs"))
    assert not any("strictly" in t for t in _everything(shared, BOB, "review Zanzibar PRs"))
    # The reviewer agent does not read alice's conversations with the main agent.
    assert not any("4417" in t for t in _everything(shared, ALICE_REVIEWER, "locker code"))


def test_workspace_memory_is_shared_by_everyone_in_it(shared: object) -> None:
    for viewer in (ALICE, BOB, ALICE_REVIEWER):
        assert any("trunk-based" in t for t in _everything(shared, viewer, "Zanzibar repo"))
    outsider = Viewer("alice", "shiyi", workspace_id="other")
    assert not any("trunk-based" in t for t in _everything(shared, outsider, "Zanzibar repo"))


def test_workspace_writes_follow_the_policy(shared: object) -> None:
    with pytest.raises(ScopeDenied, match="workspace_writers"):
        shared.remember("x", scope="workspace", viewer=ALICE_REVIEWER)  # type: ignore[attr-defined]
    # Another user's agent is called "shiyi" too: the writer list's "shiyi" is the configured
    # user's agent, not every user's (any user of a server could plant what all others read).
    denied = r"add 'user:bob' to memory\.lifecycle\.workspace_writers"
    with pytest.raises(ScopeDenied, match=denied):
        shared.remember("deploys skip review", scope="workspace", viewer=BOB)  # type: ignore[attr-defined]


def test_a_user_named_in_the_writers_may_write_shared_memory(
    open_memory: MemoryFactory, settings: Settings
) -> None:
    settings.memory.lifecycle.workspace_writers = ["shiyi", "user:bob"]
    memory = open_memory()
    memory.remember("the Zanzibar repo deploys on Fridays", scope="workspace", viewer=BOB)
    with pytest.raises(ScopeDenied):
        memory.remember("x", scope="workspace", viewer=ALICE)
    assert any("Fridays" in t for t in _everything(memory, ALICE, "Zanzibar deploys"))


def test_expand_and_history_respect_visibility(shared: object) -> None:
    anchor = "run_s1_1:0:0"
    assert [e.content[:7] for e in shared.expand(anchor, viewer=ALICE)] == ["Alice's"]  # type: ignore[attr-defined]
    assert shared.expand(anchor, viewer=BOB) == []  # type: ignore[attr-defined]
    events: list[EventRecord] = shared.store.get_events(["us11"])  # type: ignore[attr-defined]
    assert not BOB.sees(events[0]) and ALICE.sees(events[0])


def test_a_scoped_view_reads_forgets_and_records_as_its_viewer(shared: object) -> None:
    memory: Memory = shared  # type: ignore[assignment]
    assert memory.scoped(memory.viewer) is memory
    bob = memory.scoped(BOB)
    assert bob.get("us11") is None and bob.get("us22") is not None  # Alice's turn, Bob's
    assert memory.get("us11", viewer=ALICE) is not None
    assert bob.forget(["us11"]) == 0  # not Bob's: not found, like a missing id
    gone = bob.forget_query("locker code Zanzibar", limit=10)
    assert gone.total >= 1 and memory.store.get_events(["us22"]) == []
    assert memory.get("us11", viewer=ALICE) is not None  # Alice's turn survived Bob's query
    bob.record_message(
        Message("user", "Bob's bike lock is 5521"),
        message_id=99,
        session_id="s9",
        run_id="run_s9",
        iteration=0,
    )
    assert memory.worker.drain(timeout=120)
    assert any("5521" in t for t in _everything(memory, BOB, "bike lock 5521"))
    assert not any("5521" in t for t in _everything(memory, ALICE, "bike lock 5521"))


def test_forgetting_in_scope_keeps_an_entity_others_still_speak_of(shared: object) -> None:
    memory: Memory = shared  # type: ignore[assignment]
    memory.store.upsert_entities([EntityRecord("zanzibar")])
    memory.store.link_mentions([("us11", "zanzibar"), ("us22", "zanzibar")])
    report = memory.scoped(BOB).forget_entity("Zanzibar")
    assert report.events == 1 and report.entities == 0
    assert memory.store.find_entities(["zanzibar"]) != []
    assert memory.get("us11", viewer=ALICE) is not None


def test_extraction_and_consolidation_read_only_their_owners_turns(
    open_memory: MemoryFactory,
) -> None:
    """Should one session ever hold two owners' turns, each one's facts are drawn from their
    own turns only (imports keep sessions apart; this is the second line)."""
    memory = open_memory(*[extraction() for _ in range(3)])
    say(
        memory,
        user_event(1, "my locker code is 4417", user="alice"),
        user_event(2, "my badge code is 9902", user="bob"),  # the same session, s1
    )
    memory.consolidate("s1")
    assert memory.worker.drain(timeout=60)
    requests = memory.scripted.requests  # type: ignore[attr-defined]
    prompts = ["\n".join(str(m.content) for m in r.messages) for r in requests]
    assert len(prompts) == 3  # two extractions, one consolidation
    assert not [p for p in prompts if "4417" in p and "9902" in p]
    assert "9902" in prompts[-1]  # the session's last turn is Bob's: his consolidation
