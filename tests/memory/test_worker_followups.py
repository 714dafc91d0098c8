"""A bulk ingest queues its follow-up work in small jobs, so several worker processes share
it (one claim must not take a whole import's embedding)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from shiyi.memory.jobs import SqliteJobQueue
from shiyi.memory.models import EventRecord
from shiyi.memory.protocol import MemoryStore
from shiyi.memory.worker import EMBED, ENTITIES, INGEST, MemoryWorker, event_payload
from tests.memory.conftest import DIM


class CountingEmbedder:
    """Unit vectors along one axis per text length: deterministic, no model."""

    model_id = "test-model"
    dimension = DIM

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [[1.0 if i == len(t) % DIM else 0.0 for i in range(DIM)] for t in texts]


def test_follow_ups_come_in_jobs_of_at_most_one_batch(store: MemoryStore, tmp_path: Path) -> None:
    jobs = SqliteJobQueue(tmp_path / "jobs.sqlite3")
    worker = MemoryWorker(store, jobs, CountingEmbedder(), batch=4)
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
