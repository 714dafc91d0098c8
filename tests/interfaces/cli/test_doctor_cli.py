"""`shiyi doctor` through the real CLI on what a configuration makes normal."""

from __future__ import annotations

import json

from tests.interfaces.cli.conftest import Cli


def test_without_an_embedder_vectorless_turns_are_not_a_problem(cli: Cli) -> None:
    script = cli.workspace / "script.json"
    script.write_text(json.dumps([{"text": "Noted."}]), encoding="utf-8")
    cli.config(
        f"models:\n  main:\n    provider: scripted\n    model_path: {script}\n"
        "memory:\n  embedder: none\n"
    )
    ran = cli.run("run", "the staging host is tern-04")
    assert ran.returncode == 0, ran.stderr
    checked = cli.run("doctor")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "ok: every copy agrees" in checked.stdout
    assert "no vector" not in checked.stdout
    repaired = cli.run("doctor", "--repair")
    assert repaired.returncode == 0, repaired.stdout
    assert "for embedding" not in repaired.stdout
