"""``shiyi model pull | list | use`` through the real CLI, against loopback servers only."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from shiyi.llm.local.model import default_gguf_path
from tests.interfaces.cli.conftest import Cli
from tests.support.model_servers import FileServer, Route, RouteServer, Served, ollama_tags


@pytest.fixture
def hub() -> Iterator[tuple[FileServer, str]]:
    data = default_gguf_path().read_bytes()
    sha = hashlib.sha256(data).hexdigest()
    files = {"/org/repo/resolve/main/tiny.gguf": Served(data, linked_etag=sha)}
    with FileServer(files) as server:
        yield server, sha


def user_config(cli: Cli) -> dict[str, object]:
    path = Path(cli.env["XDG_CONFIG_HOME"]) / "shiyi" / "shiyi.yaml"
    loaded: dict[str, object] = yaml.safe_load(path.read_text(encoding="utf-8"))
    return loaded


def test_pull_then_use_then_list(cli: Cli, hub: tuple[FileServer, str]) -> None:
    server, sha = hub
    cli.env["SHIYI_MODEL_SOURCES__HUB_URL"] = server.base_url

    pulled = cli.run("model", "pull", "org/repo/tiny.gguf")

    assert pulled.returncode == 0, pulled.stderr
    path = Path(cli.env["SHIYI_HOME"]) / "models" / "tiny.gguf"
    assert f"saved {path}" in pulled.stdout
    assert f"sha256 {sha} (matches the hub's checksum)" in pulled.stdout
    assert "MB/s" in pulled.stderr  # the progress line
    assert hashlib.sha256(path.read_bytes()).hexdigest() == sha

    chosen = cli.run("model", "use", "tiny")
    assert chosen.returncode == 0, chosen.stderr
    assert user_config(cli) == {
        "models": {"main": {"provider": "local", "model": "tiny", "model_path": str(path)}}
    }

    listed = cli.run("model", "list")
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert [line for line in lines if line.startswith("*")] == [
        f"* tiny.gguf  (pulled, 0.10 GB: {path})"
    ]
    assert any(line.startswith("  SmolLM2-135M-Instruct-Q4_1  (packaged") for line in lines)


def test_a_pull_with_the_wrong_checksum_fails_and_keeps_the_file_aside(
    cli: Cli, hub: tuple[FileServer, str]
) -> None:
    server, _ = hub
    cli.env["SHIYI_MODEL_SOURCES__HUB_URL"] = server.base_url

    done = cli.run("model", "pull", "org/repo/tiny.gguf", "--sha256", "0" * 64)

    assert done.returncode == 1
    assert "differs from --sha256" in done.stderr and "tiny.gguf.rejected" in done.stderr
    assert not (Path(cli.env["SHIYI_HOME"]) / "models" / "tiny.gguf").exists()


def test_use_a_model_of_a_server_running_here(cli: Cli) -> None:
    tags = {"/api/tags": Route(body=ollama_tags("qwen2.5:1.5b"))}
    with RouteServer(tags) as server:
        cli.env["SHIYI_MODEL_SOURCES__DETECT_PORTS"] = json.dumps([server.port])
        done = cli.run("model", "use", "qwen2.5:1.5b")
        listed = cli.run("model", "list")

    assert done.returncode == 0, done.stderr
    main = {"provider": "openai_compat", "base_url": f"http://127.0.0.1:{server.port}/v1"}
    assert user_config(cli) == {"models": {"main": {**main, "model": "qwen2.5:1.5b"}}}
    assert f"* qwen2.5:1.5b  (Ollama at 127.0.0.1:{server.port})" in listed.stdout


def test_use_an_unknown_name_says_what_is_known(cli: Cli) -> None:
    done = cli.run("model", "use", "no-such-model")
    assert done.returncode == 2
    assert "no model named 'no-such-model' here. Known: SmolLM2-135M-Instruct-Q4_1" in done.stderr
    assert not (Path(cli.env["XDG_CONFIG_HOME"]) / "shiyi" / "shiyi.yaml").exists()


def test_use_keeps_the_previous_config_and_other_settings(cli: Cli) -> None:
    cli.config("memory:\n  enabled: false\nmodels:\n  main:\n    provider: scripted\n")
    done = cli.run("model", "use", "default")
    assert done.returncode == 0, done.stderr
    written = yaml.safe_load((cli.workspace / "shiyi.yaml").read_text(encoding="utf-8"))
    assert written == {
        "memory": {"enabled": False},
        "models": {"main": {"provider": "local", "model": "SmolLM2-135M-Instruct-Q4_1"}},
    }
    assert (cli.workspace / "shiyi.yaml.bak").read_text().endswith("provider: scripted\n")
