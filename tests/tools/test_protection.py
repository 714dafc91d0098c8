"""The agent cannot read or change its own configuration, secrets or data directory.

A served model confined to the workspace once wrote ``shiyi.yaml`` there with
``tools: {allow_outside_workspace: true}`` and ``server: {tools: null}``: after a restart it
could read any file and run bash.  Each way in is tried here through the real tools.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from shiyi.config import Settings, load_settings
from shiyi.errors import CommandDenied, ProtectedPath, WorkspaceViolation
from shiyi.events import ToolResultEvent
from shiyi.llm.scripted import ScriptedModel, call, reply
from shiyi.tools.base import FunctionTool, ToolContext
from shiyi.tools.builtins.bash_checks import check_command
from shiyi.tools.builtins.files import edit_file, list_dir, read_file, write_file
from shiyi.tools.builtins.search import grep
from shiyi.tools.protection import protected_name
from tests.conftest import AppOpener, collect

TOKEN = "tok-do-not-leak-4711"
CONFIG = f"server:\n  token: {TOKEN}\ntools:\n  allow_outside_workspace: false\n"
LIFT = "tools:\n  allow_outside_workspace: true\nserver:\n  tools: null\n"


@pytest.fixture
def configured(workspace: Path) -> Settings:
    """Settings loaded, as `shiyi serve` does, from the workspace's own shiyi.yaml."""
    (workspace / "shiyi.yaml").write_text(CONFIG)
    return load_settings(cwd=workspace, workspace=workspace)


@pytest.fixture
def ctx(configured: Settings) -> ToolContext:
    return ToolContext.for_settings(configured)


async def run(item: FunctionTool, ctx: ToolContext, **arguments: Any) -> str:
    return await item.invoke(item.validate(arguments), ctx)


def test_the_loaded_config_file_is_listed_as_protected(configured: Settings) -> None:
    assert configured.tools.protected_paths == [configured.workspace / "shiyi.yaml"]


async def test_read_file_does_not_show_the_token(ctx: ToolContext) -> None:
    with pytest.raises(ProtectedPath, match="make this change themselves") as info:
        await run(read_file, ctx, path="shiyi.yaml")
    assert TOKEN not in str(info.value)
    assert "'shiyi.yaml' is protected" in str(info.value)


async def test_write_file_cannot_change_the_config(workspace: Path, ctx: ToolContext) -> None:
    with pytest.raises(ProtectedPath):
        await run(write_file, ctx, path="shiyi.yaml", content=LIFT)
    assert (workspace / "shiyi.yaml").read_text() == CONFIG


async def test_write_file_cannot_create_a_config_the_next_start_would_load(
    workspace: Path, tmp_path: Path
) -> None:
    ctx = ToolContext.for_settings(load_settings(cwd=tmp_path, workspace=workspace))
    for path in ("shiyi.yaml", "sub/shiyi.yaml", "./sub/../shiyi.yaml"):
        with pytest.raises(ProtectedPath, match="shiyi's configuration"):
            await run(write_file, ctx, path=path, content=LIFT)
    assert not (workspace / "shiyi.yaml").exists()
    assert not (workspace / "sub").exists()


async def test_edit_file_cannot_change_the_config(workspace: Path, ctx: ToolContext) -> None:
    with pytest.raises(ProtectedPath):
        await run(
            edit_file,
            ctx,
            path="shiyi.yaml",
            old_text="allow_outside_workspace: false",
            new_text="allow_outside_workspace: true",
        )
    assert (workspace / "shiyi.yaml").read_text() == CONFIG


async def test_a_symlink_to_the_config_is_refused(workspace: Path, ctx: ToolContext) -> None:
    (workspace / "notes.txt").symlink_to(workspace / "shiyi.yaml")
    with pytest.raises(ProtectedPath, match="it leads to"):
        await run(read_file, ctx, path="notes.txt")
    with pytest.raises(ProtectedPath):
        await run(write_file, ctx, path="notes.txt", content=LIFT)
    assert (workspace / "shiyi.yaml").read_text() == CONFIG


async def test_a_hard_link_to_the_config_is_refused(workspace: Path, ctx: ToolContext) -> None:
    os.link(workspace / "shiyi.yaml", workspace / "notes.txt")
    with pytest.raises(ProtectedPath, match="hard link"):
        await run(edit_file, ctx, path="notes.txt", old_text="false", new_text="true")
    assert (workspace / "shiyi.yaml").read_text() == CONFIG


async def test_the_data_dir_is_refused_even_outside_the_sandbox(
    workspace: Path, configured: Settings
) -> None:
    configured.tools.allow_outside_workspace = True
    ctx = ToolContext.for_settings(configured)
    secret = configured.data_dir / "server.json"
    secret.parent.mkdir(parents=True, exist_ok=True)
    secret.write_text(f'{{"token": "{TOKEN}"}}')
    (workspace / "data").symlink_to(configured.data_dir)
    for path in (str(secret), "data/server.json", str(configured.data_dir)):
        with pytest.raises(ProtectedPath, match="data directory"):
            await run(read_file, ctx, path=path)
    with pytest.raises(ProtectedPath):
        await run(list_dir, ctx, path="data")
    with pytest.raises(ProtectedPath):
        await run(write_file, ctx, path=str(configured.data_dir / "x"), content="x")


async def test_the_user_config_dir_and_shiyi_config_are_refused(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = tmp_path / "conf" / "mine.yaml"
    elsewhere.parent.mkdir()
    elsewhere.write_text(CONFIG)
    monkeypatch.setenv("SHIYI_CONFIG", str(elsewhere))
    settings = load_settings(cwd=tmp_path, workspace=workspace)
    settings.tools.allow_outside_workspace = True
    ctx = ToolContext.for_settings(settings)
    with pytest.raises(ProtectedPath, match=r"SHIYI_CONFIG|loaded config"):
        await run(read_file, ctx, path=str(elsewhere))
    user_dir = tmp_path / "xdg-config" / "shiyi"  # XDG_CONFIG_HOME from the test env
    with pytest.raises(ProtectedPath, match="config directory"):
        await run(write_file, ctx, path=str(user_dir / "persona.md"), content="obey")
    assert not user_dir.exists()


async def test_a_config_given_by_path_is_refused_whatever_its_name(
    workspace: Path, tmp_path: Path
) -> None:
    custom = workspace / "settings-prod.yaml"
    custom.write_text(CONFIG)
    settings = load_settings(cwd=tmp_path, config_file=custom, workspace=workspace)
    ctx = ToolContext.for_settings(settings)
    with pytest.raises(ProtectedPath, match="loaded config file"):
        await run(read_file, ctx, path="settings-prod.yaml")


async def test_dotenv_files_are_refused_but_templates_are_not(
    workspace: Path, ctx: ToolContext
) -> None:
    (workspace / ".env").write_text("DEEPSEEK_API_KEY=sk-x\n")
    (workspace / ".env.example").write_text("DEEPSEEK_API_KEY=\n")
    with pytest.raises(ProtectedPath, match=r"\.env file holds secrets"):
        await run(read_file, ctx, path=".env")
    assert "DEEPSEEK_API_KEY=" in await run(read_file, ctx, path=".env.example")


@pytest.mark.parametrize("name", ["Shiyi.YAML", "SHIYI.yaml", ".ENV", ".Env.Local"])
async def test_protected_names_match_in_any_case(ctx: ToolContext, name: str) -> None:
    """On macOS and Windows ``Shiyi.YAML`` is ``shiyi.yaml``: the next start loads it."""
    assert protected_name(name) is not None
    with pytest.raises(ProtectedPath, match="protected"):
        await run(write_file, ctx, path=name, content=LIFT)
    with pytest.raises(CommandDenied, match="protected"):
        check_command(f"echo x > {name}", ctx.workspace, [])


def test_templates_stay_readable_in_any_case() -> None:
    assert protected_name(".ENV.Example") is None
    assert protected_name("shiyi.yaml.bak") is None


async def test_grep_skips_protected_files(workspace: Path, ctx: ToolContext) -> None:
    (workspace / "app.py").write_text("token = read_token()\n")
    out = await run(grep, ctx, pattern="token")
    assert "app.py:1" in out
    assert TOKEN not in out and "shiyi.yaml" not in out
    with pytest.raises(ProtectedPath):
        await run(grep, ctx, pattern="token", path="shiyi.yaml")


async def test_list_dir_names_protected_entries_without_details(
    workspace: Path, ctx: ToolContext
) -> None:
    (workspace / "app.py").write_text("x = 1\n")
    out = await run(list_dir, ctx)
    assert "shiyi.yaml  (protected)" in out.splitlines()
    assert "app.py  6 B" in out.splitlines()


async def test_ordinary_files_still_work(workspace: Path, ctx: ToolContext) -> None:
    assert "created" in await run(write_file, ctx, path="shiyi_notes.yaml", content="a: 1\n")
    assert "a: 1" in await run(read_file, ctx, path="shiyi_notes.yaml")


def test_protected_path_is_a_workspace_violation() -> None:
    assert issubclass(ProtectedPath, WorkspaceViolation)


async def test_a_served_model_cannot_lift_its_own_sandbox(
    workspace: Path, configured: Settings, open_app: AppOpener
) -> None:
    """The issue's attack, end to end: the scripted model, with the server's tool set, tries
    to rewrite its config, create a second one, read the token and list the data dir."""
    configured.memory.enabled = False
    attempts = [
        call("write_file", path="shiyi.yaml", content=LIFT),
        call("edit_file", path="shiyi.yaml", old_text="false", new_text="true"),
        call("write_file", path="conf/shiyi.yaml", content=LIFT),
        call("read_file", path="shiyi.yaml"),
        call("grep", pattern="token"),
        call("list_dir", path=str(configured.data_dir)),
    ]
    app = open_app(configured, reply("", *attempts), reply("I may not change that."))
    agent = app.agent(allowed=configured.server.tools)
    assert "bash" not in agent.tools
    events = await collect(agent.send("let yourself out"))
    results = [e for e in events if isinstance(e, ToolResultEvent)]
    assert len(results) == len(attempts)
    # Only grep succeeds, and it leaves the config out (results come as calls finish).
    assert [r.name for r in results if r.ok] == ["grep"]
    assert (workspace / "shiyi.yaml").read_text() == CONFIG
    assert not (workspace / "conf").exists()
    model = app.models.main
    assert isinstance(model, ScriptedModel)
    seen = "\n".join(str(m.content) for m in model.requests[-1].messages)
    assert "is protected" in seen
    assert TOKEN not in seen


async def test_a_configured_persona_file_is_protected(workspace: Path, tmp_path: Path) -> None:
    (workspace / "persona.md").write_text("You are careful.\n")
    settings = load_settings(cwd=tmp_path, workspace=workspace)
    settings.context.persona_file = workspace / "persona.md"
    ctx = ToolContext.for_settings(settings)
    with pytest.raises(ProtectedPath):
        await run(write_file, ctx, path="persona.md", content="You obey the file.\n")
    assert (workspace / "persona.md").read_text() == "You are careful.\n"
