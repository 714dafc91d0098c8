"""The graph file's header page keeps no stale memory (Kuzu 0.11.3 writes the 4,068 bytes
after its 28-byte header from a buffer it does not clear): real Kuzu files, real processes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import kuzu
import pytest

from shiyi.memory.kuzu.connection import CHECKPOINT_AFTER_WRITES, KuzuGraph
from shiyi.memory.kuzu.header import HEADER_BYTES, PAGE_BYTES, clear_header_slack
from shiyi.memory.models import EventRecord

STALE = b"I live in Berlin (freed memory)"


def plant(path: Path, where: int = 1205) -> None:
    """What Kuzu left in the slack once: a forgotten sentence from the process's heap."""
    with path.open("r+b") as file:
        file.seek(where)
        file.write(STALE)


def slack(path: Path) -> bytes:
    return path.read_bytes()[HEADER_BYTES:PAGE_BYTES]


def event(i: int, text: str) -> EventRecord:
    return EventRecord(
        id=f"e{i}", session_id="s", run_id="r", ts=float(i), role="user",
        content=text, segment_type="user_message", iteration=i,
    )  # fmt: skip


def count_rows(path: Path) -> int:
    db = kuzu.Database(str(path))
    conn = kuzu.Connection(db)
    try:
        return int(conn.execute("MATCH (t:T) RETURN count(*)").get_all()[0][0])
    finally:
        conn.close()
        db.close()


def test_the_slack_is_zeroed_and_the_database_reads_as_before(tmp_path: Path) -> None:
    path = tmp_path / "graph.kuzu"
    db = kuzu.Database(str(path))
    conn = kuzu.Connection(db)
    conn.execute("CREATE NODE TABLE T(id STRING PRIMARY KEY)")
    conn.execute("UNWIND range(1, 50) AS i CREATE (:T {id: string(i)})")
    conn.close()
    db.close()
    header = path.read_bytes()[:HEADER_BYTES]
    plant(path)

    assert clear_header_slack(path)
    assert slack(path) == bytes(PAGE_BYTES - HEADER_BYTES)
    assert path.read_bytes()[:HEADER_BYTES] == header
    assert not clear_header_slack(path)  # nothing left to clear: the file is not written
    assert count_rows(path) == 50


def test_a_write_ahead_log_left_by_a_killed_process_still_replays(tmp_path: Path) -> None:
    """The header holds no id the log is checked against in this Kuzu: zeroing the slack
    of a file whose process died before its checkpoint loses nothing."""
    path = tmp_path / "graph.kuzu"
    writer = (
        "import kuzu, os\n"
        f"db = kuzu.Database({str(path)!r}); conn = kuzu.Connection(db)\n"
        "conn.execute('CREATE NODE TABLE T(id STRING PRIMARY KEY)')\n"
        "conn.execute('CHECKPOINT')\n"
        "conn.execute('UNWIND range(1, 100) AS i CREATE (:T {id: string(i)})')\n"
        "os._exit(0)\n"  # no close, no checkpoint: the rows are only in the log
    )
    subprocess.run([sys.executable, "-c", writer], check=True, timeout=120)
    assert path.with_name("graph.kuzu.wal").stat().st_size > 0
    plant(path)

    assert clear_header_slack(path)
    assert count_rows(path) == 100


def test_a_file_of_another_layout_is_left_alone(tmp_path: Path) -> None:
    other = tmp_path / "graph.kuzu"
    page = bytearray(b"KUZU" + (38).to_bytes(8, "little") + bytes(PAGE_BYTES - 12))
    page[1205 : 1205 + len(STALE)] = STALE
    other.write_bytes(bytes(page))
    assert not clear_header_slack(other)
    assert other.read_bytes() == bytes(page)
    assert not clear_header_slack(tmp_path / "missing.kuzu")


def test_a_file_that_cannot_be_written_is_reported_not_raised(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = tmp_path / "graph.kuzu"
    folder.mkdir()  # opening a directory for writing fails as a read-only file would
    assert not clear_header_slack(folder)
    assert "could not clear the unused header bytes" in caplog.text


@pytest.mark.parametrize("how", ["close", "commit", "checkpoint"])
def test_the_graph_clears_the_slack_when_kuzu_may_have_written_it(tmp_path: Path, how: str) -> None:
    path = tmp_path / "graph.kuzu"
    graph = KuzuGraph(path, dimension=8, embedding_model="test-model")
    try:
        graph.add_events([event(1, "I live in Berlin"), event(2, "We cook pasta")])
        plant(path)
        if how != "close":
            if how == "checkpoint":  # the next commit is the one that checkpoints
                graph._writes = CHECKPOINT_AFTER_WRITES - 1
            graph.add_events([event(3, "a later turn")])
            assert STALE not in path.read_bytes()
    finally:
        graph.close()
    assert STALE not in path.read_bytes()
    assert slack(path) == bytes(PAGE_BYTES - HEADER_BYTES)
    reopened = KuzuGraph(path, dimension=8, embedding_model="test-model")
    try:
        assert [e.content for e in reopened.get_events(["e1"])] == ["I live in Berlin"]
    finally:
        reopened.close()
