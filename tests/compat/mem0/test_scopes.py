"""mem0's ids as shiyi owners: two user ids never see each other's memories; agent_id,
run_id and filters narrow what one owner sees."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from shiyi.compat.mem0 import Memory


def test_two_users_never_see_each_other(mem0: Memory) -> None:
    alice = mem0.add("My passport number is X1234567", user_id="alice")["results"][0]["id"]
    bob = mem0.add("My passport expires next year", user_id="bob")["results"][0]["id"]
    for query in ("passport number", "passport expires", "X1234567"):
        assert [r["id"] for r in mem0.search(query, user_id="bob")["results"]] == [bob]
        assert [r["id"] for r in mem0.search(query, user_id="alice")["results"]] == [alice]
    assert [r["id"] for r in mem0.get_all(user_id="bob")["results"]] == [bob]
    mem0.delete_all(user_id="bob")
    assert mem0.get(alice) is not None  # bob's delete_all leaves alice's memories
    assert mem0.get_all(user_id="bob") == {"results": []}


def test_agent_and_run_ids_narrow_and_own(mem0: Memory) -> None:
    planner = mem0.add("Prefers window seats", user_id="alice", agent_id="travel")["results"]
    chef = mem0.add("Prefers spicy food", user_id="alice", agent_id="chef", run_id="r1")["results"]
    own = mem0.add("Answers in French", agent_id="travel")["results"]  # the agent's own

    everything = {r["id"] for r in mem0.search("prefers", user_id="alice")["results"]}
    assert everything == {planner[0]["id"], chef[0]["id"]}  # a user's, whichever agent
    by_agent = mem0.search("prefers", user_id="alice", agent_id="chef")["results"]
    assert [r["id"] for r in by_agent] == [chef[0]["id"]]
    assert by_agent[0]["agent_id"] == "chef" and by_agent[0]["run_id"] == "r1"
    assert [r["id"] for r in mem0.get_all(user_id="alice", run_id="r1")["results"]] == [
        chef[0]["id"]
    ]
    # Without a user, the memory belongs to the agent alone.
    assert [r["id"] for r in mem0.get_all(agent_id="travel")["results"]] == [own[0]["id"]]
    assert own[0]["id"] not in {r["id"] for r in mem0.get_all(user_id="alice")["results"]}


def test_metadata_filters(mem0: Memory) -> None:
    movie = mem0.add("Loves sci-fi films", user_id="alice", metadata={"category": "movies"})
    food = mem0.add("Loves ramen", user_id="alice", metadata={"category": "food"})
    loves = mem0.search("loves", user_id="alice", filters={"category": "food"})["results"]
    assert [r["id"] for r in loves] == [food["results"][0]["id"]]
    both = mem0.get_all(user_id="alice", filters={"category": {"in": ["food", "movies"]}})
    assert len(both["results"]) == 2
    assert movie["results"][0]["id"] in {r["id"] for r in both["results"]}


def test_time_and_speaker_are_kept(mem0: Memory) -> None:
    said = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    added = mem0.add(
        [{"role": "user", "content": "I went to a support group yesterday", "name": "Caroline"}],
        user_id="locomo",
        metadata={"timestamp": said.isoformat()},
        infer=False,
    )["results"][0]
    got = mem0.get(added["id"])
    assert got is not None
    assert got["created_at"] == said.isoformat()
    assert got["role"] == "user" and got["actor_id"] == "Caroline"  # as mem0 shows them
    # shiyi's recall reads the turn with its day and speaker.
    found = mem0.search("When did Caroline go to the support group?", user_id="locomo")
    assert found["results"][0]["id"] == added["id"]


def test_limit_and_threshold(mem0: Memory) -> None:
    mem0.add([{"role": "user", "content": f"note {i} about gardening"} for i in range(6)],
             user_id="alice")  # fmt: skip
    assert len(mem0.search("gardening", user_id="alice", limit=2)["results"]) == 2
    assert len(mem0.get_all(user_id="alice", limit=4)["results"]) == 4
    scores = [r["score"] for r in mem0.search("gardening", user_id="alice")["results"]]
    cut = sorted(scores)[len(scores) // 2]
    kept = mem0.search("gardening", user_id="alice", threshold=cut)["results"]
    assert kept and all(r["score"] >= cut for r in kept) and len(kept) < len(scores)


def test_scores_fall_with_the_order_so_a_threshold_keeps_the_newer_value(mem0: Memory) -> None:
    # The newer of two equal answers is put first; its own fused score was the lower one.
    mem0.add("My favourite colour is blue", user_id="alice")
    mem0.add("My favourite colour is green now", user_id="alice")
    found = mem0.search("what is my favourite colour", user_id="alice")["results"]
    assert found[0]["memory"] == "My favourite colour is green now"
    scores = [r["score"] for r in found]
    assert scores == sorted(scores, reverse=True)
    best = mem0.search("what is my favourite colour", user_id="alice", threshold=scores[0])
    assert [r["memory"] for r in best["results"]] == ["My favourite colour is green now"]


def test_reset_forgets_everything(mem0: Memory) -> None:
    first = mem0.add("Lives in Lisbon", user_id="alice")["results"][0]["id"]
    mem0.add("Lives in Porto", user_id="bob")
    mem0.reset()
    assert mem0.get(first) is None
    assert mem0.get_all(user_id="alice") == {"results": []}
    assert mem0.get_all(user_id="bob") == {"results": []}
    assert mem0.history(first) == []


def test_a_native_forget_reaches_the_mem0_ledger(mem0: Memory) -> None:
    """`shiyi memory forget ID` and `forget --user` (the native forgets) erase the ledger's
    rows too: the metadata and the history of the forgotten texts, with their bytes."""
    me = mem0.native.settings.user_id  # whom `shiyi memory forget ID` acts as
    mine = mem0.add("My locker code is 4417", user_id=me, metadata={"tag": "gym"}, infer=False)
    memory_id = mine["results"][0]["id"]
    kept = mem0.add("I swim on Tuesdays", user_id=me, infer=False)["results"][0]["id"]
    alice = mem0.add("Alice's pin is 9902", user_id="alice", infer=False)["results"][0]["id"]
    bob = mem0.add("Bob's bike is blue", user_id="bob", infer=False)["results"][0]["id"]
    ledger = mem0.native.data_paths.mem0_ledger
    assert ledger is not None and b"4417" in _file_bytes(ledger) and mem0.history(memory_id)

    mem0.native.forget_ids([memory_id])
    assert mem0.get(memory_id) is None and mem0.history(memory_id) == []
    assert b"4417" not in _file_bytes(ledger) and b"gym" not in _file_bytes(ledger)

    mem0.native.forget_user("alice")
    assert mem0.history(alice) == [] and b"9902" not in _file_bytes(ledger)
    for survivor in (kept, bob):
        assert mem0.get(survivor) is not None and mem0.history(survivor)


def _file_bytes(path: Path) -> bytes:
    """The ledger and its write-ahead log, as bytes on disk."""
    wal = path.with_name(path.name + "-wal")
    return path.read_bytes() + (wal.read_bytes() if wal.exists() else b"")
