from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from shiyi.events import Event, event_from_json


def shiyi_executable() -> list[str]:
    script = Path(sys.executable).with_name("shiyi")
    return [str(script)] if script.exists() else [sys.executable, "-m", "shiyi"]


class Cli:
    """Runs the real `shiyi` console script in a subprocess with an isolated home."""

    def __init__(self, workspace: Path, home: Path) -> None:
        self.workspace = workspace
        self.env = {
            **os.environ,
            "SHIYI_HOME": str(home),
            "XDG_CONFIG_HOME": str(home / "config"),
            "PYTHONUNBUFFERED": "1",
        }

    def config(self, text: str) -> None:
        (self.workspace / "shiyi.yaml").write_text(text, encoding="utf-8")

    def script(self, steps: Sequence[dict[str, Any]]) -> None:
        """Use the scripted provider with these steps."""
        path = self.workspace / "script.json"
        path.write_text(json.dumps(steps), encoding="utf-8")
        self.config(f"models:\n  main:\n    provider: scripted\n    model_path: {path}\n")

    def run(
        self, *args: str, input: str | None = None, timeout: float = 120
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*shiyi_executable(), *args],
            cwd=self.workspace,
            env=self.env,
            input=input,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def popen(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [*shiyi_executable(), *args],
            cwd=self.workspace,
            env=self.env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )


def json_events(stdout: str) -> list[Event]:
    return [event_from_json(line) for line in stdout.splitlines() if line.strip()]


@pytest.fixture
def cli(workspace: Path, tmp_path: Path) -> Cli:
    return Cli(workspace, tmp_path / "cli-home")
