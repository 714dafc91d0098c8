"""Finding a model server already running here: real HTTP servers on loopback ports."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import pytest

from shiyi.config import load_settings
from shiyi.llm.discovery import choose, find_servers, printable
from shiyi.llm.first_model import pick_main_model
from tests.support.model_servers import (
    Route,
    RouteServer,
    SilentPort,
    closed_port,
    non_loopback_address,
    ollama_tags,
    openai_models,
)

BUDGET = 2.0  # generous: these tests assert what is found, never how fast


def detect_on(monkeypatch: pytest.MonkeyPatch, *ports: int) -> None:
    monkeypatch.setenv("SHIYI_MODEL_SOURCES__DETECT", "true")
    monkeypatch.setenv("SHIYI_MODEL_SOURCES__DETECT_PORTS", json.dumps(list(ports)))
    monkeypatch.setenv("SHIYI_MODEL_SOURCES__DETECT_TIMEOUT", str(BUDGET))


def ollama(*names: str) -> RouteServer:
    tags = ollama_tags(*names)
    return RouteServer({"/api/tags": Route(body=tags), "/v1/models": Route(body={})})


def test_ollama_chat_model_is_chosen_over_embedding_and_base_models(
    monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    names = ("nomic-embed-text:latest", "llama3:text", "qwen2.5:3b", "qwen2.5:3b-instruct")
    with ollama(*names) as server:
        detect_on(monkeypatch, closed_port(), server.port)
        chosen = pick_main_model(load_settings(cwd=workspace))

    main = chosen.settings.model_role("main")
    assert (main.provider, main.model) == ("openai_compat", "qwen2.5:3b-instruct")
    assert main.base_url == f"http://127.0.0.1:{server.port}/v1"
    assert chosen.settings.model_role("fast") == main  # one server plays both roles
    assert chosen.note == (
        f"model: qwen2.5:3b-instruct via Ollama at 127.0.0.1:{server.port} "
        "(found running; set models.main to choose)"
    )
    assert server.asked == ["/api/tags"]


def test_ollama_bert_family_models_are_never_chosen(workspace: Path) -> None:
    tags = ollama_tags("mxbai-large:latest", family="bert")
    with RouteServer({"/api/tags": Route(body=tags)}) as server:
        found = find_servers([server.port], BUDGET)
    assert [(s.kind, s.models) for s in found] == [("Ollama", ())]


def test_openai_compatible_server_is_named_by_its_owner(
    monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    listing = openai_models(
        "text-embedding-nomic-embed-text-v1.5", "SmolLM2-1.7B", owned_by="llamacpp"
    )
    with RouteServer({"/v1/models": Route(body=listing)}) as server:
        detect_on(monkeypatch, server.port)
        chosen = pick_main_model(load_settings(cwd=workspace))
    assert chosen.settings.model_role("main").model == "SmolLM2-1.7B"
    assert chosen.note is not None and "SmolLM2-1.7B via llama-server at 127.0.0.1:" in chosen.note


def test_the_first_port_listing_a_chat_model_wins(workspace: Path) -> None:
    only_embeddings = RouteServer({"/v1/models": Route(body=openai_models("bge-m3"))})
    first = RouteServer({"/v1/models": Route(body=openai_models("mistral-7b-instruct"))})
    second = ollama("qwen2.5:7b")
    with only_embeddings, first, second:
        ports = [only_embeddings.port, first.port, second.port]
        choice = choose(find_servers(ports, BUDGET))
    assert choice is not None
    assert (choice.server.port, choice.model) == (first.port, "mistral-7b-instruct")


def test_a_port_that_never_answers_does_not_hide_the_others(workspace: Path) -> None:
    with SilentPort() as silent, ollama("phi3:mini") as server:
        found = find_servers([silent.port, server.port], 1.0)
    assert [(s.port, s.models) for s in found] == [(server.port, ("phi3:mini",))]


def test_nothing_listening_falls_back_to_the_embedded_model_with_a_note(
    monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    ports = (closed_port(), closed_port())
    detect_on(monkeypatch, *ports)
    chosen = pick_main_model(load_settings(cwd=workspace))
    assert chosen.settings.model_role("main").provider == "local"
    assert chosen.note is not None and "\n" not in chosen.note
    assert chosen.note.startswith("model: embedded SmolLM2-135M-Instruct-Q4_1 (no model server")
    assert f"ports {ports[0]}, {ports[1]}" in chosen.note
    assert "weak at tools" in chosen.note


def test_configured_model_wins_and_nothing_is_asked(
    monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    (workspace / "shiyi.yaml").write_text("models:\n  main:\n    provider: local\n")
    with ollama("qwen2.5:3b") as server:
        detect_on(monkeypatch, server.port)
        settings = load_settings(cwd=workspace)
        chosen = pick_main_model(settings)
    assert chosen.note is None and chosen.settings is settings
    assert server.asked == []


def test_detection_off_uses_the_embedded_model_and_asks_nothing(
    monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    with ollama("qwen2.5:3b") as server:
        detect_on(monkeypatch, server.port)
        monkeypatch.setenv("SHIYI_MODEL_SOURCES__DETECT", "false")
        chosen = pick_main_model(load_settings(cwd=workspace))
    assert chosen.settings.model_role("main").provider == "local"
    assert chosen.note is not None and "model_sources.detect is off" in chosen.note
    assert server.asked == []


def test_a_redirect_to_another_host_is_not_followed(workspace: Path) -> None:
    elsewhere = non_loopback_address()
    if elsewhere is None:
        pytest.skip("this machine has no non-loopback IPv4 address to redirect to")
    lure = {"/v1/models": Route(body=openai_models("lure-7b-instruct"))}
    with RouteServer(lure, host=elsewhere) as remote:
        target = f"http://{elsewhere}:{remote.port}"
        moved = {
            "/api/tags": Route(302, headers={"Location": f"{target}/api/tags"}),
            "/v1/models": Route(307, headers={"Location": f"{target}/v1/models"}),
        }
        with RouteServer(moved) as local:
            found = find_servers([local.port], BUDGET)
        assert found == []
        assert remote.asked == []
        # The lure was there to be found by a client that follows redirects.
        with urllib.request.urlopen(f"{target}/v1/models", timeout=BUDGET) as answer:
            assert b"lure-7b-instruct" in answer.read()


def test_hostile_model_names_are_dropped_and_never_printed(
    monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    names = ("\x1b]0;pwned\x07evil", "x" * 5000, "a\u202eb-instruct", "tiny:1b\r\nline", "ok:1b")
    with ollama(*names) as server:
        detect_on(monkeypatch, server.port)
        chosen = pick_main_model(load_settings(cwd=workspace))
    assert chosen.settings.model_role("main").model == "ok:1b"
    assert chosen.note is not None and chosen.note.isprintable()


def test_printable_cleans_and_caps() -> None:
    assert printable("a\x1b[31mb\u202ec\td") == "a?[31mb?c?d"
    shown = printable("m" * 500)
    assert len(shown) == 80 and shown.endswith("…")


def test_a_configured_fast_model_is_kept_when_the_main_one_is_found(
    monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    (workspace / "shiyi.yaml").write_text("models:\n  fast:\n    provider: scripted\n")
    with ollama("qwen2.5:3b") as server:
        detect_on(monkeypatch, server.port)
        chosen = pick_main_model(load_settings(cwd=workspace))
    assert chosen.settings.model_role("main").model == "qwen2.5:3b"
    assert chosen.settings.model_role("fast").provider == "scripted"
