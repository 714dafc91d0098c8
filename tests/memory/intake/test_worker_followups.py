"""A bulk ingest queues its follow-up work in small jobs, so several worker processes share
it (one claim must not take a whole import's embedding)."""

from __future__ import annotations

from pathlib import Path

from shiyi.memory.intake.worker import EMBED, ENTITIES, INGEST, MemoryWorker, event_payload
from shiyi.memory.kuzu.jobs import SqliteJobQueue
from shiyi.memory.models import EventRecord
from shiyi.memory.protocol import MemoryStore
from tests.memory.conftest import DIM
from tests.support.embedders import CountingEmbedder


def test_follow_ups_come_in_jobs_of_at_most_one_batch(store: MemoryStore, tmp_path: Path) -> None:
    jobs = SqliteJobQueue(tmp_path / "jobs.sqlite3")
    worker = MemoryWorker(store, jobs, CountingEmbedder("test-model", DIM), batch=4)
    events = [
        EventRecord(f"e{i}", "s", "r", 1.7e9 + i, "user", f"note {i} about Kestrel", "imported")
        for i in range(10)
    ]
    jobs.enqueue(INGEST, event_payload(events))
    assert worker.run_once() == 1
    for kind in (ENTITIES, EMBED):
        claimed = jobs.claim([kind], limit=10)
        assert [len(job.payload["ids"]) for job in claimed] == [4, 4, 2]
        for job in claimed:  # handed back for the drain below
            jobs.defer(job, "later", retry_in=0)
    assert worker.drain(timeout=60)
    assert store.counts()["embedded_events"] == 10
    jobs.close()


def test_echoes_are_never_embedded(store: MemoryStore, tmp_path: Path) -> None:
    # a memory tool's call and result are never recalled: a vector of them would only take
    # the vector path's places and the embedder's time, at ingest or at a later backfill
    jobs = SqliteJobQueue(tmp_path / "jobs.sqlite3")
    embedder = CountingEmbedder("test-model", DIM)
    worker = MemoryWorker(store, jobs, embedder, batch=4)
    said = EventRecord("said", "s", "r", 1.7e9, "user", "my kettle is teal", "user_message")
    call = EventRecord(
        "call", "s", "r", 1.7e9 + 1, "assistant", "query_memory query=kettle colour",
        "tool_call", derived="memory_tool",
    )  # fmt: skip
    result = EventRecord(
        "result", "s", "r", 1.7e9 + 2, "tool", "query_memory: my kettle is teal",
        "tool_result", derived="memory_tool",
    )  # fmt: skip
    jobs.enqueue(INGEST, event_payload([said, call, result]))
    assert worker.drain(timeout=60)
    assert store.counts()["embedded_events"] == 1
    assert [text for text in embedder.seen if "query_memory" in text] == []
    assert store.events_missing_embeddings(10) == []  # a backfill has nothing left to do
    assert {hit.id for hit in store.vector_search("event", embedder.vector("x"), 10)} == {"said"}
    jobs.close()
