"""Two configs (users alice and bob) over one data dir: `shiyi memory show`, `export`,
`forget` and `import` act as the configured user only (another user's id is not found)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from shiyi.config import load_settings
from shiyi.memory.scopes import Viewer
from shiyi.memory.service import Memory
from shiyi.memory.transfer.import_claims import importer_tag
from tests.interfaces.cli.conftest import Cli
from tests.support.records import seed, turn

MARK_A = "zebra4711quokka"
BOB = Viewer("bob", "shiyi", "default")


@dataclass
class Seeded:
    alice: Path
    bob: Path
    fact: str
    event: str
    bobs_fact: str
    bobs_event: str


@pytest.fixture
def seeded(cli: Cli, workspace: Path, monkeypatch: pytest.MonkeyPatch) -> Seeded:
    """Alice's and Bob's facts and turns, all about the entity Vault, in one store."""
    configs = {}
    for user in ("alice", "bob"):
        configs[user] = workspace / f"{user}.yaml"
        configs[user].write_text(f"memory:\n  user_id: {user}\n  embedder: none\n")
    for name in ("SHIYI_HOME", "XDG_CONFIG_HOME"):
        monkeypatch.setenv(name, cli.env[name])
    settings = load_settings(cwd=workspace, config_file=configs["alice"], workspace=workspace)
    memory = Memory.open(settings)
    try:
        fact = memory.remember(f"The Vault code is {MARK_A}", about=["Vault"])
        bobs_fact = memory.remember("Bob guards the Vault", about=["Vault"], viewer=BOB)
        seed(
            memory,
            [
                turn(1, f"the Vault code is {MARK_A}", id="ev_a", user_id="alice"),
                turn(2, "I guard the Vault", id="ev_b", session="s2", run="r2", user_id="bob"),
            ],
        )
        memory.store.link_mentions([("ev_a", "vault"), ("ev_b", "vault")])
    finally:
        memory.close()
    return Seeded(configs["alice"], configs["bob"], fact.id, "ev_a", bobs_fact.id, "ev_b")


def test_show_finds_only_the_configured_users_memories(cli: Cli, seeded: Seeded) -> None:
    for memory_id in (seeded.fact, seeded.event):
        theirs = cli.run("memory", "show", memory_id, "-c", str(seeded.bob))
        assert theirs.returncode != 0 and MARK_A not in theirs.stdout
        assert f"no memory with id {memory_id!r}" in theirs.stderr
        mine = cli.run("memory", "show", memory_id, "-c", str(seeded.alice))
        assert mine.returncode == 0 and MARK_A in mine.stdout, mine.stderr
    assert "Bob guards" in cli.run("memory", "show", seeded.bobs_fact, "-c", str(seeded.bob)).stdout


def test_export_holds_only_the_configured_users_memories(cli: Cli, seeded: Seeded) -> None:
    exported = cli.run("memory", "export", "-c", str(seeded.bob))
    assert exported.returncode == 0, exported.stderr
    ids = {json.loads(line)["id"] for line in exported.stdout.splitlines()}
    assert ids == {seeded.bobs_fact, seeded.bobs_event} and MARK_A not in exported.stdout
    mine = cli.run("memory", "export", "-c", str(seeded.alice)).stdout
    assert {seeded.fact, seeded.event} <= {json.loads(line)["id"] for line in mine.splitlines()}


def test_forget_reaches_only_the_configured_users_memories(cli: Cli, seeded: Seeded) -> None:
    by_id = cli.run("memory", "forget", seeded.fact, seeded.event, "--yes", "-c", str(seeded.bob))
    # another user's ids are "no memory" as a typo is: nothing deleted, nothing told
    assert by_id.returncode == 2 and "nothing was deleted" in by_id.stderr, by_id.stdout
    entity = cli.run("memory", "forget", "--entity", "Vault", "--yes", "-c", str(seeded.bob))
    assert entity.returncode == 0, entity.stderr
    assert "1 events, 1 facts, 0 entities" in entity.stdout  # Alice's keep the node
    for memory_id in (seeded.fact, seeded.event):
        assert cli.run("memory", "show", memory_id, "-c", str(seeded.alice)).returncode == 0
    for memory_id in (seeded.bobs_fact, seeded.bobs_event):
        assert cli.run("memory", "show", memory_id, "-c", str(seeded.bob)).returncode != 0
    mine = cli.run("memory", "forget", "--entity", "Vault", "--yes", "-c", str(seeded.alice))
    assert "1 events, 1 facts, 1 entities" in mine.stdout, mine.stdout + mine.stderr


def test_import_records_the_configured_user(cli: Cli, seeded: Seeded, workspace: Path) -> None:
    """Bob's file names Alice's session: his turns are stored under his tag, hers stay."""
    lines = [{"speaker": "user", "text": "my kiwi0815narwhal", "timestamp": 1.7e9,
              "dia_id": "D1", "session": "s1"}]  # fmt: skip
    path = workspace / "bob.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines))
    imported = cli.run("memory", "import", str(path), "-c", str(seeded.bob))
    assert imported.returncode == 0, imported.stderr
    tagged = f"s1{importer_tag(BOB)}"
    assert f"s1 is stored as {tagged}: another user's memory" in imported.stdout
    bobs = [
        json.loads(line)
        for line in cli.run("memory", "export", "-c", str(seeded.bob)).stdout.splitlines()
    ]
    [turn_] = [r for r in bobs if r.get("content") == "my kiwi0815narwhal"]
    assert (turn_["id"], turn_["session_id"]) == (f"{tagged}:D1", tagged)
    alices = cli.run("memory", "export", "-c", str(seeded.alice)).stdout
    assert "kiwi0815narwhal" not in alices and MARK_A in alices
