"""A finished ``shiyi run`` leaves a readable Markdown file under the data dir, and
``shiyi memory forget`` leaves no forgotten message in it."""

from __future__ import annotations

import json
from pathlib import Path

from tests.interfaces.cli.conftest import Cli, json_events
from tests.interfaces.cli.test_service_cli import home

SECRET = "the locker code is 4417"


def test_a_run_file_is_written_and_forget_rewrites_it(cli: Cli) -> None:
    (cli.workspace / "notes.txt").write_text("alpha\nbeta\n")
    cli.script(
        [
            {
                "text": "Reading.",
                "tool_calls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}],
            },
            {"text": "The notes start with alpha."},
        ]
    )
    cli.config((cli.workspace / "shiyi.yaml").read_text() + "memory:\n  embedder: none\n")
    ran = cli.run("run", "--json", f"remember that {SECRET}, then read notes.txt")
    assert ran.returncode == 0, ran.stderr
    start = next(e for e in json_events(ran.stdout) if e.type == "run_start")
    path = home(cli) / "runs" / start.session_id / f"{start.run_id}.md"  # type: ignore[union-attr]
    text = path.read_text(encoding="utf-8")
    assert text.startswith(f"# Run {start.run_id}")  # type: ignore[union-attr]
    assert "- status: completed" in text and "- took: " in text
    assert f"## Goal\n\nremember that {SECRET}" in text
    assert 'Tool call `read_file`:\n\n```json\n{"path": "notes.txt"}' in text
    assert "### Tool result `read_file`" in text and "alpha" in text
    assert text.rstrip().endswith("## Final answer\n\nThe notes start with alpha.")

    hits = cli.run("memory", "search", "locker code", "--mode", "keyword", "--json").stdout
    said = [json.loads(h)["id"] for h in hits.splitlines() if SECRET in json.loads(h)["text"]]
    assert said, hits
    forgot = cli.run("memory", "forget", *said, "--yes")
    assert forgot.returncode == 0, forgot.stderr
    assert "run files" in forgot.stdout
    assert SECRET not in Path(path).read_text(encoding="utf-8")
