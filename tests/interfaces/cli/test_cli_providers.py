"""`shiyi run --json` end to end against a real HTTP endpoint and the real local model."""

from __future__ import annotations

import json

import pytest

from tests.interfaces.cli.conftest import Cli, json_events
from tests.support.fake_openai import FakeError, FakeOpenAIServer, FakeReply, FakeToolCall


def test_run_json_against_fake_openai_server(cli: Cli, fake_openai: FakeOpenAIServer) -> None:
    (cli.workspace / "a.txt").write_text("needle in here\n")
    fake_openai.enqueue(
        FakeError(429, retry_after="0"),
        FakeReply(
            reasoning="I should search.",
            tool_calls=[FakeToolCall("grep", {"pattern": "needle"})],
        ),
        FakeReply("Found it in a.txt."),
    )
    cli.config(
        "models:\n  main:\n    provider: openai_compat\n"
        f"    base_url: {fake_openai.base_url}\n    model: fake-model\n"
        "    retry_base_delay: 0.01\n"
        # Memory extraction would use the same endpoint (no fast model is configured) and
        # take scripted replies meant for the agent.
        "memory:\n  lifecycle:\n    extraction: false\n"
    )
    result = cli.run("run", "--json", "find the needle")
    assert result.returncode == 0, result.stderr
    events = json_events(result.stdout)
    types = [e.type for e in events]
    assert "reasoning_delta" in types
    grep_result = next(e for e in events if e.type == "tool_result")
    assert grep_result.ok  # type: ignore[union-attr]
    assert "a.txt:1" in grep_result.summary  # type: ignore[union-attr]
    assert events[-2].status == "completed"  # type: ignore[union-attr]
    # 429 retried, then two real turns; the second carried the grep output back.
    assert len(fake_openai.requests) == 3
    last = fake_openai.requests[-1]["messages"]
    assert last[-1]["role"] == "tool"
    assert "needle in here" in last[-1]["content"]
    assert json.loads(last[-2]["tool_calls"][0]["function"]["arguments"]) == {"pattern": "needle"}


@pytest.mark.local_model
def test_run_json_against_the_local_model(cli: Cli) -> None:
    cli.env["SHIYI_MODELS__MAIN__MAX_TOKENS"] = "24"
    # Greedy decoding: this test is about the event stream, and a sampled reply of the tiny
    # model sometimes repeats shiyi's persona, which the reply check fails by design (about
    # one run in six did, so CI failed now and then). The prompt holds the date, so even greedy
    # replies differ from run to run; the usual one is a self-introduction from the persona's
    # opening line, which is fair to say (shiyi.agent.echo).
    cli.env["SHIYI_MODELS__MAIN__TEMPERATURE"] = "0"
    cli.config("tools:\n  enabled: []\n")  # no tools offered: the reply is plain text
    result = cli.run("run", "--json", "Say hello in one short sentence.", timeout=300)
    assert result.returncode == 0, result.stderr + result.stdout[-3000:]
    events = json_events(result.stdout)
    assert [e.type for e in events[:2]] == ["routed", "run_start"]
    assert [e.type for e in events[-2:]] == ["run_end", "memory_work"]
    assert events[-2].status == "completed"  # type: ignore[union-attr]
    usage = [e for e in events if e.type == "usage"]
    assert len(usage) == 1
    assert usage[0].prompt_tokens > 0  # type: ignore[union-attr]
    assert 0 < usage[0].completion_tokens <= 24  # type: ignore[union-attr]
    deltas = [e.text for e in events if e.type == "text_delta"]  # type: ignore[union-attr]
    assert len(deltas) > 1, "text should stream in several pieces"
    assert "".join(deltas).strip()
