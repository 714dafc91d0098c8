"""``shiyi run`` with no model configured uses a model server found running on loopback."""

from __future__ import annotations

import json
import signal

from tests.interfaces.cli.conftest import Cli, json_events
from tests.interfaces.cli.test_service_cli import start_owner
from tests.support.fake_openai import FakeOpenAIServer, FakeReply
from tests.support.model_servers import closed_port


def test_run_uses_a_detected_server_and_says_which(cli: Cli, fake_openai: FakeOpenAIServer) -> None:
    fake_openai.enqueue(FakeReply("Hello from the server you already run."))
    cli.env["SHIYI_MODEL_SOURCES__DETECT"] = "true"
    cli.env["SHIYI_MODEL_SOURCES__DETECT_PORTS"] = json.dumps([closed_port(), fake_openai.port])
    cli.env["SHIYI_MODEL_SOURCES__DETECT_TIMEOUT"] = "2"

    done = cli.run("run", "--json", "--memory-wait", "0", "Say hello")

    assert done.returncode == 0, done.stderr
    texts = [e.text for e in json_events(done.stdout) if e.type == "text_delta"]
    assert "".join(texts) == "Hello from the server you already run."
    assert fake_openai.requests[0]["model"] == "fake-model"
    notes = [line for line in done.stderr.splitlines() if line.startswith("model: ")]
    assert notes == [
        f"model: fake-model via an OpenAI-compatible server at 127.0.0.1:{fake_openai.port} "
        "(found running; set models.main to choose)"
    ]


def test_serve_says_which_detected_model_it_serves(cli: Cli, fake_openai: FakeOpenAIServer) -> None:
    cli.config("memory:\n  embedder: none\n")  # a config without a model: detection applies
    cli.env["SHIYI_MODEL_SOURCES__DETECT"] = "true"
    cli.env["SHIYI_MODEL_SOURCES__DETECT_PORTS"] = json.dumps([fake_openai.port])
    cli.env["SHIYI_MODEL_SOURCES__DETECT_TIMEOUT"] = "2"

    server = start_owner(cli, "serve", "--port", "0")
    server.send_signal(signal.SIGTERM)
    _, err = server.communicate(timeout=30)

    assert (
        f"model: fake-model via an OpenAI-compatible server at 127.0.0.1:{fake_openai.port}" in err
    )


def test_chat_names_the_embedded_model_when_nothing_is_found(cli: Cli) -> None:
    cli.config("memory:\n  embedder: none\n")
    cli.env["SHIYI_MODEL_SOURCES__DETECT"] = "true"
    cli.env["SHIYI_MODEL_SOURCES__DETECT_PORTS"] = json.dumps([closed_port()])

    done = cli.run("chat", "--plain", input="/exit\n")

    assert done.returncode == 0, done.stderr
    notes = [line for line in done.stdout.splitlines() if line.startswith("model: ")]
    assert len(notes) == 1 and notes[0].startswith("model: embedded SmolLM2-135M-Instruct-Q4_1")
    assert "weak at tools" in notes[0] and "note: the built-in model" not in done.stdout
