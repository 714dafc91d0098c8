"""Forgetting end to end on both backends: the store's own files (Kuzu's, or PostgreSQL's),
the SQLite files on disk and the real embedding model."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from shiyi.config import Settings, load_settings
from shiyi.context.summaries import SummaryStore
from shiyi.errors import NothingToForget, SessionNotFound
from shiyi.index.embeddings.cache import CachedEmbedder
from shiyi.llm.types import Message
from shiyi.memory.intake.segments import event_id
from shiyi.memory.intake.worker import EMBED
from shiyi.memory.lifecycle.forget import payload_editor
from shiyi.memory.models import EventRecord, FactRecord
from shiyi.memory.service import Memory
from shiyi.memory.text.contextual import indexed_text
from shiyi.sessions.log import SessionLog
from tests.support.postgres import database_files
from tests.support.records import log_and_record, seed, turn

SECRET = "zebra-7731"
SECRET_TEXT = f"my {SECRET} password is in the blue vault"
SECRET_FACT = FactRecord(id="fact_secret", key="vault_password", value=f"{SECRET} password")
OTHER_TEXTS = ["Alice adopted a dog named Biscuit last spring.", "Lunch with Bob moved to Friday."]


@pytest.fixture
def forget_settings(tmp_path: Path, memory_store: str) -> Settings:
    """Once per backend (``memory_store``: 'embedded' or a PostgreSQL URL)."""
    loaded = load_settings(cwd=tmp_path, workspace=tmp_path)
    loaded.memory.store = memory_store
    return loaded


@pytest.fixture
def memory(forget_settings: Settings) -> Iterator[Memory]:
    opened = Memory.open(forget_settings, start_worker=False)
    yield opened
    opened.close()


@dataclass
class Chat:
    log: SessionLog
    session_id: str
    rows: list[int]

    def event(self, index: int) -> str:
        """The id of the turn message ``rows[index]`` became."""
        return logged_id(self.log, self.rows[index])


def logged_id(log: SessionLog, row: int) -> str:
    return event_id(row, 0, log.identity.epoch_for(row))


@pytest.fixture
def chat(memory: Memory, forget_settings: Settings) -> Iterator[Chat]:
    """A logged session whose first message holds the secret, recorded into memory the way
    the agent does it (so event ids are ``ev_{epoch}_{row}_{segment}``), plus a fact and a summary
    quoting the secret."""
    log = SessionLog(forget_settings.sessions_db)
    session_id = log.create_session()
    log.set_title(session_id, SECRET_TEXT)
    rows = []
    for text in [SECRET_TEXT, *OTHER_TEXTS]:
        run_id = log.start_run(session_id, text)
        rows.append(log_and_record(memory, log, session_id, run_id, Message("user", text)))
    memory.store.upsert_facts([SECRET_FACT])
    memory.jobs.enqueue(EMBED, {"node": "fact", "ids": [SECRET_FACT.id]})
    assert memory.worker.drain(timeout=120)
    summaries = SummaryStore(forget_settings.data_dir / "summaries.sqlite3")
    summaries.put("block-1", f"[摘要] the user shared the {SECRET} password", "extractive")
    summaries.close()
    yield Chat(log, session_id, rows)
    log.close()


def _cached(memory: Memory, *texts: str) -> dict[str, list[float]]:
    assert isinstance(memory.embedder, CachedEmbedder)
    return memory.embedder.cache.get_many(memory.embedder.model_id, texts)


def _job_payloads(memory: Memory) -> list[str]:
    if memory.settings.store != "embedded":  # the job queue is in the database too
        import psycopg

        with psycopg.connect(memory.settings.store) as pg:
            return [str(row[0]) for row in pg.execute("SELECT payload::text FROM shiyi_jobs")]
    with sqlite3.connect(memory.store.sqlite_path) as conn:  # type: ignore[attr-defined]
        return [str(row[0]) for row in conn.execute("SELECT payload FROM jobs")]


def _sqlite_files(data_dir: Path) -> list[Path]:
    return [p for p in data_dir.rglob("*.sqlite3*") if p.is_file()]


def _logged_texts(chat: Chat) -> list[str]:
    texts = [m.message.content for m in chat.log.messages(chat.session_id)]
    texts += [r.goal for r in chat.log.runs(chat.session_id)]
    return [*texts, chat.log.get_session(chat.session_id).title]


def _store_files(
    memory: Memory, settings: Settings, request: pytest.FixtureRequest
) -> Callable[[], list[Path]]:
    """The files holding the store's rows, listed when called: the Kuzu graph file, or the
    PostgreSQL database's files after a checkpoint."""
    if settings.memory.store == "embedded":
        graph_file: Path = memory.store.graph.path  # type: ignore[attr-defined]
        return lambda: [graph_file]
    server = request.getfixturevalue("local_postgres")
    if server is None:
        pytest.skip("the bytes check needs the test session's own PostgreSQL server")
    return lambda: database_files(server, settings.memory.store)


def test_forget_by_query_leaves_no_trace_in_any_store(
    memory: Memory,
    chat: Chat,
    forget_settings: Settings,
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
) -> None:
    secret_event = chat.event(0)
    # The secret is really everywhere first, so the absence checks below mean something.
    assert {secret_event, SECRET_FACT.id} <= {h.id for h in memory.search(SECRET, mode="keyword")}
    # events are embedded as their indexed text ("(day) User: ..."), facts as their text
    secret_indexed = indexed_text(memory.store.get_events([secret_event])[0])
    assert len(_cached(memory, secret_indexed, SECRET_FACT.text)) == 2
    assert any(SECRET in p for p in _job_payloads(memory))
    assert any(SECRET in t for t in _logged_texts(chat))
    assert any(SECRET.encode() in p.read_bytes() for p in _sqlite_files(forget_settings.data_dir))

    store_files = _store_files(memory, forget_settings, request)
    assert any(SECRET.encode() in path.read_bytes() for path in store_files())
    report = memory.forget_query(f"{SECRET} password", limit=2, compact=True)

    assert (report.events, report.facts, report.keyword_docs) == (1, 1, 2)
    assert report.messages == 1 and report.summaries == 1 and report.embeddings >= 2
    assert report.wal_busy == []
    assert memory.store.get_events([secret_event]) == []
    assert memory.store.get_facts([SECRET_FACT.id]) == []
    assert _cached(memory, SECRET_TEXT, secret_indexed, SECRET_FACT.text) == {}
    assert not any(SECRET in p for p in _job_payloads(memory))
    assert not any(SECRET in t for t in _logged_texts(chat))
    assert memory.store.find_entities([SECRET]) == []
    for mode in ("keyword", "semantic", "graph", "hybrid", "recent"):
        hits = memory.search(f"{SECRET} password vault", mode=mode, limit=10)
        assert not any(SECRET in h.text for h in hits), mode
    # Everything else is still there.
    assert [h.id for h in memory.search("Biscuit", mode="keyword")] == [chat.event(1)]
    assert len(chat.log.messages(chat.session_id)) == 2

    memory.close()
    monkeypatch.setattr(memory, "close", lambda: None)  # already closed for the fixture
    chat.log.close()
    for path in [*_sqlite_files(forget_settings.data_dir), *store_files()]:
        assert SECRET.encode() not in path.read_bytes(), path
    # Kuzu keeps deleted bytes until its file is rewritten; PostgreSQL until VACUUM FULL.
    assert report.compacted


def test_forget_ids_keeps_the_old_forget_contract(memory: Memory, chat: Chat) -> None:
    secret_event = chat.event(0)
    assert memory.forget([secret_event, "no_such_id"]) == 1
    assert memory.store.get_events([secret_event]) == []
    assert [m.message.content for m in chat.log.messages(chat.session_id)] == OTHER_TEXTS
    assert memory.forget([secret_event]) == 0


def _event(i: int, text: str, *, user: str = "default", session: str = "s1") -> EventRecord:
    return turn(i, text, id=f"{session}_e{i}", session=session, run=f"run_{session}", user_id=user)


CORPUS = [
    "Alice adopted a dog named Biscuit last spring.",
    "The staging server returns error 404 for user3 on /api/login.",
    "Let's meet for coffee on Friday.",
    "Biscuit loves chasing tennis balls in the park.",
]


def test_forget_entity_removes_its_facts_and_mentions_only(memory: Memory) -> None:
    seed(memory, [_event(i, text) for i, text in enumerate(CORPUS)])
    memory.store.upsert_facts([
        FactRecord(id="f_dog", key="dog", value="Biscuit is a beagle", entities=["biscuit"]),
        FactRecord(id="f_api", key="login", value="login 404s", entities=["api/login"]),
        FactRecord(id="f_plain", key="coffee", value="coffee on Fridays"),
    ])  # fmt: skip
    assert sorted(memory.store.entity_footprint("biscuit")[1]) == ["s1_e0", "s1_e3"]

    report = memory.forget_entity("Biscuit")

    assert (report.events, report.facts) == (2, 1)
    assert memory.store.find_entities(["biscuit"]) == []
    assert [e.id for e in memory.store.get_events([f"s1_e{i}" for i in range(4)])] == [
        "s1_e1",
        "s1_e2",
    ]
    assert [f.id for f in memory.store.get_facts(["f_dog", "f_api", "f_plain"])] == [
        "f_api",
        "f_plain",
    ]
    assert [e.name for e in memory.store.find_entities(["api/login"])] == ["api/login"]
    assert memory.search("Biscuit", mode="keyword") == []


def test_forget_user_removes_only_that_users_memories(
    memory: Memory, forget_settings: Settings
) -> None:
    log = SessionLog(forget_settings.sessions_db)
    sessions = {user: log.create_session(title=f"{user}'s chat") for user in ("ann", "bob")}
    events = []
    for i, (user, text) in enumerate([("ann", "Ann's locker code is 4411"),
                                      ("bob", "Bob's locker code is 9922")]):  # fmt: skip
        row = log.append(sessions[user], Message("user", text))
        events.append(_event(i, text, user=user, session=sessions[user]))
        events[-1].id = logged_id(log, row)
    seed(memory, events)
    memory.store.upsert_facts([
        FactRecord(id="f_ann", key="locker", value="4411", user_id="ann"),
        FactRecord(id="f_bob", key="locker", value="9922", user_id="bob"),
    ])  # fmt: skip
    sessions_before = memory.store.counts()["sessions"]

    report = memory.forget_user("ann")

    assert (report.events, report.facts, report.graph_sessions) == (1, 1, 1)
    assert (report.log_sessions, report.messages) == (1, 1)
    assert memory.store.user_footprint("ann") == ([], [])
    assert memory.store.user_footprint("bob") == (["f_bob"], [events[1].id])
    assert memory.store.counts()["sessions"] == sessions_before - 1
    with pytest.raises(SessionNotFound):
        log.get_session(sessions["ann"])
    assert [m.message.content for m in log.messages(sessions["bob"])] == [events[1].content]
    found = {s.id for s in memory.store.keyword_search("locker code", 10)}
    assert found == {events[1].id, "f_bob"}
    log.close()


def test_unknown_targets_say_what_was_wrong(memory: Memory) -> None:
    with pytest.raises(NothingToForget, match="no entity named 'nobody'"):
        memory.forget_entity("nobody")
    with pytest.raises(NothingToForget, match="no memories of user 'ghost'"):
        memory.forget_user("ghost")
    with pytest.raises(NothingToForget, match="no memory contains every word"):
        memory.forget_query("anything at all")


def test_payload_editor_strips_forgotten_items_and_drops_emptied_jobs() -> None:
    edit = payload_editor(["e1", "f1"], ["the secret text"], ["s_gone"], "ann")
    events = {"events": [{"id": "e1"}, {"id": "e2", "user_id": "bob"}]}
    assert edit(events) == {"events": [{"id": "e2", "user_id": "bob"}]}
    assert edit({"events": [{"id": "e9", "user_id": "ann"}]}) is None
    assert edit({"events": [{"id": "e9", "content": "the secret text"}]}) is None
    assert edit({"node": "fact", "ids": ["f1", "f2"]}) == {"node": "fact", "ids": ["f2"]}
    assert edit({"node": "fact", "ids": ["f1"]}) is None
    assert edit({"event_id": "e1"}) is None
    assert edit({"session_id": "s_gone", "reason": "end"}) is None
    assert edit({"run_id": "r1", "goal": "the secret text", "status": "completed"}) is None
    untouched = {"run_id": "r1", "goal": "something else", "status": "completed"}
    assert edit(untouched) == untouched
    assert json.dumps(edit({"ids": []})) == '{"ids": []}'


def secret_run(memory: Memory, settings: Settings) -> tuple[str, str, list[str]]:
    """A run that stored the secret and was answered, indexed: its session, run and turns."""
    log = SessionLog(settings.sessions_db)
    session = log.create_session()
    run = log.start_run(session, SECRET_TEXT)
    ids = []
    for message in (Message("user", SECRET_TEXT), Message("assistant", "Stored it safely.")):
        row = log_and_record(memory, log, session, run, message)
        ids.append(logged_id(log, row))
    log.close()
    assert memory.worker.drain(timeout=120)
    return session, run, ids


def test_forgetting_a_message_takes_the_run_archive_quoting_it(
    memory: Memory, forget_settings: Settings
) -> None:
    _, run, ids = secret_run(memory, forget_settings)
    # A fact the answer supports too: it stays, citing only what remains.
    kept = memory.remember("the vault is blue", source_events=ids)
    memory.archive_run(run, SECRET_TEXT, "completed")
    assert memory.worker.drain(timeout=120)
    [archive] = [h for h in memory.search(SECRET, mode="keyword") if h.node == "fact"]
    assert "(completed, 2 segments) -> Stored it safely." in archive.text

    report = memory.forget_ids([ids[0]])

    assert memory.store.get_facts([archive.id]) == []
    assert memory.store.get_facts([kept.id])[0].source_events == [ids[1]]
    for mode in ("keyword", "semantic", "graph", "hybrid", "recent"):
        hits = memory.search(f"{SECRET} password vault", mode=mode, limit=10)
        assert not any(SECRET in h.text for h in hits), mode
    assert (report.events, report.facts, report.archives) == (1, 1, 1)
    # Not compacted: the report names where the bytes stay and how to remove them.
    assert len(report.bytes_remain) == 1 and not report.compacted
    if forget_settings.memory.store == "embedded":
        assert report.bytes_remain[0].endswith("graph.kuzu")
    assert any("run `shiyi memory compact`" in line for line in report.lines())
    assert memory.forget_ids([ids[1]], compact=True).bytes_remain == []


def test_an_archive_written_after_the_plan_goes_with_the_message(
    memory: Memory, forget_settings: Settings
) -> None:
    """The worker may archive the run between a forget's plan and its deletes."""
    log = SessionLog(forget_settings.sessions_db)
    session = log.create_session()
    run = log.start_run(session, SECRET_TEXT)
    row = log_and_record(memory, log, session, run, Message("user", SECRET_TEXT))
    said = logged_id(log, row)
    log.close()
    assert memory.worker.drain(timeout=120)
    forgetter = memory.forgetter()
    plan = memory.within_scope(forgetter.plan_ids([said]))
    memory.archive_run(run, SECRET_TEXT, "completed")
    assert memory.worker.drain(timeout=120)
    [archive] = [h for h in memory.search(SECRET, mode="keyword") if h.node == "fact"]
    assert archive.id not in plan.fact_ids

    report = forgetter.execute(plan)

    assert memory.store.get_facts([archive.id]) == []
    assert not any(SECRET in h.text for h in memory.search(SECRET, mode="keyword", limit=10))
    assert (report.events, report.facts, report.archives) == (1, 1, 1)


def test_an_archive_queued_after_the_forget_does_not_quote_the_forgotten_goal(
    memory: Memory, forget_settings: Settings
) -> None:
    """The run ends (and queues its archive) after a forget took its first message: the job's
    payload still holds the goal, the run's other turns are still there to archive."""
    session, run, ids = secret_run(memory, forget_settings)
    memory.forget_ids([ids[0]])

    memory.archive_run(run, SECRET_TEXT, "completed")
    assert memory.worker.drain(timeout=120)

    assert not any(SECRET in h.text for h in memory.search(SECRET, mode="keyword", limit=10))
    assert not _archives(memory)
    # A run whose goal is still said is archived as before.
    other = SessionLog(forget_settings.sessions_db)
    kept_run = other.start_run(other.create_session(), "plan the picnic")
    log_and_record(memory, other, session, kept_run, Message("user", "plan the picnic"))
    other.close()
    memory.archive_run(kept_run, "plan the picnic", "completed")
    assert memory.worker.drain(timeout=120)
    assert [f.text for f in _archives(memory)] == [
        f"run {kept_run.removeprefix('run_')}: plan the picnic (completed, 1 segments)"
    ]


def _archives(memory: Memory) -> list[FactRecord]:
    facts = memory.store.get_facts(memory.store.fact_ids(1000))
    return [f for f in facts if f.source == "archive"]


def test_forget_by_query_takes_superseded_and_expired_copies_too(memory: Memory) -> None:
    """A search shows current facts only; a forget must find every stored copy of the words
    (`shiyi memory forget --query Lisbon` left "I moved to Lisbon in March" in the history)."""
    old = memory.remember("I moved to Lisbon in March", key="lives in")
    new = memory.remember("Lisbon", key="lives in")
    expired = FactRecord(id="fact_trip", key="trip", value="Lisbon on Friday", status="expired")
    memory.store.upsert_facts([expired])
    assert memory.store.get_facts([old.id])[0].status == "superseded"
    assert {h.id for h in memory.search("Lisbon", limit=10)} == {new.id}

    report = memory.forget_query("Lisbon", limit=5)

    assert report.facts == 3
    assert memory.store.get_facts([old.id, new.id, expired.id]) == []
    assert memory.history(key="lives in") == []
