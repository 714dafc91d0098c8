"""Bad input gets an error naming what was wrong and how to fix it (a ``ValueError`` too,
as mem0 raises)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import pytest

from shiyi.compat.mem0 import Memory
from shiyi.errors import ConfigError, MemoryRequestError, UnknownMemory


def test_an_owner_is_required(mem0: Memory) -> None:
    with pytest.raises(ValueError, match="at least one of 'user_id', 'agent_id' or 'run_id'"):
        mem0.add("hello")
    with pytest.raises(MemoryRequestError, match="search: at least one"):
        mem0.search("hello")
    with pytest.raises(MemoryRequestError, match="get_all: at least one"):
        mem0.get_all()
    with pytest.raises(MemoryRequestError, match=r"call reset\(\)"):
        mem0.delete_all()
    with pytest.raises(MemoryRequestError, match="user_id must be a non-empty string"):
        mem0.add("hello", user_id="")


@pytest.mark.parametrize(
    ("messages", "wrong"),
    [
        (42, "messages is a int"),
        ([{"content": "no role"}], r"messages\[0\] has no 'role'"),
        ([{"role": "user", "content": 3}], r"messages\[0\]\['content'\] must be text"),
        (["text in a list"], r"messages\[0\] is a str"),
    ],
)
def test_bad_messages(mem0: Memory, messages: object, wrong: str) -> None:
    with pytest.raises(MemoryRequestError, match=wrong):
        mem0.add(messages, user_id="alice")


def test_unknown_ids(mem0: Memory) -> None:
    assert mem0.get("no-such-id") is None  # as mem0
    assert mem0.history("no-such-id") == []
    with pytest.raises(UnknownMemory, match="update: no memory has id 'no-such-id'"):
        mem0.update("no-such-id", "text")
    with pytest.raises(UnknownMemory, match="delete: no memory has id"):
        mem0.delete("no-such-id")


def test_other_bad_arguments(mem0: Memory) -> None:
    memory_id = mem0.add("Likes tea", user_id="alice")["results"][0]["id"]
    with pytest.raises(MemoryRequestError, match="data must be the memory's new text, not empty"):
        mem0.update(memory_id, "")
    with pytest.raises(MemoryRequestError, match="limit must be a positive integer"):
        mem0.search("tea", user_id="alice", limit=0)
    with pytest.raises(MemoryRequestError, match=r"only equality or \{'in'"):
        mem0.search("tea", user_id="alice", filters={"category": {"gte": 3}})
    with pytest.raises(MemoryRequestError, match="logical operators are not supported"):
        mem0.search("tea", user_id="alice", filters={"AND": [{"category": "drinks"}]})
    with pytest.raises(MemoryRequestError, match="timestamp must be epoch seconds or ISO"):
        mem0.add("x", user_id="alice", metadata={"timestamp": "yesterday"})
    with pytest.raises(MemoryRequestError, match="metadata must be a dict"):
        mem0.add("x", user_id="alice", metadata=["a"])  # type: ignore[arg-type]
    assert mem0.add([{"role": "system", "content": "be brief"}], user_id="alice") == {"results": []}


def test_unsupported_config(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="provider 'qdrant' is not supported"):
        Memory.from_config({"vector_store": {"provider": "qdrant", "config": {}}})
    with pytest.raises(ConfigError, match=r"unknown key\(s\) \['vectorstore'\]"):
        Memory.from_config({"vectorstore": {}})
    with pytest.raises(ConfigError, match="give 'connection_string'"):
        Memory.from_config({"vector_store": {"provider": "pgvector", "config": {"host": "h"}}})


def test_path_config_chooses_the_data_dir(tmp_path: Path) -> None:
    config = {"vector_store": {"provider": "kuzu", "config": {"path": str(tmp_path / "d")}}}
    with Memory.from_config(config) as m:
        m.add("Likes tea", user_id="alice")
    assert (tmp_path / "d" / "memory" / "mem0.sqlite3").exists()


def test_pgvector_parts_make_a_url() -> None:
    from shiyi.compat.mem0.config import postgres_url

    parts = {"dbname": "mem", "user": "me", "password": "p@ss", "host": "db", "port": 5433}
    assert postgres_url(parts) == "postgresql://me:p%40ss@db:5433/mem"
    assert postgres_url({"dbname": "mem"}) == "postgresql://localhost:5432/mem"


def test_history_db_path_moves_the_ledger(tmp_path: Path) -> None:
    with Memory.from_config({"history_db_path": str(tmp_path / "h.db")}) as m:
        memory_id = m.add("Likes tea", user_id="alice")["results"][0]["id"]
        assert m.history(memory_id)[0]["event"] == "ADD"
    assert (tmp_path / "h.db").exists()


def test_metadata_is_kept_as_json_dates_as_iso_text(mem0: Memory) -> None:
    when = datetime(2024, 5, 1, 14, 30)
    added = mem0.add("Booked the dentist", user_id="alice", metadata={"due": when, "n": 2})
    got = mem0.get(added["results"][0]["id"])
    assert got is not None and got["metadata"] == {"due": "2024-05-01T14:30:00", "n": 2}
    found = mem0.get_all(user_id="alice", filters={"due": "2024-05-01T14:30:00"})
    assert [r["memory"] for r in found["results"]] == ["Booked the dentist"]
    # any other object had been stored as its repr, matching no filter
    with pytest.raises(MemoryRequestError, match=r"metadata\['file'\] is a PosixPath"):
        mem0.add("x", user_id="alice", metadata={"file": Path("/tmp/notes")})
    with pytest.raises(MemoryRequestError, match=r"has the key \(1, 2\): keys must be text"):
        mem0.add("x", user_id="alice", metadata={(1, 2): "pair"})
    assert len(mem0.get_all(user_id="alice")["results"]) == 1  # the refused adds stored nothing


def test_a_closed_memory_says_so(open_mem0: Callable[[], Memory]) -> None:
    mem0 = open_mem0()
    memory_id = mem0.add("Likes tea", user_id="alice")["results"][0]["id"]
    mem0.close()
    # every verb had raised sqlite3's "Cannot operate on a closed database"
    with pytest.raises(MemoryRequestError, match="search: this Memory is closed"):
        mem0.search("tea", user_id="alice")
    with pytest.raises(MemoryRequestError, match="add: this Memory is closed"):
        mem0.add("Likes coffee", user_id="alice")
    with pytest.raises(MemoryRequestError, match="get: this Memory is closed"):
        mem0.get(memory_id)
    mem0.close()  # twice is fine
    again = open_mem0()
    assert again.get(memory_id) is not None
