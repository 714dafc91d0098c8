"""`shiyi worker` end to end: real subprocesses, a real store, a real PostgreSQL."""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator

import psycopg
import pytest

from shiyi.config import Settings, load_settings
from shiyi.memory.models import EventRecord
from shiyi.memory.service import Memory
from tests.interfaces.cli.conftest import Cli


def events(count: int, prefix: str = "w") -> list[EventRecord]:
    return [
        EventRecord(
            f"{prefix}{i}",
            f"s{i % 7}",
            "r",
            1.7e9 + i,
            "user",
            f"note {i} about Kestrel",
            "imported",
        )
        for i in range(count)
    ]


def settings_of(cli: Cli, store: str) -> Settings:
    """What the `shiyi` subprocesses see: the same home, workspace and memory settings."""
    cli.env["SHIYI_MEMORY__STORE"] = store
    cli.env["SHIYI_MEMORY__EMBEDDER"] = "none"  # no model to load in every worker process
    settings = load_settings(home=cli.env["SHIYI_HOME"], workspace=cli.workspace)
    settings.memory.store = store
    settings.memory.embedder = "none"
    return settings


def queue_ingest(settings: Settings, count: int, *, per_job: int = 5) -> None:
    memory = Memory.open(settings, start_worker=False)
    queued = events(count)
    try:
        for start in range(0, count, per_job):
            memory.writer.record_events(queued[start : start + per_job])
    finally:
        memory.close(flush=False)


@pytest.fixture
def postgres_settings(cli: Cli, postgres_url: str) -> Settings:
    return settings_of(cli, postgres_url)


@pytest.fixture
def owner(postgres_settings: Settings) -> Iterator[Memory]:
    """This test process holds the data directory, as `shiyi serve` would."""
    memory = Memory.open(postgres_settings, start_worker=False)
    yield memory
    memory.close(flush=False)


def job_states(url: str) -> dict[str, int]:
    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT status, count(*) FROM shiyi_jobs GROUP BY 1").fetchall()
    return {str(status): int(count) for status, count in rows}


def claimants(url: str) -> int:
    """How many workers have claimed jobs so far."""
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT count(DISTINCT claimed_by) FROM shiyi_jobs").fetchone()
    return int(row[0]) if row else 0


def test_embedded_worker_drains_the_queue_as_the_owner(cli: Cli) -> None:
    settings = settings_of(cli, "embedded")
    queue_ingest(settings, 40)
    result = cli.run("worker", "--drain")
    assert result.returncode == 0, result.stderr
    assert "handled" in result.stderr
    memory = Memory.open(settings, start_worker=False)
    try:
        assert memory.stats()["events"] == 40
        assert memory.jobs.ready_count() == 0
    finally:
        memory.close()


def test_embedded_worker_refuses_while_another_process_owns_the_store(cli: Cli) -> None:
    settings = settings_of(cli, "embedded")
    holder = Memory.open(settings, start_worker=False)
    try:
        cli.env["SHIYI_MEMORY__LOCK_TIMEOUT"] = "0.2"
        result = cli.run("worker", "--drain")
    finally:
        holder.close()
    assert result.returncode == 2
    assert "in use by pid" in result.stderr
    assert "single-process" in result.stderr
    assert "Traceback" not in result.stderr


def test_embedded_worker_refuses_several_processes(cli: Cli) -> None:
    settings_of(cli, "embedded")
    result = cli.run("worker", "--processes", "2", "--drain")
    assert result.returncode == 2
    assert "cannot be drained by several workers" in result.stderr
    assert "postgresql://" in result.stderr


def test_postgres_workers_drain_beside_the_owner(
    cli: Cli, postgres_settings: Settings, owner: Memory, postgres_url: str
) -> None:
    owner.import_events(events(300))  # 1 ingest job; it queues entity-link jobs
    more = events(300, prefix="x")
    for start in range(0, 300, 10):
        owner.writer.record_events(more[start : start + 10])
    result = cli.run("worker", "--processes", "2", "--drain", "--poll", "0.05")
    assert result.returncode == 0, result.stderr
    assert result.stderr.count("handled") == 2  # two worker processes, each reporting
    assert owner.stats()["events"] == 600
    assert job_states(postgres_url) == {"done": sum(job_states(postgres_url).values())}
    assert owner.store.find_entities(["kestrel"])  # the entity-link jobs ran too


def test_sigterm_stops_the_workers_and_leaves_no_job_claimed(
    cli: Cli, postgres_settings: Settings, postgres_url: str
) -> None:
    queue_ingest(postgres_settings, 3000, per_job=1)
    workers = cli.popen("worker", "--processes", "2", "--poll", "0.05")
    try:
        deadline = time.monotonic() + 60
        while job_states(postgres_url).get("done", 0) < 50 or claimants(postgres_url) < 2:
            assert time.monotonic() < deadline, "the workers did not start"
            time.sleep(0.05)
        workers.send_signal(signal.SIGTERM)
        _, stderr = workers.communicate(timeout=30)
    finally:
        if workers.poll() is None:
            workers.kill()
            workers.wait()
    assert workers.returncode == 0, stderr
    assert stderr.count("SIGTERM: stopping after the batch in hand") == 2
    states = job_states(postgres_url)
    assert "running" not in states  # finished or handed back, none left claimed
    assert states.get("pending", 0) > 0  # it stopped early: the rest waits for a worker


def test_unreachable_database_is_a_clear_error(cli: Cli) -> None:
    settings_of(cli, "postgresql://shiyi:hunter2@127.0.0.1:1/memory")
    result = cli.run("worker", "--drain")
    assert result.returncode == 2
    assert "postgresql://127.0.0.1:1/memory" in result.stderr
    assert "hunter2" not in result.stderr
    assert "Traceback" not in result.stderr


def test_embedded_worker_refuses_beside_a_serving_owner(cli: Cli) -> None:
    from shiyi.client.owner import remove_owner, write_owner

    settings = settings_of(cli, "embedded")
    write_owner(settings.data_dir, "http://127.0.0.1:1")  # this live test process "serves"
    try:
        result = cli.run("worker", "--drain")
    finally:
        remove_owner(settings.data_dir)
    assert result.returncode == 2
    assert "runs its memory worker itself" in result.stderr


def test_a_worker_stopped_before_it_started_counts_as_a_clean_stop() -> None:
    from shiyi.interfaces.cli.worker_cmd import combined_exit_code

    assert combined_exit_code([0, -signal.SIGTERM], stopped=True) == 0
    assert combined_exit_code([0, -signal.SIGTERM], stopped=False) == 1
    assert combined_exit_code([0, 2], stopped=True) == 2
