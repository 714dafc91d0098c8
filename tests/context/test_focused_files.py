from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from shiyi.config.settings import ToolSettings
from shiyi.context.focused_files import FocusedFiles
from shiyi.llm.types import ToolCall
from shiyi.tools.base import ToolContext
from shiyi.tools.builtins.files import edit_file, read_file, write_file
from shiyi.tools.registry import ToolOutcome, ToolRegistry


class Session:
    """Runs the real file tools and feeds every outcome to a FocusedFiles, like the agent."""

    def __init__(self, workspace: Path, max_chars: int = 10_000) -> None:
        self.root = workspace
        self.focused = FocusedFiles(max_chars)
        self.registry = ToolRegistry([read_file, write_file, edit_file])
        self.ctx = ToolContext.for_dir(workspace, ToolSettings(large_file_lines=50))
        self.count = 0

    async def call(self, name: str, **arguments: Any) -> tuple[ToolOutcome, str | None]:
        self.count += 1
        call = ToolCall(f"c{self.count}", name, json.dumps(arguments))
        outcome = await self.registry.execute(call, self.ctx)
        reference = self.focused.observe(
            name, outcome.arguments, outcome.content, outcome.ok, self.root, call_id=call.id
        )
        return outcome, reference


def lines(count: int, word: str = "line") -> str:
    return "".join(f"{word} {i}\n" for i in range(1, count + 1))


async def test_a_file_read_twice_costs_its_text_once(workspace: Path) -> None:
    (workspace / "app.py").write_text("def main():\n    return 42\n")
    session = Session(workspace)

    first, ref1 = await session.call("read_file", path="app.py")
    _, ref2 = await session.call("read_file", path="./app.py")

    assert first.ok and "    2|     return 42" in first.content
    assert ref1 == "[read_file: app.py — 2 lines, full text in the focused files block]"
    assert ref2 == ref1 and "\n" not in ref1
    block = session.focused.render()
    assert block.startswith("## Focused files")
    assert block.count("return 42") == 1
    assert "### app.py (2 lines)\n```\n    1| def main():\n    2|     return 42\n```" in block
    assert session.focused.paths == ["app.py"]
    assert session.focused.history_content("c1") == ref1
    assert session.focused.history_content("c2") == ref2
    assert session.focused.history_content("unknown") is None


async def test_edits_update_the_block(workspace: Path) -> None:
    (workspace / "app.py").write_text("x = 1\n")
    session = Session(workspace)
    await session.call("read_file", path="app.py")

    outcome, ref = await session.call("edit_file", path="app.py", old_text="1", new_text="2")

    assert outcome.ok
    assert ref == "[edit_file: app.py updated; current text in the focused files block]"
    block = session.focused.render()
    assert "### app.py (1 line, edited)" in block
    assert "x = 2" in block and "x = 1" not in block


async def test_write_file_focuses_a_new_file(workspace: Path) -> None:
    session = Session(workspace)
    _, ref = await session.call("write_file", path="pkg/new.py", content="a\nb\n")
    assert ref == "[write_file: pkg/new.py updated; current text in the focused files block]"
    assert "### pkg/new.py (2 lines, edited)" in session.focused.render()


async def test_cap_evicts_the_oldest_unedited_file(workspace: Path) -> None:
    for name in ("a.txt", "b.txt", "c.txt", "d.txt"):
        (workspace / name).write_text(lines(10, name))
    session = Session(workspace, max_chars=500)
    await session.call("read_file", path="a.txt")
    await session.call("edit_file", path="a.txt", old_text="a.txt 1\n", new_text="A 1\n")
    await session.call("read_file", path="b.txt")
    await session.call("read_file", path="c.txt")
    size = session.focused.total_chars

    await session.call("read_file", path="d.txt")

    # a.txt is the oldest, but it was edited: the oldest *unedited* file goes first.
    assert session.focused.paths == ["a.txt", "c.txt", "d.txt"]
    assert session.focused.total_chars <= 500 < size + 150
    # References to an evicted file fall back to the original tool result.
    assert session.focused.history_content("c3") is None
    assert session.focused.history_content("c4") is not None


async def test_edited_files_go_when_nothing_else_is_left(workspace: Path) -> None:
    (workspace / "a.txt").write_text(lines(10, "a"))
    (workspace / "b.txt").write_text(lines(10, "b"))
    session = Session(workspace, max_chars=200)
    await session.call("write_file", path="a.txt", content=lines(10, "A"))
    await session.call("read_file", path="b.txt")
    assert session.focused.paths == ["b.txt"]


async def test_a_file_bigger_than_the_cap_is_not_focused(workspace: Path) -> None:
    (workspace / "big.txt").write_text(lines(40))
    session = Session(workspace, max_chars=100)
    outcome, ref = await session.call("read_file", path="big.txt")
    assert outcome.ok and ref is None
    assert session.focused.paths == [] and session.focused.render() == ""


async def test_ranged_reads_and_previews_stay_in_history(workspace: Path) -> None:
    (workspace / "long.txt").write_text(lines(60))
    (workspace / "short.txt").write_text(lines(5))
    session = Session(workspace)

    preview, ref = await session.call("read_file", path="long.txt")
    assert "this is a preview" in preview.content and ref is None
    _, ref = await session.call("read_file", path="short.txt", start_line=2, end_line=3)
    assert ref is None and session.focused.paths == []


async def test_a_range_of_a_focused_file_is_a_reference(workspace: Path) -> None:
    (workspace / "short.txt").write_text(lines(5))
    session = Session(workspace)
    await session.call("read_file", path="short.txt")
    _, ref = await session.call("read_file", path="short.txt", start_line=2, end_line=3)
    assert ref == "[read_file: short.txt lines 2-3 — these lines are in the focused files block]"


async def test_failures_and_other_tools_are_ignored(workspace: Path) -> None:
    session = Session(workspace)
    outcome, ref = await session.call("read_file", path="missing.txt")
    assert not outcome.ok and ref is None
    assert session.focused.observe("grep", {"path": "."}, "x:1: y", True, workspace) is None


async def test_refresh_after_an_external_change(workspace: Path) -> None:
    (workspace / "a.txt").write_text("old\n")
    (workspace / "b.txt").write_text("gone soon\n")
    session = Session(workspace)
    await session.call("read_file", path="a.txt")
    await session.call("read_file", path="b.txt")

    (workspace / "a.txt").write_text("new text\n")
    info = (workspace / "a.txt").stat()
    os.utime(workspace / "a.txt", ns=(info.st_atime_ns, info.st_mtime_ns + 1_000_000_000))
    (workspace / "b.txt").unlink()

    assert session.focused.refresh(workspace) == ["a.txt", "b.txt"]
    block = session.focused.render()
    assert "new text" in block and "old" not in block
    assert session.focused.paths == ["a.txt"]
    assert session.focused.refresh(workspace) == []


async def test_backticks_in_a_file_do_not_close_the_fence(workspace: Path) -> None:
    (workspace / "doc.md").write_text("```py\nx\n```\n")
    session = Session(workspace)
    await session.call("read_file", path="doc.md")
    assert "\n````\n    1| ```py" in session.focused.render()
