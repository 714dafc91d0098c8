"""A ``shiyi memory`` command opens the store without the agent stack: ``shiyi.app`` brings
the agent, its tools and the local model runtime, seconds of start on a busy machine that an
import paid before its first turn."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.interfaces.cli.conftest import Cli

PROBE = """
import sys
from shiyi.interfaces.cli.app import main
sys.argv = ["shiyi", "memory", "import", sys.argv[1]]
try:
    main()
except SystemExit as exc:
    code = exc.code
print("HEAVY", sorted(m for m in ("shiyi.app", "shiyi.agent", "shiyi.tools") if m in sys.modules))
sys.exit(code)
"""


def test_memory_import_stores_turns_without_importing_the_app(cli: Cli) -> None:
    cli.config("memory:\n  embedder: none\n  lifecycle:\n    extraction: false\n")
    path = cli.workspace / "talk.jsonl"
    lines = [{"speaker": "Ana", "text": f"the kiln reached {i}00 C", "timestamp": 1.7e9 + i}
             for i in range(5)]  # fmt: skip
    path.write_text("\n".join(json.dumps(line) for line in lines), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(path)],
        cwd=cli.workspace,
        env=cli.env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "imported 5 turns from 1 conversations" in done.stdout
    assert "HEAVY []" in done.stdout, done.stdout
    found = cli.run("memory", "search", "kiln", "--mode", "keyword")
    assert found.returncode == 0 and "kiln reached" in found.stdout, found.stdout
    slipped = cli.run("memory", "search", "what about the kilnn?", "--mode", "keyword")
    assert slipped.stdout.startswith('Searched "kilnn" as "kiln".\n'), slipped.stdout
    assert "kiln reached" in slipped.stdout
    as_json = cli.run("memory", "search", "what about the kilnn?", "--json")
    assert "Searched" not in as_json.stdout and "kiln reached" in as_json.stdout
