"""`shiyi memory forget --query` reaches the echoes of what it forgets (issue 30): after a run
whose ``query_memory`` result and reply repeated "I live in Berlin", no file under the data
directory holds the word any more (graph, SQLite mirror and index, session log, run files)."""

from __future__ import annotations

from pathlib import Path

import kuzu

from tests.interfaces.cli.conftest import Cli
from tests.interfaces.cli.test_service_cli import home

NO_EMBEDDER = "memory:\n  embedder: none\n"


def files_saying(root: Path, word: bytes) -> list[str]:
    return sorted(
        str(path.relative_to(root))
        for path in root.rglob("*")
        if path.is_file() and word in path.read_bytes().lower()
    )


def graph_rows_saying(graph: Path, word: str) -> list[str]:
    """The live rows of the graph holding ``word`` in a text column (a failure names them; no
    live row means the bytes are a deleted row's that compaction left behind)."""
    db = kuzu.Database(str(graph), read_only=True)
    conn = kuzu.Connection(db)
    try:
        rows: list[str] = []
        for table in conn.execute("CALL show_tables() RETURN name, type").get_all():
            if table[1] != "NODE":
                continue
            columns = conn.execute(f"CALL table_info('{table[0]}') RETURN name, type").get_all()
            for column, kind in columns:
                if kind == "STRING":
                    found = conn.execute(
                        f"MATCH (n:{table[0]}) WHERE lower(n.{column}) CONTAINS $w RETURN n.*",
                        {"w": word},
                    ).get_all()
                    rows += [f"{table[0]}.{column}: {row}" for row in found]
        return rows
    finally:
        conn.close()
        db.close()


def run_turn(cli: Cli, message: str, *steps: dict[str, object]) -> None:
    cli.script(list(steps))
    cli.config((cli.workspace / "shiyi.yaml").read_text() + NO_EMBEDDER)
    ran = cli.run("run", message)
    assert ran.returncode == 0, ran.stderr


def test_forget_by_query_removes_the_sentence_from_its_echoes_on_disk(cli: Cli) -> None:
    run_turn(cli, "I live in Berlin", {"text": "Noted."})
    lookup = {"name": "query_memory", "arguments": {"query": "where do I live", "mode": "keyword"}}
    # Three runs: six echoes, more than the forget's 5 hits (which once took echoes as hits).
    for question in ("where do I live?", "which city do I live in?", "remind me where I live"):
        run_turn(
            cli,
            question,
            {"text": "Let me look.", "tool_calls": [lookup]},
            {"text": "You live in Berlin, as you told me."},
        )
    data = home(cli)
    echoed = files_saying(data, b"berlin")
    assert len([name for name in echoed if name.startswith("runs/")]) == 4, echoed

    forgot = cli.run("memory", "forget", "--query", "I live in Berlin", "--yes")
    assert forgot.returncode == 0, forgot.stderr
    left = files_saying(data, b"berlin")
    graph = data / "memory" / "graph.kuzu"
    assert left == [], (left, graph_rows_saying(graph, "berlin"), forgot.stdout, forgot.stderr)
    # The question and the memory tool's call (which never said it) are kept.
    kept = cli.run("memory", "search", "where do I live", "--mode", "keyword").stdout
    assert "where do I live?" in kept
