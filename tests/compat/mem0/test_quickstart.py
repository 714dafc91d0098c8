"""mem0's documented quickstart, run with only its import changed."""

from __future__ import annotations

from shiyi.compat.mem0 import Memory
from tests.compat.mem0.conftest import QUICKSTART

ITEM_KEYS = {"id", "memory", "hash", "metadata", "created_at", "updated_at", "user_id",
             "agent_id", "run_id"}  # fmt: skip


def test_quickstart_flow(mem0: Memory) -> None:
    m = mem0
    result = m.add(QUICKSTART, user_id="alice", metadata={"category": "movies"})
    assert [r["event"] for r in result["results"]] == ["ADD"] * 4
    assert [r["memory"] for r in result["results"]] == [t["content"] for t in QUICKSTART]

    related = m.search("What kind of movies do I love?", user_id="alice", limit=3)
    assert len(related["results"]) == 3
    top = related["results"][0]
    assert ITEM_KEYS | {"score"} <= set(top)
    assert any("I love sci-fi movies" in r["memory"] for r in related["results"])
    assert top["user_id"] == "alice" and top["metadata"] == {"category": "movies"}
    scores = [r["score"] for r in related["results"]]
    assert scores == sorted(scores, reverse=True)

    everything = m.get_all(user_id="alice")["results"]
    assert sorted(r["memory"] for r in everything) == sorted(t["content"] for t in QUICKSTART)
    memory_id = next(r["id"] for r in everything if "love sci-fi movies" in r["memory"])

    assert m.update(memory_id, data="I love India, it is my favorite country.") == {
        "message": "Memory updated successfully!"
    }
    updated = m.get(memory_id)
    assert updated is not None
    assert updated["memory"] == "I love India, it is my favorite country."
    assert updated["updated_at"] is not None
    found = m.search("Which country is my favourite?", user_id="alice", limit=1)["results"]
    assert [r["id"] for r in found] == [memory_id]  # the new text is what is searched

    history = m.history(memory_id)
    assert [h["event"] for h in history] == ["ADD", "UPDATE"]
    assert history[1]["old_memory"].endswith("I love sci-fi movies.")
    assert history[1]["new_memory"] == "I love India, it is my favorite country."
    assert {"id", "memory_id", "old_memory", "new_memory", "event", "created_at",
            "updated_at", "is_deleted", "actor_id", "role"} <= set(history[0])  # fmt: skip

    assert m.delete(memory_id) == {"message": "Memory deleted successfully!"}
    assert m.get(memory_id) is None
    assert m.search("favorite country India", user_id="alice")["results"][0]["id"] != memory_id
    gone = m.history(memory_id)
    assert [h["event"] for h in gone] == ["ADD", "UPDATE", "DELETE"]
    assert gone[-1]["is_deleted"] is True
    # shiyi's forget reaches every copy: the history keeps what happened, not the words.
    assert all(h["old_memory"] is None and h["new_memory"] is None for h in gone)

    assert m.delete_all(user_id="alice") == {"message": "Memories deleted successfully!"}
    assert m.get_all(user_id="alice") == {"results": []}


def test_a_memory_survives_reopening(open_mem0: object) -> None:
    first = open_mem0()  # type: ignore[operator]
    added = first.add("I like to play cricket on weekends", user_id="alice")["results"]
    first.close()
    again = open_mem0()  # type: ignore[operator]
    found = again.search("What sport do I play?", user_id="alice")["results"]
    assert [r["id"] for r in found] == [added[0]["id"]]
    assert again.history(added[0]["id"])[0]["new_memory"] == "I like to play cricket on weekends"
