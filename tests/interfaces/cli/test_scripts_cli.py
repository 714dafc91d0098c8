"""`shiyi scripts list|show|run|rm` on the real CLI: scripts the agent saved in a `shiyi run`,
run through the bash jail, removed with their procedural memory, also while a server owns
the data dir."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.interfaces.cli.conftest import Cli
from tests.interfaces.cli.test_service_cli import home, start_owner, stop

DEPLOY: dict[str, Any] = {
    "action": "save",
    "name": "deploy",
    "description": "Deploy the site to an environment",
    "language": "bash",
    "body": 'echo "deploying $1"\necho "$1" > deployed.txt\nexit 4\n',
    "parameters": [{"name": "env", "description": "staging or production"}],
}
WIPE: dict[str, Any] = {**DEPLOY, "name": "wipe", "body": "rm -rf /\n", "parameters": []}


def agent_saves(cli: Cli, *scripts: dict[str, Any]) -> None:
    calls = [{"name": "scripts", "arguments": s} for s in scripts]
    cli.script([{"tool_calls": calls}, {"text": "Saved."}])
    cli.config((cli.workspace / "shiyi.yaml").read_text() + "memory:\n  embedder: none\n")
    ran = cli.run("run", "save my scripts")
    assert ran.returncode == 0, ran.stderr


def procedures(cli: Cli) -> list[str]:
    found = cli.run("memory", "search", "how do we deploy?", "--mode", "keyword")
    assert found.returncode == 0, found.stderr
    return [line for line in found.stdout.splitlines() if "run script deploy" in line]


def test_list_show_run_and_rm(cli: Cli, workspace: Path) -> None:
    agent_saves(cli, DEPLOY, WIPE)
    listed = cli.run("scripts", "list")
    assert listed.stdout.splitlines() == [
        "deploy ENV (bash) — Deploy the site to an environment",
        "wipe (bash) — Deploy the site to an environment",
    ]
    shown = cli.run("scripts", "show", "deploy")
    assert "usage: deploy ENV" in shown.stdout and "  env: staging or production" in shown.stdout
    assert shown.stdout.endswith("exit 4\n")

    ran = cli.run("scripts", "run", "deploy", "staging")
    assert (ran.returncode, ran.stdout) == (4, "deploying staging\n")  # its exit code
    assert (workspace / "deployed.txt").read_text() == "staging\n"
    denied = cli.run("scripts", "run", "wipe")
    assert denied.returncode == 2 and "rm -r of '/'" in denied.stderr
    missing = cli.run("scripts", "run", "deploy")
    assert missing.returncode == 2 and "script deploy needs env" in missing.stderr

    assert len(procedures(cli)) == 1
    removed = cli.run("scripts", "rm", "deploy")
    assert removed.returncode == 0, removed.stderr
    assert removed.stdout == "deleted script deploy and forgot 1 procedural memory of it\n"
    assert procedures(cli) == []
    assert cli.run("scripts", "list").stdout.startswith("wipe ")
    gone = cli.run("scripts", "show", "deploy")
    assert gone.returncode == 1 and "no saved script is called 'deploy'" in gone.stderr
    bad = cli.run("scripts", "show", "../shiyi")
    assert bad.returncode == 1 and "not a valid script name" in bad.stderr


def test_while_a_server_owns_the_data_dir(cli: Cli) -> None:
    agent_saves(cli, DEPLOY)
    server = start_owner(cli, "serve", "--port", "0")
    try:
        assert cli.run("scripts", "list").stdout.startswith("deploy ENV (bash)")
        assert "deploying $1" in cli.run("scripts", "show", "deploy").stdout
        removed = cli.run("scripts", "rm", "deploy")
        assert removed.returncode == 0, removed.stderr
        assert "using the running service" in removed.stderr
        assert "and forgot 1 procedural memory" in removed.stdout
        assert procedures(cli) == []
    finally:
        stop(server)
    assert not (home(cli) / "scripts" / "deploy.sh").exists()
