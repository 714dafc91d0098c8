from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from shiyi.config.settings import ToolSettings
from shiyi.errors import ToolError, WorkspaceViolation
from shiyi.tools.base import ToolContext
from shiyi.tools.builtins.search import grep


@pytest.fixture
def ctx(workspace: Path) -> ToolContext:
    return ToolContext.for_dir(workspace, ToolSettings(grep_max_matches=5))


def write(workspace: Path, files: dict[str, str | bytes]) -> None:
    for name, content in files.items():
        path = workspace / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)


async def run(ctx: ToolContext, **arguments: Any) -> str:
    return await grep.invoke(grep.validate(arguments), ctx)


async def test_matches_are_path_line_text(workspace: Path, ctx: ToolContext) -> None:
    write(workspace, {"a.py": "import os\n    def needle():\n", "sub/b.txt": "x\nneedle here\n"})
    out = await run(ctx, pattern=r"needle")
    assert out.splitlines() == ["a.py:2:     def needle():", "sub/b.txt:2: needle here"]


async def test_regex_and_ignore_case(workspace: Path, ctx: ToolContext) -> None:
    write(workspace, {"a.txt": "Foo1\nfoo\nFOO22\n"})
    assert await run(ctx, pattern=r"foo\d+") == "no matches for 'foo\\\\d+' in . (1 file searched)."
    out = await run(ctx, pattern=r"foo\d+", ignore_case=True)
    assert out.splitlines() == ["a.txt:1: Foo1", "a.txt:3: FOO22"]


async def test_invalid_regex_names_the_error(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match=r"invalid regular expression '\(unclosed'.*missing \)"):
        await run(ctx, pattern="(unclosed")


async def test_cap_reports_how_many_more(workspace: Path, ctx: ToolContext) -> None:
    write(workspace, {"many.txt": "hit\n" * 12})
    lines = (await run(ctx, pattern="hit")).splitlines()
    assert len(lines) == 6
    assert lines[-1].startswith("[7 more matches not shown")


async def test_max_matches_lowers_but_never_raises_the_cap(
    workspace: Path, ctx: ToolContext
) -> None:
    write(workspace, {"many.txt": "hit\n" * 12})
    assert "[10 more" in await run(ctx, pattern="hit", max_matches=2)
    assert "[7 more" in await run(ctx, pattern="hit", max_matches=1000)
    with pytest.raises(ToolError, match="max_matches must be 1 or more"):
        await run(ctx, pattern="hit", max_matches=0)


async def test_respects_gitignore_and_skips_dot_git(workspace: Path, ctx: ToolContext) -> None:
    write(
        workspace,
        {
            ".gitignore": "*.log\nbuild/\n",
            "keep.py": "needle\n",
            "debug.log": "needle\n",
            "build/out.py": "needle\n",
            ".git/config": "needle\n",
        },
    )
    assert await run(ctx, pattern="needle") == "keep.py:1: needle"


async def test_nested_gitignore_and_negation(workspace: Path, ctx: ToolContext) -> None:
    write(
        workspace,
        {
            ".gitignore": "*.gen\n",
            "a.gen": "needle\n",
            "pkg/.gitignore": "!keep.gen\nlocal.txt\n",
            "pkg/keep.gen": "needle\n",
            "pkg/other.gen": "needle\n",
            "pkg/local.txt": "needle\n",
            "local.txt": "needle\n",
        },
    )
    out = (await run(ctx, pattern="needle")).splitlines()
    assert out == ["local.txt:1: needle", "pkg/keep.gen:1: needle"]


async def test_root_gitignore_applies_when_searching_a_subdirectory(
    workspace: Path, ctx: ToolContext
) -> None:
    write(workspace, {".gitignore": "*.log\n", "sub/a.log": "needle\n", "sub/a.py": "needle\n"})
    assert await run(ctx, pattern="needle", path="sub") == "sub/a.py:1: needle"


async def test_searching_inside_an_ignored_directory_on_purpose(
    workspace: Path, ctx: ToolContext
) -> None:
    write(workspace, {".gitignore": "vendor/\n", "vendor/lib.py": "needle\n"})
    assert "no matches" in await run(ctx, pattern="needle")
    assert await run(ctx, pattern="needle", path="vendor") == "vendor/lib.py:1: needle"


async def test_skips_binary_files(workspace: Path, ctx: ToolContext) -> None:
    write(workspace, {"blob.bin": b"needle\x00\x01\x02", "text.txt": "needle\n"})
    assert await run(ctx, pattern="needle") == "text.txt:1: needle"


async def test_glob_filters_files(workspace: Path, ctx: ToolContext) -> None:
    write(workspace, {"a.py": "needle\n", "b.txt": "needle\n", "src/deep/c.py": "needle\n"})
    out = (await run(ctx, pattern="needle", glob="*.py")).splitlines()
    assert out == ["a.py:1: needle", "src/deep/c.py:1: needle"]
    assert await run(ctx, pattern="needle", glob="src/**/*.py") == "src/deep/c.py:1: needle"


async def test_single_file_path(workspace: Path, ctx: ToolContext) -> None:
    write(workspace, {"a.py": "one\nneedle\n", "b.py": "needle\n"})
    assert await run(ctx, pattern="needle", path="a.py") == "a.py:2: needle"


async def test_missing_path(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match="does not exist"):
        await run(ctx, pattern="x", path="nope")


async def test_long_lines_are_shortened_around_the_match(workspace: Path, ctx: ToolContext) -> None:
    write(workspace, {"min.js": "a" * 5000 + "needle" + "b" * 5000 + "\n"})
    out = await run(ctx, pattern="needle")
    assert "needle" in out
    assert len(out) < 400


@pytest.mark.parametrize("path", ["..", "../outside", "link", "secret_link.txt", "ABSOLUTE"])
async def test_grep_stays_inside_the_workspace(
    workspace: Path, tmp_path: Path, ctx: ToolContext, path: str
) -> None:
    outside = tmp_path / "outside"
    write(outside, {"secret.txt": "needle\n"})
    (workspace / "link").symlink_to(outside, target_is_directory=True)
    (workspace / "secret_link.txt").symlink_to(outside / "secret.txt")
    path = str(outside) if path == "ABSOLUTE" else path
    with pytest.raises(WorkspaceViolation, match="outside the workspace"):
        await run(ctx, pattern="needle", path=path)


async def test_walk_does_not_follow_symlinks_out(
    workspace: Path, tmp_path: Path, ctx: ToolContext
) -> None:
    outside = tmp_path / "outside"
    write(outside, {"secret.txt": "needle\n"})
    (workspace / "link").symlink_to(outside, target_is_directory=True)
    (workspace / "secret_link.txt").symlink_to(outside / "secret.txt")
    assert "no matches" in await run(ctx, pattern="needle")
