from __future__ import annotations

import os
from pathlib import Path

import pytest

from shiyi.context.tool_memory import ToolMemory, relevance_of


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "a.txt").write_text("alpha\n")
    (ws / "src" / "m.py").write_text("def f():\n    pass\n")
    return ws


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def bump(path: Path, content: str) -> None:
    """Rewrite and move the mtime a whole second on, whatever the filesystem's granularity."""
    info = path.stat()
    path.write_text(content)
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns + 1_000_000_000))


def test_identical_read_is_a_hit_whatever_the_spelling(root: Path) -> None:
    clock = Clock()
    memory = ToolMemory(20, 0.3, clock=clock)
    args = {"path": "./a.txt", "start_line": 1, "end_line": None}
    memory.store("read_file", args, True, "    1| alpha", root)
    clock.now += 5

    hit = memory.lookup("read_file", {"start_line": 1, "path": " a.txt "}, True, root)
    also = memory.lookup("read_file", {"path": str(root / "a.txt"), "start_line": 1}, True, root)

    assert hit is not None and also is not None
    assert hit.content == "    1| alpha" and hit.name == "read_file"
    assert hit.arguments == {"path": "a.txt", "start_line": 1}
    assert (hit.age, hit.hits, also.hits) == (5.0, 1, 2)
    assert memory.lookup("read_file", {"path": "a.txt"}, True, root) is None  # other range


def test_a_changed_file_is_a_miss(root: Path) -> None:
    memory = ToolMemory(20, 0.3)
    memory.store("read_file", {"path": "a.txt"}, True, "    1| alpha", root)
    bump(root / "a.txt", "beta\n")
    assert memory.lookup("read_file", {"path": "a.txt"}, True, root) is None
    assert memory.already_fetched() == []


def test_side_effecting_tools_are_never_cached(root: Path) -> None:
    memory = ToolMemory(20, 0.3)
    memory.store("bash", {"command": "ls"}, False, "a.txt", root)
    assert memory.lookup("bash", {"command": "ls"}, False, root) is None
    assert memory.lookup("bash", {"command": "ls"}, True, root) is None
    assert memory.already_fetched() == []


def test_failures_are_not_cached(root: Path) -> None:
    memory = ToolMemory(20, 0.3)
    memory.store("read_file", {"path": "nope.txt"}, True, "Error: no", root, ok=False)
    assert memory.lookup("read_file", {"path": "nope.txt"}, True, root) is None


def test_bash_invalidates_everything_file_based(root: Path) -> None:
    memory = ToolMemory(20, 0.3)
    memory.store("read_file", {"path": "a.txt"}, True, "alpha", root)
    memory.store("list_dir", {}, True, "a.txt\nsrc/", root)
    memory.store("query_memory", {"query": "alpha"}, True, "alpha is a letter", root)

    memory.store("bash", {"command": "sed -i s/a/b/ a.txt"}, False, "", root)

    assert memory.lookup("read_file", {"path": "a.txt"}, True, root) is None
    assert memory.lookup("list_dir", {"path": "."}, True, root) is None
    assert memory.lookup("query_memory", {"query": "alpha"}, True, root) is not None


def test_write_invalidates_only_what_it_touched(root: Path) -> None:
    memory = ToolMemory(20, 0.3)
    memory.store("read_file", {"path": "a.txt"}, True, "alpha", root)
    memory.store("read_file", {"path": "src/m.py"}, True, "def f()", root)
    memory.store("grep", {"pattern": "def", "path": "src"}, True, "src/m.py:1: def f():", root)

    # Same mtime tick, same size: only the explicit invalidation can notice this write.
    memory.invalidate("edit_file", {"path": "./src/m.py"}, root)

    assert memory.lookup("read_file", {"path": "a.txt"}, True, root) is not None
    assert memory.lookup("read_file", {"path": "src/m.py"}, True, root) is None
    assert memory.lookup("grep", {"pattern": "def", "path": "src"}, True, root) is None


def test_unknown_side_effects_invalidate_everything(root: Path) -> None:
    memory = ToolMemory(20, 0.3)
    memory.store("query_memory", {"query": "alpha"}, True, "alpha", root)
    memory.store("remember", {"text": "alpha is first"}, False, "ok", root)
    assert memory.lookup("query_memory", {"query": "alpha"}, True, root) is None


def test_grep_misses_when_a_file_under_the_dir_changes(root: Path) -> None:
    memory = ToolMemory(20, 0.3)
    args = {"pattern": " pass", "path": "src"}
    memory.store("grep", args, True, "src/m.py:2:     pass", root)
    assert memory.lookup("grep", args, True, root) is not None
    # The pattern keeps its whitespace: " pass" and "pass" are different searches.
    assert memory.lookup("grep", {"pattern": "pass", "path": "src"}, True, root) is None

    bump(root / "src" / "m.py", "def f():\n    return 1\n")
    assert memory.lookup("grep", args, True, root) is None


def test_grep_misses_when_a_file_is_added(root: Path) -> None:
    memory = ToolMemory(20, 0.3)
    memory.store("grep", {"pattern": "x"}, True, "no matches", root)
    (root / "src" / "new.py").write_text("x = 1\n")
    assert memory.lookup("grep", {"pattern": "x", "path": "."}, True, root) is None


def test_already_fetched_lines_and_hint(root: Path) -> None:
    memory = ToolMemory(20, 0.3)
    assert memory.render_hint() == ""
    memory.store("read_file", {"path": "./src/m.py"}, True, "def f()", root)
    memory.store("list_dir", {"path": "src", "depth": 2}, True, "src/m.py", root)

    assert memory.already_fetched() == [
        "read_file path=src/m.py (cached; call again only if you need it refreshed)",
        "list_dir depth=2 path=src (cached; call again only if you need it refreshed)",
    ]
    hint = memory.render_hint()
    assert hint.startswith("## Already fetched\n")
    assert "- read_file path=src/m.py (cached" in hint


def test_relevance_capacity_evicts_the_least_relevant() -> None:
    memory = ToolMemory(2, 0.3)
    assert memory.keep("web_search", {"query": "a"}, "A", relevance=0.5)
    assert memory.keep("web_search", {"query": "b"}, "B", relevance=0.9)
    assert not memory.keep("web_search", {"query": "c"}, "C", relevance=0.2)  # below minimum
    assert memory.keep("web_search", {"query": "d"}, "D", relevance=0.7)
    assert not memory.keep("web_search", {"query": "e"}, "E", relevance=0.6)  # weakest of three

    kept = [(r.content, r.relevance) for r in memory.relevant_results()]
    assert kept == [("B", 0.9), ("D", 0.7)]


def test_search_results_are_kept_by_heuristic_relevance(root: Path) -> None:
    memory = ToolMemory(5, 0.3)
    memory.store("query_memory", {"query": "kuzu graph"}, True, "kuzu stores the graph", root)
    memory.store("query_memory", {"query": "tea preference"}, True, "nothing found", root)
    assert [r.arguments["query"] for r in memory.relevant_results()] == ["kuzu graph"]


def test_relevance_heuristic() -> None:
    assert relevance_of({"query": "Kuzu graph"}, "the kuzu graph") == 1.0
    assert relevance_of({"query": "kuzu graph"}, "kuzu only") == 0.5
    assert relevance_of({"query": "配置"}, "读取配置文件") == 1.0
    assert relevance_of({}, "anything") == 0.0
    # Long results match by chance and cost context: 8000 characters halve the score.
    assert relevance_of({"query": "kuzu"}, "kuzu" + "x" * 7996) == pytest.approx(0.5)
