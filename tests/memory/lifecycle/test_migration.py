"""A store written before the lifecycle columns (and statement times) existed opens and
keeps its facts."""

from __future__ import annotations

from pathlib import Path

import kuzu

from shiyi.memory.kuzu import schema
from shiyi.memory.kuzu.connection import KuzuGraph
from shiyi.memory.models import said_time


def test_version_1_store_migrates_to_the_lifecycle_schema(tmp_path: Path) -> None:
    path = tmp_path / "graph.kuzu"
    db = kuzu.Database(str(path))
    conn = kuzu.Connection(db)
    schema.MIGRATIONS[0](conn, 384)
    schema.write_meta(conn, schema.META_VERSION, "1")
    schema.write_meta(conn, schema.META_MODEL, "all-MiniLM-L6-v2")
    schema.write_meta(conn, schema.META_DIMENSION, "384")
    conn.execute(
        "CREATE (:Fact {id: 'fact_old', key: 'city', value: 'Oslo', kind: 'semantic',"
        " scope: 'user', confidence: 0.9, status: 'active', tier: 'long', created_at: 1.0,"
        " updated_at: 1.0, access_count: 2, user_id: 'default', agent_id: 'shiyi'})"
    )
    conn.close()
    db.close()

    graph = KuzuGraph(path)
    try:
        assert graph.get_meta(schema.META_VERSION) == str(schema.LATEST_VERSION)
        [old] = graph.get_facts(["fact_old"])
        assert (old.value, old.access_count, old.workspace_id) == ("Oslo", 2, "default")
        assert (old.steps, old.evidence_count, old.source, old.conflicts_with) == (
            [],
            1,
            "explicit",
            "",
        )
        assert (old.said_at, old.said_in) == (None, [])  # unknown: dated by created_at
        assert said_time(old) == 1.0
    finally:
        graph.close()
