"""A served model cannot plant code that runs at the next start (issue 29 item 5), end to end:
the real server with its default tools (write_file, no bash) and the scripted model."""

from __future__ import annotations

from pathlib import Path

import pytest

from shiyi.llm.scripted import call, reply
from tests.interfaces.server.conftest import LiveFactory, stream_events

SITE = ".venv/lib/python3.11/site-packages"
PLANTED = "import os; os.system('touch /tmp/shiyi-pwned')\n"


def test_a_served_model_cannot_write_a_pth_or_a_shadowing_module(
    live: LiveFactory, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (workspace / SITE).mkdir(parents=True)
    (workspace / ".venv/pyvenv.cfg").write_text("home = /usr/bin\n")
    monkeypatch.chdir(workspace)  # `shiyi serve` started from the workspace, as users do
    attempts = [
        call("write_file", path=f"{SITE}/x.pth", content=PLANTED),
        call("write_file", path="yaml.py", content=PLANTED),
        call("edit_file", path=".venv/pyvenv.cfg", old_text="/usr/bin", new_text="/tmp"),
    ]
    server = live([reply("", *attempts), reply("I may not change that.")], memory=False)
    events = stream_events(server.client, server.session(), "make python run this at start")
    results = [data for kind, data in events if kind == "tool_result"]
    assert [r["name"] for r in results] == ["write_file", "write_file", "edit_file"]
    assert not any(r["ok"] for r in results)
    assert events[-1][1]["status"] == "completed"
    assert not (workspace / SITE / "x.pth").exists()
    assert not (workspace / "yaml.py").exists()
    assert (workspace / ".venv/pyvenv.cfg").read_text() == "home = /usr/bin\n"
    seen = "\n".join(str(m.content) for m in server.model.requests[-1].messages)
    assert seen.count("may not be changed") == 3
    assert "tools.allow_code_paths: true" in seen
