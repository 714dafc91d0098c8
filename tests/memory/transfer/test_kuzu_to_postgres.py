"""`shiyi memory migrate --to postgresql://...`: a lossless, re-runnable copy of the embedded
store into PostgreSQL (the real CLI in-process, a real server, the real embedder)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bench.synthetic import generate
from typer.testing import CliRunner

from shiyi.config import Settings, load_settings
from shiyi.interfaces.cli.app import app
from shiyi.memory.kuzu.store import EmbeddedStore
from shiyi.memory.models import EntityRecord, FactRecord, RelationRecord
from shiyi.memory.postgres.store import PostgresStore
from shiyi.memory.recall.config import Mode
from shiyi.memory.service import Memory
from shiyi.memory.transfer.importers import detect_and_load
from tests.memory.conftest import event_access

PROBES = [
    "Where does Caroline work?", "room number", "what pet", "2023", "flight to Tokyo",
    "hiking", "account password reset", "who is the sister?",
]  # fmt: skip
MODES: tuple[Mode, ...] = ("hybrid", "semantic", "keyword", "graph", "recent")


def settings_at(tmp_path: Path, store: str = "embedded") -> Settings:
    settings = load_settings(cwd=tmp_path, workspace=tmp_path)
    settings.memory.store = store
    return settings


@pytest.fixture
def embedded_home(tmp_path: Path) -> Settings:
    """An embedded store with every kind of record the copy must carry."""
    settings = settings_at(tmp_path)
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps(generate(conversations=1, sessions=3, turns=10, seed=5)))
    events = [e for c in detect_and_load(path) for e in c.events]
    memory = Memory.open(settings, start_worker=False)
    try:
        memory.import_events(events)
        old = memory.remember("I live in Lisbon", key="home_city", about=["Caroline"])
        new = memory.remember("I live in Porto", key="home_city", about=["Caroline"])
        assert memory.worker.drain(timeout=300)
        store = memory.store
        store.upsert_entities([EntityRecord("acme", "organization", "ACME", ["acme corp"])])
        store.add_relations([RelationRecord("caroline", "acme", "works_at", 0.8, 10.0)])
        todo = FactRecord(id="todo1", key="", value="renew passport", kind="todo", tier="short",
                          expires_at=5.0, steps=["a", "b"])  # fmt: skip
        store.upsert_facts([todo])
        memory.search("Lisbon", mode="keyword")  # access counts on facts
        memory.search("anything", mode="recent")  # and on events
        memory.retriever.flush()
        assert memory.store.superseded_by([old.id]) == {old.id: new.id}
        counts = memory.store.counts()
        assert counts["relations"] >= 1 and counts["embedded_facts"] >= 2
    finally:
        memory.close()
    return settings


def migrate_cli(url: str) -> str:
    result = CliRunner().invoke(app, ["memory", "migrate", "--to", url, "--batch", "7"])
    assert result.exit_code == 0, result.output
    return result.output


def search_all(settings: Settings) -> dict[tuple[str, str], list[str]]:
    memory = Memory.open(settings, start_worker=False)
    try:
        return {
            (mode, q): [h.id for h in memory.retriever.search(q, mode=mode, limit=10, touch=False)]
            for mode in MODES
            for q in PROBES
        }
    finally:
        memory.close()


def test_round_trip_is_lossless_and_rerunnable(
    embedded_home: Settings, postgres_url: str, tmp_path: Path
) -> None:
    output = migrate_cli(postgres_url)
    assert "events" in output and "done in" in output
    assert f"store: {postgres_url}" in output

    source = EmbeddedStore(embedded_home.memory_dir, check_model=False)
    target = PostgresStore(postgres_url)
    try:
        counts = source.counts()
        assert {k: v for k, v in target.counts().items() if k in counts} == counts
        events = source.recent_events(10_000)
        assert target.get_events([e.id for e in events]) == source.get_events(
            [e.id for e in events]
        )
        fact_ids = source.fact_ids(10_000)
        assert target.get_facts(fact_ids) == source.get_facts(fact_ids)  # every field, edges
        assert sorted(target.fact_ids(10_000)) == sorted(fact_ids)
        names = [n for n in ("caroline", "acme", "acme corp") if source.find_entities([n])]
        assert target.find_entities(names) == source.find_entities(names)
        assert target.superseded_by(fact_ids) == source.superseded_by(fact_ids)
        touched = [e.id for e in events if event_access(source, e.id)[0]]
        assert touched  # the search above counted some accesses
        assert [event_access(target, i) for i in touched] == [
            event_access(source, i) for i in touched
        ]
        assert target.neighbourhood(["caroline"], 2, 20) == source.neighbourhood(
            ["caroline"], 2, 20
        )
    finally:
        source.close()
        target.close()

    # The same store, searched through each backend, finds the same memories.
    embedded_results = search_all(embedded_home)
    postgres_results = search_all(settings_at(tmp_path, postgres_url))
    assert sum(map(len, embedded_results.values())) > 100
    assert postgres_results == embedded_results

    # Again: nothing is duplicated, the counts stay.
    migrate_cli(postgres_url)
    target = PostgresStore(postgres_url)
    try:
        assert {k: v for k, v in target.counts().items() if k in counts} == counts
        assert target.counts()["keyword_docs"] == counts["events"] + counts["facts"]
    finally:
        target.close()


def test_bad_targets_get_clear_messages(embedded_home: Settings) -> None:
    runner = CliRunner()
    bad_scheme = runner.invoke(app, ["memory", "migrate", "--to", "mysql://x@localhost/db"])
    assert bad_scheme.exit_code == 2
    assert "postgresql:// URL" in bad_scheme.output
    closed_port = runner.invoke(
        app, ["memory", "migrate", "--to", "postgresql://postgres@127.0.0.1:9/shiyi"]
    )
    assert closed_port.exit_code == 2
    assert "cannot connect to the memory database postgresql://127.0.0.1:9/shiyi" in (
        closed_port.output
    )
    assert "Traceback" not in closed_port.output


def test_nothing_to_copy(tmp_path: Path, postgres_url: str) -> None:
    result = CliRunner().invoke(app, ["memory", "migrate", "--to", postgres_url])
    assert result.exit_code == 2
    assert "there is no embedded memory store" in result.output
