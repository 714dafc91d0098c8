"""The fake OpenAI server's own contract: non-streaming answers and script mode."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.fake_openai import FakeOpenAIServer, FakeReply, FakeToolCall

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def srv() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as server:
        yield server


def test_fake_server_answers_non_streaming_requests(srv: FakeOpenAIServer) -> None:
    srv.enqueue(FakeReply("whole", reasoning="hm", tool_calls=[FakeToolCall("t", {"a": 1})]))
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]}).encode()
    request = urllib.request.Request(
        f"{srv.base_url}/chat/completions", body, {"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=5) as response:
        data = json.load(response)

    message = data["choices"][0]["message"]
    assert (message["content"], message["reasoning_content"]) == ("whole", "hm")
    assert message["tool_calls"][0]["function"] == {"name": "t", "arguments": '{"a": 1}'}
    assert data["choices"][0]["finish_reason"] == "tool_calls"
    assert data["usage"]["total_tokens"] == 19


def test_fake_server_runs_as_a_script(tmp_path: Path) -> None:
    script = tmp_path / "steps.json"
    script.write_text(json.dumps([{"text": "from a script"}]), encoding="utf-8")
    record = tmp_path / "requests.jsonl"
    command = [sys.executable, "-m", "tests.support.fake_openai", "--script", str(script)]
    process = subprocess.Popen(
        [*command, "--record", str(record)], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        base_url = process.stdout.readline().strip()
        body = json.dumps({"model": "m", "messages": [], "stream": False}).encode()
        request = urllib.request.Request(f"{base_url}/chat/completions", body)
        with urllib.request.urlopen(request, timeout=5) as response:
            data = json.load(response)
    finally:
        process.terminate()
        process.wait(timeout=5)

    assert data["choices"][0]["message"]["content"] == "from a script"
    assert json.loads(record.read_text(encoding="utf-8").splitlines()[0])["model"] == "m"
