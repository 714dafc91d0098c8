"""The ``scripts`` tool, driven by the scripted model through the app's agent: save, find,
show, run through the bash jail, delete, and the procedural memory each script leaves."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from shiyi.config import Settings, load_settings
from shiyi.events import ToolResultEvent
from shiyi.llm.scripted import ScriptedModel, ScriptStep, call, reply
from shiyi.memory.scopes import Viewer
from shiyi.scripts.library import memory_key
from tests.conftest import AppOpener, collect
from tests.support.requests import run_context

DEPLOY = {
    "name": "deploy",
    "description": "Deploy the site to an environment: build it, then copy it to the target",
    "language": "bash",
    "body": 'set -e\necho "deploying $1 at ${2:-latest}"\necho "$1" > deployed.txt\n',
    "parameters": [
        {"name": "env", "description": "staging or production"},
        {"name": "tag", "description": "release tag", "required": False},
    ],
}


def save(**script: Any) -> ScriptStep:
    return reply("", call("scripts", {"action": "save", **script}))


def use(**arguments: Any) -> ScriptStep:
    return reply("", call("scripts", arguments))


@dataclass
class Result:
    ok: bool
    output: str
    """All of it, as the model read it."""


async def drive(
    open_app: AppOpener, settings: Settings, *steps: ScriptStep, **agent: Any
) -> list[Result]:
    """The tool results, in order, of one run of the scripted model ``steps``."""
    app = open_app(settings, *steps, reply("done"))
    events = await collect(app.agent(**agent).send("manage my scripts"))
    ended = [e for e in events if isinstance(e, ToolResultEvent)]
    model = app.models.main
    assert isinstance(model, ScriptedModel)
    read = {m.tool_call_id: m.content for m in model.requests[-1].messages if m.role == "tool"}
    return [Result(e.ok, read[e.call_id]) for e in ended]


def names_in(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir()) if directory.is_dir() else []


@pytest.fixture
def scripts_dir(settings: Settings) -> Path:
    return settings.data_dir / "scripts"


async def test_a_saved_script_is_two_plain_files_and_a_procedure(
    open_app: AppOpener, settings: Settings, scripts_dir: Path
) -> None:
    saved, listed, shown = await drive(
        open_app, settings, save(**DEPLOY), use(action="list"), use(action="show", name="deploy")
    )
    assert saved.ok, saved.output
    assert "Saved script deploy ENV [TAG] (bash)" in saved.output
    assert "Remembered as procedure fact_" in saved.output
    assert (scripts_dir / "deploy.sh").read_text() == DEPLOY["body"]
    meta = json.loads((scripts_dir / "deploy.json").read_text())
    assert meta["description"] == DEPLOY["description"]
    assert meta["parameters"][1] == {"name": "tag", "description": "release tag", "required": False}
    assert meta["saved_by"] == "default/shiyi"
    assert listed.output == f"deploy ENV [TAG] (bash) — {DEPLOY['description']}"
    assert 'echo "deploying $1' in shown.output and "tag (optional): release tag" in shown.output


async def test_query_memory_finds_the_deploy_script(
    open_app: AppOpener, settings: Settings
) -> None:
    steps = [
        save(**DEPLOY),
        use(
            action="save",
            name="backup-db",
            description="Dump the database to a file",
            language="sh",
            body="echo dump\n",
        ),
        reply("", call("query_memory", query="how do we deploy?", mode="keyword")),
    ]
    found = (await drive(open_app, settings, *steps))[-1]
    assert found.ok, found.output
    assert "<relevant_procedures>" in found.output
    first = found.output.splitlines()[2]
    assert "script deploy: Deploy the site" in first, found.output
    assert "run script deploy (env, tag?)" in first
    assert "steps: 1. run the saved script: scripts run deploy ENV [TAG]" in first


async def test_run_goes_through_the_bash_jail(
    open_app: AppOpener, settings: Settings, workspace: Path
) -> None:
    ran, missing = (
        await drive(
            open_app,
            settings,
            save(**DEPLOY),
            use(action="run", name="deploy", args=["staging", "v2"]),
            use(action="run", name="deploy"),
        )
    )[1:]
    assert ran.ok, ran.output
    assert ran.output.splitlines()[:3] == ["ran script deploy ENV [TAG]", "exit code: 0",
                                           "deploying staging at v2"]  # fmt: skip
    assert (workspace / "deployed.txt").read_text() == "staging\n"  # cwd = workspace
    assert not missing.ok and "script deploy needs env" in missing.output


async def test_a_shell_script_passes_the_bash_deny_checks_before_it_runs(
    open_app: AppOpener, settings: Settings, workspace: Path
) -> None:
    evil = {**DEPLOY, "name": "wipe", "body": "touch ran.txt\nrm -rf /\n", "parameters": []}
    peek = {**DEPLOY, "name": "peek", "body": 'cat "$1"\n', "parameters": []}
    steps = [
        save(**evil), use(action="run", name="wipe"),
        save(**peek), use(action="run", name="peek", args=["shiyi.yaml"]),
    ]  # fmt: skip
    outputs = [r.output for r in await drive(open_app, settings, *steps)]
    assert "rm -r of '/'" in outputs[1] and "was not run" in outputs[1]
    assert not (workspace / "ran.txt").exists()
    assert "shiyi.yaml" in outputs[3] and "protected" in outputs[3]


async def test_a_python_script_gets_its_arguments(open_app: AppOpener, settings: Settings) -> None:
    script = {"name": "add", "description": "Add two numbers", "language": "python",
              "body": "import sys\nprint(int(sys.argv[1]) + int(sys.argv[2]))\n"}  # fmt: skip
    ran = (await drive(open_app, settings, save(**script),
                       use(action="run", name="add", args=["2", "40"])))[1]  # fmt: skip
    assert ran.output.splitlines()[1:3] == ["exit code: 0", "42"], ran.output


async def test_without_bash_the_agent_saves_but_may_not_run(
    open_app: AppOpener, settings: Settings, workspace: Path
) -> None:
    allowed = ["scripts", "query_memory"]
    saved, ran = await drive(
        open_app, settings, save(**DEPLOY), use(action="run", name="deploy", args=["x"]),
        allowed=allowed,
    )  # fmt: skip
    assert saved.ok
    assert not ran.ok and "not allowed here" in ran.output
    assert not (workspace / "deployed.txt").exists()


async def test_names_cannot_leave_the_library(
    open_app: AppOpener, settings: Settings, scripts_dir: Path
) -> None:
    bad = await drive(
        open_app,
        settings,
        save(**{**DEPLOY, "name": "../escape"}),
        use(action="show", name="../../shiyi"),
        use(action="delete", name="/etc/passwd"),
    )
    for result in bad:
        assert not result.ok and "not a valid script name" in result.output
    assert not (settings.data_dir / "escape.sh").exists()
    assert names_in(scripts_dir) == []


async def test_delete_removes_the_files_and_forgets_the_procedure(
    open_app: AppOpener, settings: Settings, scripts_dir: Path
) -> None:
    steps = [
        save(**DEPLOY),
        save(**{**DEPLOY, "description": "Ship the site to an environment"}),
        use(action="delete", name="deploy"),
        reply("", call("query_memory", query="deploy script", mode="keyword")),
        use(action="show", name="deploy"),
    ]
    _, replaced, deleted, recalled, shown = await drive(open_app, settings, *steps)
    assert replaced.output.startswith("Replaced script deploy")
    assert deleted.output == "Deleted script deploy and forgot 2 procedural memories of it."
    assert names_in(scripts_dir) == []
    assert "run script deploy" not in recalled.output
    assert "no saved script is called 'deploy'" in shown.output


async def test_search_ranks_by_description_words(open_app: AppOpener, settings: Settings) -> None:
    other = {"name": "report", "description": "Count the lines of the logs", "language": "sh",
             "body": "wc -l *.log\n"}  # fmt: skip
    found, none = (await drive(
        open_app, settings, save(**DEPLOY), save(**other),
        use(action="search", query="deploying to production"), use(action="search", query="zebra"),
    ))[2:]  # fmt: skip
    assert found.output.splitlines()[0].startswith("deploy ENV [TAG]")
    assert "report" not in found.output
    assert "No saved script matches 'zebra'" in none.output


def test_scripts_is_a_valid_tool_name_for_the_settings(workspace: Path) -> None:
    chosen = load_settings(cwd=workspace, workspace=workspace, tools={"enabled": ["scripts"]})
    assert "scripts" in (chosen.server.tools or [])
    assert chosen.tools.enabled == ["scripts"]


async def test_prefetch_offers_the_script_to_a_later_question(
    open_app: AppOpener, settings: Settings
) -> None:
    app = open_app(settings, save(**DEPLOY), reply("saved"), reply("run the deploy script"))
    await collect(app.agent().send("save this deploy script"))
    await collect(app.agent().send("how do we deploy?"))  # a new session
    model = app.models.main
    assert isinstance(model, ScriptedModel)
    assert "run script deploy (env, tag?)" not in run_context(model.requests[0])
    assert "run script deploy (env, tag?)" in run_context(model.requests[-1])


async def test_each_user_has_their_own_library(open_app: AppOpener, settings: Settings) -> None:
    """A script another user could replace is code this user's agent would run on their
    word: users of one server do not share scripts, nor the memory of them."""
    alice, bob = Viewer("alice", "shiyi"), Viewer("bob", "shiyi")
    evil = {**DEPLOY, "body": "echo pwned > deployed.txt\n"}
    app = open_app(
        settings, save(**DEPLOY), reply("ok"), save(**evil), reply("ok"), use(action="list"),
        reply("ok"),
    )  # fmt: skip
    await collect(app.agent(viewer=alice).send("save it"))
    await collect(app.agent(viewer=bob).send("save mine"))
    await collect(app.agent(viewer=Viewer("carol", "shiyi")).send("what scripts are there?"))
    assert app.memory is not None
    libraries = sorted(p.parent.name for p in settings.data_dir.glob("scripts/users/*/deploy.sh"))
    assert [name.split("-")[0] for name in libraries] == ["alice", "bob"]
    bodies = {p.parent.name.split("-")[0]: p.read_text() for p in
              settings.data_dir.glob("scripts/users/*/deploy.sh")}  # fmt: skip
    assert bodies["alice"] == DEPLOY["body"] and "pwned" in bodies["bob"]
    key = memory_key("deploy")
    assert [f.user_id for f in app.memory.scoped(alice).history(key=key)] == ["alice"]
    assert [f.user_id for f in app.memory.scoped(bob).history(key=key)] == ["bob"]
    model = app.models.main
    assert isinstance(model, ScriptedModel)
    assert "No saved scripts yet" in model.requests[-1].last.content  # carol's is empty
