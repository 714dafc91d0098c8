"""The repo_map tool: what the model reads, sandboxing, the configured budget and cache."""

from __future__ import annotations

import contextlib
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from shiyi.config import load_settings
from shiyi.config.settings import RepoMapSettings, ToolSettings
from shiyi.context.tool_memory import ToolMemory
from shiyi.errors import ToolArgumentsError, ToolError, WorkspaceViolation
from shiyi.llm.types import ToolCall
from shiyi.tools.base import ToolContext
from shiyi.tools.builtins import default_registry
from shiyi.tools.builtins.repomap import repo_map
from tests.support.repomap_repo import write_repo


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    return tmp_path / "data" / "repomap.sqlite3"


@pytest.fixture
def ctx(workspace: Path, cache: Path) -> ToolContext:
    write_repo(workspace)
    settings = ToolSettings(repo_map=RepoMapSettings(max_tokens=256, cache=cache))
    return ToolContext.for_dir(workspace, settings)


async def run(ctx: ToolContext, **arguments: Any) -> str:
    return await repo_map.invoke(repo_map.validate(arguments), ctx)


async def test_the_map_names_files_and_signatures(ctx: ToolContext) -> None:
    out = await run(ctx, max_tokens=4000)
    lines = out.splitlines()
    assert lines[0].startswith("Repo map of .: 15 of 17 source files, ")
    assert lines[0].endswith("/4000 tokens.")
    assert lines[1] == "Skipped 1 file(s): broken/blob.py (binary content)"
    assert lines[2] == "web/types.ts:"
    assert "   12| def make_user(name: str) -> User:" in lines


async def test_the_configured_budget_applies_and_is_reported(ctx: ToolContext) -> None:
    out = await run(ctx)
    tokens, budget = out.splitlines()[0].rsplit(", ", 1)[1].removesuffix(" tokens.").split("/")
    assert budget == "256" and 0 < int(tokens) <= 256


async def test_focus_and_mentions_personalise(ctx: ToolContext) -> None:
    focused = await run(ctx, focus_files=["server/main.go"])
    assert focused.splitlines()[2] == "server/server.go:"
    mentioned = await run(ctx, mentioned=["UserStore"])
    assert mentioned.splitlines()[2] == "web/store.ts:"


async def test_a_subdirectory_can_be_mapped(ctx: ToolContext) -> None:
    out = await run(ctx, path="engine", focus_files=["src/main.rs"])
    assert out.splitlines()[0].startswith("Repo map of engine: 2 of 2 source files")
    assert "src/lib.rs:" in out and "web/" not in out


async def test_sandbox_and_argument_errors(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "secret.py").write_text("def secret(): pass\n")
    with pytest.raises(WorkspaceViolation, match="outside the workspace"):
        await run(ctx, path="..")
    with pytest.raises(WorkspaceViolation, match="outside the workspace"):
        await run(ctx, focus_files=["../secret.py"])
    with pytest.raises(ToolError, match=r"focus file 'app/nope\.py' does not exist"):
        await run(ctx, focus_files=["app/nope.py"])
    with pytest.raises(ToolError, match=r"path 'README\.md' is a file, not a directory"):
        await run(ctx, path="README.md")
    with pytest.raises(ToolError, match=r"max_tokens must be between 64 and 8192 \(got 10\)"):
        await run(ctx, max_tokens=10)
    with pytest.raises(ToolArgumentsError, match="focus_files"):
        repo_map.validate({"focus_files": "app/cli.py"})


async def test_a_focus_file_without_code_is_reported(ctx: ToolContext) -> None:
    out = await run(ctx, focus_files=["README.md"])
    assert "Not ranked (no parsable code, or ignored): README.md" in out.splitlines()


def cached_files(cache: Path) -> int:
    with contextlib.closing(sqlite3.connect(cache)) as db:
        count: int = db.execute("SELECT count(*) FROM files").fetchone()[0]
    return count


async def test_the_cache_file_is_used_across_calls(ctx: ToolContext, cache: Path) -> None:
    await run(ctx)
    assert cached_files(cache) == 16  # every source file but the binary one
    first = await run(ctx, mentioned=["Engine"], max_tokens=4000)
    (ctx.workspace.root / "app" / "cli.py").unlink()
    second = await run(ctx, mentioned=["Engine"], max_tokens=4000)
    assert "app/cli.py:" in first and "app/cli.py" not in second
    assert cached_files(cache) == 15  # the deleted file's tags were dropped


async def test_an_empty_workspace_says_so(tmp_path: Path) -> None:
    ctx = ToolContext.for_dir(tmp_path)
    (tmp_path / "notes.md").write_text("# notes\n")
    out = await run(ctx)
    assert out.splitlines()[1].startswith("No definitions found")


async def test_the_registry_offers_and_runs_it(workspace: Path) -> None:
    write_repo(workspace)
    settings = load_settings(cwd=workspace, workspace=workspace)
    assert settings.tools.repo_map.cache == settings.data_dir / "repomap.sqlite3"
    registry = default_registry(settings.tools)
    ctx = ToolContext.for_dir(workspace, settings.tools)
    call = ToolCall(id="c1", name="repo_map", arguments=json.dumps({"max_tokens": 100}))
    outcome = await registry.execute(call, ctx)
    assert outcome.ok, outcome.content
    assert "Repo map of ." in outcome.content
    assert settings.tools.repo_map.cache is not None
    assert cached_files(settings.tools.repo_map.cache) == 16


def test_session_tool_memory_drops_the_map_when_the_tree_changes(workspace: Path) -> None:
    # repo_map is read-only, so an identical call is answered from the session's tool
    # memory; it must watch the mapped tree like grep does, or an edit leaves a stale map.
    write_repo(workspace)
    memory = ToolMemory(20, 0.3)
    arguments = {"path": ".", "max_tokens": 200}
    memory.store("repo_map", arguments, True, "the map", workspace)
    assert memory.lookup("repo_map", {"max_tokens": 200}, True, workspace) is not None
    memory.store("edit_file", {"path": "app/models.py"}, False, "edited", workspace)
    assert memory.lookup("repo_map", arguments, True, workspace) is None
    memory.store("repo_map", arguments, True, "the map", workspace)
    (workspace / "app" / "extra.py").write_text("def extra(): pass\n")  # changed outside
    assert memory.lookup("repo_map", arguments, True, workspace) is None


async def test_identifiers_the_user_named_personalise_the_map(ctx: ToolContext) -> None:
    plain = await run(ctx)
    ctx.conversation = ["the UserStore loses users after a restart, can you look?"]
    named = await run(ctx)
    assert named.splitlines()[2] == "web/store.ts:"
    assert plain.splitlines()[2] != "web/store.ts:"
