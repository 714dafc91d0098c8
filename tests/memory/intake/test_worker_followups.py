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
