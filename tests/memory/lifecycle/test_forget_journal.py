"""A forget killed half way (its journal entry written, some stores already cleared) is
finished by the next process that opens the memory, on both backends: nothing forgotten is
copied back from the stores that still held it."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from shiyi.config import Settings
from shiyi.llm.types import Message
from shiyi.memory.service import Memory
from shiyi.sessions.log import SessionLog
from tests.support.records import log_and_record

SECRET = "heron-5519"
TEXTS = [f"the gate code is {SECRET}", "Alice moved the standup to ten", "Bob likes green tea"]


def interrupted_forget(memory_dir: Path, event_ids: list[str], text: str) -> None:
    """The journal entry a forget writes before it deletes anything (as JSON on disk)."""
    journal = memory_dir / "forgetting"
    journal.mkdir(parents=True, exist_ok=True)
    entry = {
        "version": 1,
        "target": f"ids {', '.join(event_ids)}",
        "event_ids": event_ids,
        "text_hashes": [hashlib.sha256(text.encode()).hexdigest()],
        "events": len(event_ids),
    }
    (journal / "0001.json").write_text(json.dumps(entry), encoding="utf-8")


def test_the_next_open_finishes_a_forget_killed_half_way(settings: Settings) -> None:
    memory = Memory.open(settings, start_worker=False)
    log = SessionLog(settings.sessions_db)
    session = log.create_session()
    for text in TEXTS:
        run = log.start_run(session, text)
        log_and_record(memory, log, session, run, Message("user", text))
    assert memory.worker.drain(timeout=120)
    found = memory.search(SECRET, mode="keyword", limit=5)
    ids = [hit.id for hit in found if SECRET in hit.text]
    assert len(ids) == 1
    # Killed after its first deletes: the keyword index lost the turn, the graph and the
    # session log still hold it.
    interrupted_forget(settings.memory_dir, ids, TEXTS[0])
    getattr(memory.store, "keywords").delete(ids)  # noqa: B009 (both stores have one)
    memory.close()

    reopened = Memory.open(settings, start_worker=False)
    try:
        assert reopened.store.get_events(ids) == []
        assert reopened.search(SECRET, mode="keyword", limit=5) == []
        kept = reopened.search("standup tea", mode="keyword", limit=5)
        assert sorted(h.text.removeprefix("User: ") for h in kept) == sorted(TEXTS[1:])
        assert [m.message.content for m in log.messages(session)] == TEXTS[1:]
        assert list((settings.memory_dir / "forgetting").glob("*.json")) == []
    finally:
        reopened.close()
        log.close()
