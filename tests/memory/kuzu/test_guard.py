"""A missing, empty or unreadable graph beside a mirror with events is damage, never a first
start: the store refuses to open, names the file and the safe fix, and leaves it untouched."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from shiyi.errors import StorageError
from shiyi.memory.kuzu.store import EmbeddedStore
from shiyi.memory.models import EventRecord, FactRecord

DIM = 8


def filled_store(directory: Path) -> None:
    store = EmbeddedStore(directory, dimension=DIM, embedding_model="m")
    try:
        store.add_events(
            [
                EventRecord(f"e{i}", "s", "r", 1.0 + i, "user", f"turn {i}", "user_message", i)
                for i in range(3)
            ]
        )
    finally:
        store.close()


def test_an_empty_graph_beside_a_filled_mirror_is_refused(tmp_path: Path) -> None:
    filled_store(tmp_path)
    graph = tmp_path / "graph.kuzu"
    graph.write_bytes(b"")
    with pytest.raises(StorageError) as raised:
        EmbeddedStore(tmp_path, dimension=DIM, embedding_model="m")
    message = str(raised.value)
    assert f"{graph} is empty (0 bytes)" in message
    assert "mirrors 3 remembered turns" in message
    assert "restore" in message and "shiyi doctor --rebuild-graph" in message
    assert graph.stat().st_size == 0  # not replaced by a fresh store
    # The refusal released the store's lock: a second attempt gets the same answer at once.
    with pytest.raises(StorageError, match="is empty"):
        EmbeddedStore(tmp_path, dimension=DIM, embedding_model="m", lock_timeout=0.0)


def test_a_missing_graph_beside_a_filled_mirror_is_refused(tmp_path: Path) -> None:
    filled_store(tmp_path)
    (tmp_path / "graph.kuzu").unlink()
    with pytest.raises(StorageError, match=r"graph.kuzu is missing.*3 remembered turns"):
        EmbeddedStore(tmp_path, dimension=DIM, embedding_model="m")
    assert not (tmp_path / "graph.kuzu").exists()


def test_an_empty_graph_beside_remembered_facts_alone_is_refused(tmp_path: Path) -> None:
    """`memory add` stores facts and no turn: the facts' copy alone shows a store was here."""
    store = EmbeddedStore(tmp_path, dimension=DIM, embedding_model="m")
    try:
        store.upsert_facts([FactRecord(id=f"f{i}", key="", value=f"fact {i}") for i in range(2)])
    finally:
        store.close()
    (tmp_path / "graph.kuzu").write_bytes(b"")
    with pytest.raises(StorageError, match=r"is empty \(0 bytes\).*mirrors 2 facts, so a store"):
        EmbeddedStore(tmp_path, dimension=DIM, embedding_model="m")
    assert (tmp_path / "graph.kuzu").stat().st_size == 0


def test_a_garbage_graph_is_named_and_left_as_it_was(tmp_path: Path) -> None:
    filled_store(tmp_path)
    graph = tmp_path / "graph.kuzu"
    graph.write_bytes(b"\x07garbage" * 700)
    before = hashlib.sha256(graph.read_bytes()).hexdigest()
    with pytest.raises(StorageError) as raised:
        EmbeddedStore(tmp_path, dimension=DIM, embedding_model="m")
    assert "cannot be opened" in str(raised.value) and "do not delete it" in str(raised.value)
    assert "Move it aside to start a fresh store" not in str(raised.value)
    assert hashlib.sha256(graph.read_bytes()).hexdigest() == before


def test_a_first_start_and_an_empty_store_still_open(tmp_path: Path) -> None:
    EmbeddedStore(tmp_path / "new", dimension=DIM, embedding_model="m").close()
    (tmp_path / "new" / "graph.kuzu").unlink()  # nothing was ever remembered: nothing lost
    store = EmbeddedStore(tmp_path / "new", dimension=DIM, embedding_model="m")
    try:
        assert store.counts()["events"] == 0
    finally:
        store.close()


def test_an_unreadable_mirror_file_names_what_it_holds(tmp_path: Path) -> None:
    filled_store(tmp_path)
    sqlite = tmp_path / "memory.sqlite3"
    for side in tmp_path.glob("memory.sqlite3-*"):
        side.unlink()
    sqlite.write_bytes(b"\x01 not sqlite " * 600)
    with pytest.raises(StorageError) as raised:
        EmbeddedStore(tmp_path, dimension=DIM, embedding_model="m")
    message = str(raised.value)
    assert f"{sqlite} is damaged" in message and "job queue" in message
    assert "do not delete it" in message and "shiyi doctor --rebuild-sqlite" in message
