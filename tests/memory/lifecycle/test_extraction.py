"""The extraction job: schema-validated output, confidence bands, repair, visible failure,
and waiting (not failing) without a usable model."""

from __future__ import annotations

import json
import sqlite3

import pytest

from shiyi.errors import ExtractionFailed, ModelError
from shiyi.llm.scripted import ScriptedModel, ScriptedReply, call
from shiyi.llm.types import Message, ToolCall
from shiyi.memory.lifecycle.extraction import parse_reply
from shiyi.memory.lifecycle.pipeline import EXTRACT
from tests.memory.lifecycle.conftest import MemoryFactory, extraction, fact, say, user_event


def _jobs(memory: object, kind: str) -> list[tuple[str, int, str]]:
    store = memory.settings.store  # type: ignore[attr-defined]
    if store != "embedded":  # the job queue is in the database too
        import psycopg

        with psycopg.connect(store) as pg:
            rows = pg.execute(
                "SELECT status, attempts, last_error FROM shiyi_jobs WHERE kind = %s ORDER BY id",
                (kind,),
            ).fetchall()
        return [(str(s), int(a), str(e)) for s, a, e in rows]
    path = memory.store.sqlite_path  # type: ignore[attr-defined]
    with sqlite3.connect(path) as db:
        rows = db.execute(
            "SELECT status, attempts, last_error FROM jobs WHERE kind = ?", (kind,)
        ).fetchall()
    return [(str(s), int(a), str(e)) for s, a, e in rows]


def test_confidence_bands_write_active_pending_or_drop(open_memory: MemoryFactory) -> None:
    memory = open_memory(
        extraction(
            facts=[
                fact("favourite_editor", "Neovim", 0.92, kind="preference"),
                fact("employer", "maybe Acme", 0.62),
                fact("shoe size", "44", 0.3),
            ],
            entities=[{"name": "Neovim", "type": "tool"}],
        )
    )
    say(memory, user_event(1, "I use Neovim every day; I think I might join Acme."))
    facts = {
        f.key: f
        for f in memory.store.get_facts(
            memory.store.facts_by_status(["active", "pending", "superseded", "expired"], 50)
        )
    }
    assert facts["favourite editor"].status == "active"
    assert facts["favourite editor"].kind == "preference"
    assert facts["favourite editor"].source == "extraction"
    assert facts["favourite editor"].source_events == ["us11"]
    assert facts["employer"].status == "pending"
    assert "shoe size" not in facts
    assert memory.store.find_entities(["neovim"])[0].type == "tool"
    # The model read the message with its timestamp and was forced to call the tool.
    request = memory.scripted.requests[0]  # type: ignore[attr-defined]
    assert "[2026-11-23 Mon 10:01 UTC] user: I use Neovim" in request.last.content
    assert request.tool_choice == "record_memories"


def test_invalid_output_is_repaired_once(open_memory: MemoryFactory) -> None:
    memory = open_memory(
        ScriptedReply(tool_calls=(call("record_memories", '{"facts": [{"key": "city"'),)),
        extraction(facts=[fact("city", "Lisbon")]),
    )
    say(memory, user_event(1, "I live in Lisbon."))
    hits = memory.search("Lisbon", mode="keyword")
    assert [h.text for h in hits if h.node == "fact"] == ["city: Lisbon"]
    repair = memory.scripted.requests[1]  # type: ignore[attr-defined]
    assert "not valid JSON" in repair.last.content
    assert _jobs(memory, EXTRACT) == [("done", 0, "")]


def test_output_invalid_twice_fails_the_job_visibly(open_memory: MemoryFactory) -> None:
    bad = ScriptedReply(tool_calls=(call("record_memories", {"facts": [{"key": "x"}]}),))
    memory = open_memory(bad, bad)
    memory.import_events([user_event(1, "hello there")])
    memory.worker.drain(timeout=60)
    [(status, attempts, error)] = _jobs(memory, EXTRACT)
    assert (status, attempts) == ("pending", 1)  # retried later with backoff, not lost
    assert "invalid after one repair" in error
    assert "facts.0.value" in error and "facts.0.confidence" in error


def test_without_a_model_jobs_wait_and_entities_still_link(open_memory: MemoryFactory) -> None:
    memory = open_memory()
    memory.import_events([user_event(1, "Ping Grafana about the Kubernetes upgrade")])
    assert memory.worker.drain(timeout=60)  # nothing runnable is left
    assert _jobs(memory, EXTRACT) == [("pending", 0, "")]
    assert memory.store.find_entities(["kubernetes"])


def test_unreachable_model_defers_without_using_attempts(open_memory: MemoryFactory) -> None:
    memory = open_memory(ModelError("connection refused", retryable=True))
    memory.import_events([user_event(1, "I moved to Porto")])
    memory.worker.drain(timeout=60)
    [(status, attempts, error)] = _jobs(memory, EXTRACT)
    assert (status, attempts) == ("pending", 0)
    assert "unavailable" in error


def test_json_text_reply_is_accepted_from_models_without_tools() -> None:
    payload = {"facts": [fact("pet", "a rabbit called Tofu")]}
    result = parse_reply(Message("assistant", f"Here you go: {json.dumps(payload)}"))
    assert result.facts[0].value == "a rabbit called Tofu"
    with pytest.raises(ExtractionFailed, match="did not call record_memories"):
        parse_reply(Message("assistant", "nothing to remember"))
    call_ = ToolCall("c1", "record_memories", '{"facts": "oops"}')
    with pytest.raises(ExtractionFailed, match="facts"):
        parse_reply(Message("assistant", "", tool_calls=(call_,)))


def test_extraction_reads_the_last_three_messages(open_memory: MemoryFactory) -> None:
    model = ScriptedModel([extraction()], repeat_last=True)
    memory = open_memory(model=model)
    say(memory, *(user_event(i, f"message number {i}") for i in range(1, 6)))
    last = model.requests[-1].last.content
    assert "message number 5" in last and "message number 3" in last
    assert "message number 2" not in last
