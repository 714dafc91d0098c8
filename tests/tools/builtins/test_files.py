from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from shiyi.config.settings import ToolSettings
from shiyi.errors import ToolError, WorkspaceViolation
from shiyi.tools.base import FunctionTool, ToolContext
from shiyi.tools.builtins.files import edit_file, list_dir, read_file, write_file


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    out = tmp_path / "outside"
    out.mkdir()
    (out / "secret.txt").write_text("top secret\n")
    return out


@pytest.fixture
def ctx(workspace: Path) -> ToolContext:
    return ToolContext.for_dir(workspace, ToolSettings(large_file_lines=50))


async def run(item: FunctionTool, ctx: ToolContext, **arguments: Any) -> str:
    return await item.invoke(item.validate(arguments), ctx)


# --- read_file --------------------------------------------------------------------------


async def test_read_numbers_lines(workspace: Path, ctx: ToolContext) -> None:
    (workspace / "a.txt").write_text("alpha\nbeta\ngamma\n")
    out = await run(read_file, ctx, path="a.txt")
    assert out.splitlines() == ["    1| alpha", "    2| beta", "    3| gamma"]


async def test_read_range_is_inclusive_and_says_how_to_continue(
    workspace: Path, ctx: ToolContext
) -> None:
    (workspace / "a.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    out = await run(read_file, ctx, path="a.txt", start_line=3, end_line=5)
    lines = out.splitlines()
    assert lines[:3] == ["    3| line 3", "    4| line 4", "    5| line 5"]
    assert "lines 3-5 of 10" in lines[3]
    assert "start_line=6" in lines[3]


async def test_read_range_past_end_is_clipped(workspace: Path, ctx: ToolContext) -> None:
    (workspace / "a.txt").write_text("one\ntwo\n")
    out = await run(read_file, ctx, path="a.txt", start_line=2, end_line=99)
    assert out.splitlines()[0] == "    2| two"
    assert "lines 2-2 of 2" in out


async def test_read_large_file_returns_preview_with_hint(workspace: Path) -> None:
    ctx = ToolContext.for_dir(workspace, ToolSettings(large_file_lines=200))
    (workspace / "big.txt").write_text("".join(f"row {i}\n" for i in range(1, 501)))
    out = await run(read_file, ctx, path="big.txt")
    assert "  100| row 100" in out
    assert "row 101" not in out
    assert "file has 500 lines" in out
    assert "read_file(path='big.txt', start_line=X, end_line=Y)" in out


async def test_read_preview_never_exceeds_the_large_file_limit(
    workspace: Path, ctx: ToolContext
) -> None:
    (workspace / "big.txt").write_text("".join(f"row {i}\n" for i in range(1, 501)))
    out = await run(read_file, ctx, path="big.txt")
    assert "   50| row 50" in out
    assert "row 51\n" not in out


async def test_read_long_range_is_limited_and_says_how_to_continue(
    workspace: Path, ctx: ToolContext
) -> None:
    (workspace / "big.txt").write_text("".join(f"row {i}\n" for i in range(1, 501)))
    out = await run(read_file, ctx, path="big.txt", start_line=10, end_line=400)
    assert "   59| row 59" in out
    assert "row 60" not in out
    assert "lines 10-59 of 500" in out
    assert "start_line=60" in out


async def test_read_large_file_with_range_works(workspace: Path, ctx: ToolContext) -> None:
    (workspace / "big.txt").write_text("".join(f"row {i}\n" for i in range(1, 501)))
    out = await run(read_file, ctx, path="big.txt", start_line=400, end_line=402)
    assert out.splitlines()[:3] == ["  400| row 400", "  401| row 401", "  402| row 402"]


async def test_read_empty_file(workspace: Path, ctx: ToolContext) -> None:
    (workspace / "empty.txt").write_text("")
    assert "empty" in await run(read_file, ctx, path="empty.txt")


async def test_read_keeps_crlf_out_of_the_text(workspace: Path, ctx: ToolContext) -> None:
    (workspace / "dos.txt").write_bytes(b"a\r\nb\r\n")
    assert await run(read_file, ctx, path="dos.txt") == "    1| a\n    2| b"


async def test_read_missing_file_suggests_list_dir_and_similar_names(
    workspace: Path, ctx: ToolContext
) -> None:
    (workspace / "config.yaml").write_text("x: 1\n")
    with pytest.raises(ToolError, match="does not exist") as info:
        await run(read_file, ctx, path="config.yml")
    assert "list_dir" in str(info.value)
    assert "config.yaml" in str(info.value)


async def test_read_directory_points_to_list_dir(workspace: Path, ctx: ToolContext) -> None:
    (workspace / "src").mkdir()
    with pytest.raises(ToolError, match=r"is a directory.*list_dir"):
        await run(read_file, ctx, path="src")


async def test_read_refuses_binary(workspace: Path, ctx: ToolContext) -> None:
    (workspace / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    with pytest.raises(ToolError, match="binary"):
        await run(read_file, ctx, path="img.png")


@pytest.mark.parametrize(
    ("start", "end", "message"),
    [
        (0, None, "start_line must be 1 or more"),
        (None, 0, "end_line must be 1 or more"),
        (5, 2, r"end_line \(2\) is before start_line \(5\)"),
        (9, 12, "past the end"),
    ],
)
async def test_read_bad_ranges(
    workspace: Path, ctx: ToolContext, start: int | None, end: int | None, message: str
) -> None:
    (workspace / "a.txt").write_text("one\ntwo\n")
    with pytest.raises(ToolError, match=message):
        await run(read_file, ctx, path="a.txt", start_line=start, end_line=end)


async def test_line_numbers_count_only_newlines(workspace: Path, ctx: ToolContext) -> None:
    # Form feeds and lone carriage returns must not shift numbers between read and edit.
    (workspace / "odd.txt").write_text("a\x0cb\rc\nsecond\nsecond\n", newline="")
    out = await run(read_file, ctx, path="odd.txt")
    assert out.splitlines()[-2:] == ["    2| second", "    3| second"]
    with pytest.raises(ToolError, match=r"lines 2, 3"):
        await run(edit_file, ctx, path="odd.txt", old_text="second", new_text="x")


async def test_read_clips_very_long_lines(workspace: Path, ctx: ToolContext) -> None:
    (workspace / "min.js").write_text("x" * 10_000 + "\n")
    out = await run(read_file, ctx, path="min.js")
    assert len(out) < 2_200
    assert "more characters on this line" in out


# --- write_file -------------------------------------------------------------------------


async def test_write_creates_parents_and_reports(workspace: Path, ctx: ToolContext) -> None:
    out = await run(write_file, ctx, path="deep/er/new.txt", content="a\nb\nc")
    assert (workspace / "deep/er/new.txt").read_text() == "a\nb\nc"
    assert out == "created deep/er/new.txt: 5 bytes, 3 lines."


async def test_write_overwrites(workspace: Path, ctx: ToolContext) -> None:
    (workspace / "f.txt").write_text("old")
    out = await run(write_file, ctx, path="f.txt", content="new\n")
    assert (workspace / "f.txt").read_text() == "new\n"
    assert out == "overwrote f.txt: 4 bytes, 1 line."


async def test_write_to_directory_is_refused(workspace: Path, ctx: ToolContext) -> None:
    (workspace / "d").mkdir()
    with pytest.raises(ToolError, match="is a directory"):
        await run(write_file, ctx, path="d", content="x")


# --- edit_file --------------------------------------------------------------------------


async def test_edit_replaces_unique_text(workspace: Path, ctx: ToolContext) -> None:
    (workspace / "m.py").write_text("def f():\n    return 1\n")
    out = await run(edit_file, ctx, path="m.py", old_text="return 1", new_text="return 2")
    assert (workspace / "m.py").read_text() == "def f():\n    return 2\n"
    assert out == "edited m.py: replaced 1 occurrence at line 2."


async def test_edit_ambiguous_lists_lines(workspace: Path, ctx: ToolContext) -> None:
    (workspace / "m.py").write_text("x = 1\ny = 2\nx = 1\n")
    with pytest.raises(ToolError) as info:
        await run(edit_file, ctx, path="m.py", old_text="x = 1", new_text="x = 3")
    message = str(info.value)
    assert "old_text occurs 2 times" in message
    assert "lines 1, 3" in message
    assert "replace_all" in message
    assert (workspace / "m.py").read_text() == "x = 1\ny = 2\nx = 1\n"


async def test_edit_replace_all(workspace: Path, ctx: ToolContext) -> None:
    (workspace / "m.py").write_text("x = 1\ny = 2\nx = 1\n")
    out = await run(
        edit_file, ctx, path="m.py", old_text="x = 1", new_text="x = 3", replace_all=True
    )
    assert (workspace / "m.py").read_text() == "x = 3\ny = 2\nx = 3\n"
    assert "2 occurrences (lines 1, 3)" in out


async def test_edit_missing_text_shows_closest_line(workspace: Path, ctx: ToolContext) -> None:
    (workspace / "m.py").write_text(
        "import os\n\ndef compute_total(items):\n    return sum(items)\n"
    )
    with pytest.raises(ToolError) as info:
        await run(
            edit_file,
            ctx,
            path="m.py",
            old_text="def compute_totals(items):\n    return sum(items)",
            new_text="pass",
        )
    message = str(info.value)
    assert "not found" in message
    assert "    3| def compute_total(items):" in message
    assert "read_file" in message


async def test_edit_missing_text_with_nothing_similar(workspace: Path, ctx: ToolContext) -> None:
    (workspace / "m.py").write_text("alpha\n")
    with pytest.raises(ToolError, match="no similar lines"):
        await run(edit_file, ctx, path="m.py", old_text="zzzzqqqq", new_text="x")


async def test_edit_indentation_mismatch_is_explained(workspace: Path, ctx: ToolContext) -> None:
    (workspace / "m.py").write_text("if x:\n    y()\n")
    with pytest.raises(ToolError, match="indentation"):
        await run(edit_file, ctx, path="m.py", old_text="if x:\n  y()", new_text="z")


async def test_edit_keeps_crlf_files_crlf(workspace: Path, ctx: ToolContext) -> None:
    (workspace / "dos.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    await run(edit_file, ctx, path="dos.txt", old_text="one\ntwo", new_text="1\n2")
    assert (workspace / "dos.txt").read_bytes() == b"1\r\n2\r\nthree\r\n"


async def test_edit_preserves_undecodable_bytes(workspace: Path, ctx: ToolContext) -> None:
    (workspace / "latin.txt").write_bytes(b"caf\xe9\nname = old\n")
    await run(edit_file, ctx, path="latin.txt", old_text="old", new_text="new")
    assert (workspace / "latin.txt").read_bytes() == b"caf\xe9\nname = new\n"


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [("", "x", "old_text is empty"), ("same", "same", "identical")],
)
async def test_edit_rejects_pointless_edits(
    workspace: Path, ctx: ToolContext, old: str, new: str, message: str
) -> None:
    (workspace / "f.txt").write_text("same\n")
    with pytest.raises(ToolError, match=message):
        await run(edit_file, ctx, path="f.txt", old_text=old, new_text=new)


async def test_edit_missing_file_suggests_write_file(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match="write_file"):
        await run(edit_file, ctx, path="nope.py", old_text="a", new_text="b")


# --- list_dir ---------------------------------------------------------------------------


async def test_list_dir_marks_dirs_sizes_and_hides_git(workspace: Path, ctx: ToolContext) -> None:
    (workspace / ".git").mkdir()
    (workspace / ".git" / "HEAD").write_text("ref")
    (workspace / "src").mkdir()
    (workspace / "src" / "mod.py").write_text("x" * 2048)
    (workspace / "README.md").write_text("hi")
    out = await run(list_dir, ctx)
    assert out.splitlines() == ["./", "src/", "README.md  2 B"]
    deep = await run(list_dir, ctx, depth=2)
    assert "src/mod.py  2.0 KB" in deep.splitlines()
    assert ".git" not in deep


async def test_list_dir_subdirectory_uses_workspace_paths(
    workspace: Path, ctx: ToolContext
) -> None:
    (workspace / "a" / "b").mkdir(parents=True)
    (workspace / "a" / "b" / "c.txt").write_text("c")
    out = await run(list_dir, ctx, path="a", depth=3)
    assert out.splitlines() == ["a/", "a/b/", "a/b/c.txt  1 B"]


async def test_list_dir_caps_entries(workspace: Path, ctx: ToolContext) -> None:
    for i in range(600):
        (workspace / f"f{i:03}.txt").write_text("")
    out = await run(list_dir, ctx)
    assert "stopped after 500 entries" in out
    assert len(out.splitlines()) == 502


async def test_list_dir_errors(workspace: Path, ctx: ToolContext) -> None:
    (workspace / "f.txt").write_text("x")
    with pytest.raises(ToolError, match="is a file"):
        await run(list_dir, ctx, path="f.txt")
    with pytest.raises(ToolError, match="does not exist"):
        await run(list_dir, ctx, path="missing")
    with pytest.raises(ToolError, match="depth must be between"):
        await run(list_dir, ctx, depth=0)


async def test_list_dir_does_not_enter_symlinked_dirs(
    workspace: Path, outside: Path, ctx: ToolContext
) -> None:
    (workspace / "link").symlink_to(outside, target_is_directory=True)
    out = await run(list_dir, ctx, depth=3)
    assert "link/ -> (symlink)" in out
    assert "secret" not in out


# --- the workspace boundary -------------------------------------------------------------


def escaping_calls(outside: Path) -> list[tuple[FunctionTool, dict[str, Any]]]:
    secret = str(outside / "secret.txt")
    return [
        (read_file, {"path": "../outside/secret.txt"}),
        (read_file, {"path": secret}),
        (read_file, {"path": "link/secret.txt"}),
        (read_file, {"path": "secret_link.txt"}),
        (write_file, {"path": "../outside/new.txt", "content": "x"}),
        (write_file, {"path": str(outside / "new.txt"), "content": "x"}),
        (write_file, {"path": "link/new.txt", "content": "x"}),
        (write_file, {"path": "secret_link.txt", "content": "pwned"}),
        (edit_file, {"path": "../outside/secret.txt", "old_text": "top", "new_text": "x"}),
        (edit_file, {"path": secret, "old_text": "top", "new_text": "x"}),
        (edit_file, {"path": "secret_link.txt", "old_text": "top", "new_text": "x"}),
        (list_dir, {"path": ".."}),
        (list_dir, {"path": str(outside)}),
        (list_dir, {"path": "link"}),
    ]


@pytest.mark.parametrize("index", range(14))
async def test_file_tools_stay_inside_the_workspace(
    workspace: Path, outside: Path, ctx: ToolContext, index: int
) -> None:
    (workspace / "link").symlink_to(outside, target_is_directory=True)
    (workspace / "secret_link.txt").symlink_to(outside / "secret.txt")
    item, arguments = escaping_calls(outside)[index]
    with pytest.raises(WorkspaceViolation, match="outside the workspace"):
        await run(item, ctx, **arguments)
    assert (outside / "secret.txt").read_text() == "top secret\n"
    assert not (outside / "new.txt").exists()


async def test_symlink_escape_is_named_as_such(
    workspace: Path, outside: Path, ctx: ToolContext
) -> None:
    (workspace / "secret_link.txt").symlink_to(outside / "secret.txt")
    with pytest.raises(WorkspaceViolation, match="symlink"):
        await run(read_file, ctx, path="secret_link.txt")


async def test_symlink_inside_the_workspace_is_fine(workspace: Path, ctx: ToolContext) -> None:
    (workspace / "real.txt").write_text("real\n")
    (workspace / "alias.txt").symlink_to(workspace / "real.txt")
    assert await run(read_file, ctx, path="alias.txt") == "    1| real"
