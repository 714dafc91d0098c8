"""Facts as the memory page gets them (issue 30 item 7): source counts from the source turns,
a superseded version's successor, current versions first, run archives listed apart (both
backends), and a value typed with its own key prefix stored once (through the server)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from shiyi.config import load_settings
from shiyi.memory.models import EventRecord
from shiyi.memory.operations import views as page_views
from shiyi.memory.operations.fact_views import current_first, shown, strip_key_prefix
from shiyi.memory.service import Memory
from tests.interfaces.server.conftest import LiveFactory


@pytest.fixture(params=("embedded", "postgres"))
def memory(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Memory]:
    """A memory without an embedder (values are compared by words) on each backend."""
    settings = load_settings(cwd=tmp_path, workspace=tmp_path)
    if request.param == "postgres":
        settings.memory.store = str(request.getfixturevalue("postgres_url"))
    settings.memory.embedder = "none"
    opened = Memory.open(settings, start_worker=False)
    yield opened
    opened.close()


def turns(memory: Memory, session_id: str, texts: list[str], start: float) -> list[EventRecord]:
    run_id = f"run_{uuid.uuid4().hex[:8]}"
    events = [
        EventRecord(
            f"ev_{uuid.uuid4().hex[:10]}",
            session_id,
            run_id,
            start + i,
            "user",
            text,
            "user_message",
            iteration=i + 1,
        )
        for i, text in enumerate(texts)
    ]
    memory.store.add_events(events)
    return events


def test_shown_facts_count_turns_and_name_their_successor(memory: Memory) -> None:
    first = turns(memory, "ses_a", ["I live in Berlin", "yes, Berlin"], 1_000.0)
    second = turns(memory, "ses_b", ["I moved to Paris"], 2_000.0)
    berlin = memory.remember(
        "Berlin", key="lives in", source_events=[first[0].id, first[1].id, second[0].id]
    )
    paris = memory.remember("Paris", key="lives in", source_events=[second[0].id])
    told = memory.remember("Prefers tea")
    versions = current_first(memory.history(key="lives in"))
    assert [f.id for f in versions] == [paris.id, berlin.id]  # current first

    by_id = {f.id: f for f in shown(memory, [*versions, *memory.store.get_facts([told.id])])}
    old, new = by_id[berlin.id], by_id[paris.id]
    assert (old.status, old.source_turns, old.source_sessions) == ("superseded", 3, 2)
    assert old.replaced_by is not None
    assert (old.replaced_by.id, old.replaced_by.key, old.replaced_by.value) == (
        paris.id,
        "lives in",
        "Paris",
    )
    assert old.valid_to is not None
    assert (new.source_turns, new.source_sessions, new.replaced_by) == (1, 1, None)
    assert (by_id[told.id].source_turns, by_id[told.id].source) == (0, "explicit")


def test_run_archives_are_listed_apart(memory: Memory) -> None:
    events = turns(memory, "ses_runs", ["prune docker images"], 3_000.0)
    archived = memory.lifecycle.archive(events[0].run_id, "prune docker images", "completed")
    assert len(archived.created) == 1
    fact = memory.remember("Images live in registry.local")
    listed = page_views.list_facts
    runs = listed(memory, page_views.FactFilter(sources=("archive",)), 50, 0)
    others = listed(memory, page_views.FactFilter(not_sources=("archive",)), 50, 0)
    assert [f.id for f in runs.facts] == archived.created and runs.total == 1
    assert [f.id for f in others.facts] == [fact.id]


@pytest.mark.parametrize(
    ("key", "typed", "stored"),
    [
        ("lives in", "lives in: Paris", "Paris"),
        ("lives in", "Lives In : lives in: Paris", "Paris"),
        ("lives in", "lives in：巴黎", "巴黎"),  # full-width colon
        ("lives in", "lives in Paris", "lives in Paris"),  # no colon: words of the value
        ("", "lives in: Paris", "lives in: Paris"),  # no key, nothing to repeat
        ("lives in", "  Paris ", "Paris"),
    ],
)
def test_strip_key_prefix(key: str, typed: str, stored: str) -> None:
    assert strip_key_prefix(key, typed) == stored


def test_edit_stores_a_value_typed_with_its_key_once(live: LiveFactory) -> None:
    server = live()
    client = server.client
    memory = server.service.memory
    assert memory is not None
    fact = memory.remember("Oslo", key="lives in")
    patched = client.patch(f"/v1/memory/{fact.id}", json={"value": "lives in: lives in: Paris"})
    assert patched.status_code == 200, patched.text
    assert (patched.json()["key"], patched.json()["value"]) == ("lives in", "Paris")
    stored = memory.store.get_facts([fact.id])[0]
    assert (stored.key, stored.value) == ("lives in", "Paris")

    rekeyed = client.patch(f"/v1/memory/{fact.id}", json={"key": " Works_In ", "value": "Rome"})
    assert (rekeyed.json()["key"], rekeyed.json()["value"]) == ("works in", "Rome")

    empty = client.patch(f"/v1/memory/{fact.id}", json={"value": "works in:"})
    assert empty.status_code == 400, empty.text
    assert "holds only the key 'works in'" in empty.json()["error"]["message"]
    assert memory.store.get_facts([fact.id])[0].value == "Rome"  # refused: nothing changed

    added = client.post("/v1/memory", json={"text": "likes: green tea", "key": "likes"})
    assert added.status_code == 201, added.text
    assert (added.json()["key"], added.json()["value"]) == ("likes", "green tea")
