"""What a killed server left half done is repaired when the next one starts on its data dir:
logged messages memory never stored are queued, runs left 'running' are interrupted."""

from __future__ import annotations

from shiyi.config import Settings
from shiyi.llm.types import Message
from shiyi.memory.intake.segments import event_id
from shiyi.sessions.log import SessionLog
from tests.interfaces.server.conftest import LiveFactory
from tests.support.waiting import wait_for

WORD = "quokka-5512"


def _killed_mid_run(settings: Settings) -> tuple[str, str, list[str]]:
    """The log as a process killed between logging and queueing leaves it: a run still
    'running' and two messages logged that memory never heard of (their event ids)."""
    log = SessionLog(settings.sessions_db)
    try:
        session = log.create_session(title="crashed")
        run = log.start_run(session, f"the {WORD} plan")
        rows = [
            log.append(session, Message("user", f"the {WORD} plan"), run_id=run),
            log.append(session, Message("assistant", f"noted the {WORD} plan"), run_id=run),
        ]
        return session, run, [event_id(row, 0, log.identity.epoch_for(row)) for row in rows]
    finally:
        log.close()


def test_restart_queues_unstored_messages_and_interrupts_dead_runs(
    live: LiveFactory, settings: Settings
) -> None:
    _session, run, wanted = _killed_mid_run(settings)
    server = live()
    memory = server.service.memory
    assert memory is not None

    info = server.client.get(f"/v1/runs/{run}")
    assert info.status_code == 200, info.text
    assert (info.json()["status"], info.json()["active"]) == ("interrupted", False)

    def found() -> set[str]:
        answer = server.client.get("/v1/memory/search", params={"q": WORD, "mode": "keyword"})
        assert answer.status_code == 200, answer.text
        ids = {hit["id"] for hit in answer.json()["hits"]}
        return ids if ids >= set(wanted) else set()

    assert wait_for(found) == set(wanted)
    assert server.service.log.get_meta("memory_reconciled_row") == str(
        server.service.log.last_message_id()
    )


def test_reconciling_twice_queues_nothing_new(live: LiveFactory, settings: Settings) -> None:
    from shiyi.memory.intake.reconcile import WATERMARK, reconcile

    _session, _run, ids = _killed_mid_run(settings)
    server = live()
    memory = server.service.memory
    assert memory is not None
    wait_for(lambda: len(memory.store.get_events(ids)) == 2)
    # The watermark is at the log's end; even without it nothing is missing any more.
    server.service.log.set_meta(WATERMARK, "0")
    again = reconcile(server.service.log, memory.store, memory.jobs)
    assert (again.checked, again.queued) == (2, 0)


def test_a_server_without_memory_interrupts_dead_runs_too(
    live: LiveFactory, settings: Settings
) -> None:
    _session, run, _rows = _killed_mid_run(settings)
    server = live(memory=False)
    info = server.client.get(f"/v1/runs/{run}").json()
    assert (info["status"], info["detail"]) == (
        "interrupted",
        "the process stopped before the run ended",
    )
