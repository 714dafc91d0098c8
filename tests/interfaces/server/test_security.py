"""Exposure check, bearer token, body limit, CORS and JSON errors."""

from __future__ import annotations

import httpx
import pytest
from pydantic import SecretStr

from shiyi.config import Settings
from shiyi.config.hosts import is_loopback, is_loopback_url
from shiyi.errors import ConfigError
from shiyi.interfaces.server import AgentService, create_app
from shiyi.llm.scripted import ScriptedModel
from tests.interfaces.server.conftest import LiveFactory, server_settings
from tests.interfaces.web.conftest import observe


def test_loopback_detection() -> None:
    assert all(is_loopback(h) for h in ("127.0.0.1", "127.8.0.1", "::1", "localhost", "[::1]"))
    assert not any(is_loopback(h) for h in ("0.0.0.0", "::", "10.0.0.1", "example.com", ""))
    assert is_loopback_url("http://127.0.0.1:8080/v1") and is_loopback_url("http://[::1]/v1")
    assert not is_loopback_url("https://api.openai.com/v1")


def test_off_loopback_without_token_refuses_to_start(settings: Settings) -> None:
    exposed = server_settings(settings, host="0.0.0.0")
    service = AgentService(exposed, model=ScriptedModel())
    try:
        with pytest.raises(ConfigError, match="SHIYI_SERVER__TOKEN"):
            create_app(service)
    finally:
        service.close()


def test_token_is_required_everywhere_but_healthz(live: LiveFactory) -> None:
    server = live(host="0.0.0.0", token=SecretStr("s3cret"))
    client = server.client
    assert client.get("/healthz").status_code == 200
    for headers in ({}, {"authorization": "Bearer wrong"}, {"authorization": "Basic s3cret"}):
        response = client.get("/v1/sessions", headers=headers)
        assert response.status_code == 401
        assert response.json()["error"]["code"] == "unauthorized"
    assert client.get("/openapi.json").status_code == 401
    ok = client.get("/v1/sessions", headers={"authorization": "Bearer s3cret"})
    assert ok.status_code == 200


def test_body_limit(live: LiveFactory) -> None:
    server = live(max_body_bytes=2048)
    session = server.session()
    big = {"text": "x" * 5000}
    declared = server.client.post(f"/v1/sessions/{session}/messages", json=big)
    assert declared.status_code == 413
    assert declared.json()["error"]["code"] == "payload_too_large"

    def chunks() -> object:
        yield b'{"text": "'
        for _ in range(10):
            yield b"y" * 1000
        yield b'"}'

    chunked = server.client.post(
        f"/v1/sessions/{session}/messages",
        content=chunks(),  # type: ignore[arg-type]
        headers={"content-type": "application/json"},
    )
    assert chunked.status_code == 413
    assert chunked.json()["error"]["code"] == "payload_too_large"


def test_cors_only_when_configured(live: LiveFactory) -> None:
    plain = live(memory=False)
    preflight = {"origin": "http://ui.test", "access-control-request-method": "POST"}
    assert (
        "access-control-allow-origin"
        not in plain.client.options("/v1/sessions", headers=preflight).headers
    )
    with_cors = live(cors_origins=["http://ui.test"], token=SecretStr("t"))
    response = with_cors.client.options("/v1/sessions", headers=preflight)
    assert response.headers["access-control-allow-origin"] == "http://ui.test"


def test_errors_are_json(live: LiveFactory) -> None:
    client = live().client
    cases = [
        (client.get("/nope"), 404, "not_found"),
        (client.get("/v1/sessions/ses_missing"), 404, "not_found"),
        (client.post("/v1/sessions", json={"title": 5}), 422, "validation_error"),
        (client.post("/v1/sessions", content=b"{not json"), 422, "validation_error"),
        (client.get("/v1/sessions", params={"limit": 0}), 422, "validation_error"),
        (client.put("/v1/sessions"), 405, "method_not_allowed"),
    ]
    for response, status, code in cases:
        assert response.status_code == status, response.text
        assert response.json()["error"]["code"] == code
        assert "Traceback" not in response.text
    # what was wrong, said plainly (it had read "body.1: JSON decode error")
    broken = client.post(
        "/v1/memory", content=b"{not json", headers={"content-type": "application/json"}
    )
    assert broken.json()["error"]["message"].startswith("the body is not valid JSON (")
    assert "at character 1): send a JSON object" in broken.json()["error"]["message"]
    empty = client.post("/v1/memory", headers={"content-type": "application/json"})
    assert empty.json()["error"]["message"] == "the request needs a JSON body", empty.text


def test_unexpected_errors_are_500_without_trace(live: LiveFactory) -> None:
    server = live()

    def boom(limit: int = 50) -> list[object]:
        raise RuntimeError("secret internals")

    server.service.log.list_sessions = boom  # type: ignore[method-assign]
    response = httpx.get(f"{server.url}/v1/sessions")
    assert response.status_code == 500
    assert response.json()["error"]["code"] == "internal"
    assert "secret internals" not in response.text


REBINDING_HOSTS = ("attacker.example", "attacker.example:8765", "10.0.0.7", "0.0.0.0")


@pytest.mark.parametrize("host", REBINDING_HOSTS)
def test_loopback_server_refuses_foreign_host_names(live: LiveFactory, host: str) -> None:
    """DNS rebinding: a page on attacker.example resolved to 127.0.0.1 still says its name."""
    server = live()
    response = server.client.get("/v1/memory/search", params={"q": "x"}, headers={"host": host})
    assert response.status_code == 403
    error = response.json()["error"]
    assert error["code"] == "forbidden_host"
    assert "server.allowed_hosts" in error["message"]
    assert server.client.post("/v1/sessions", json={}, headers={"host": host}).status_code == 403
    assert server.service.log.list_sessions() == []


LOOPBACK_HOSTS = ["localhost", "LOCALHOST:1", "127.0.0.1", "[::1]:8", "a.localhost"]


@pytest.mark.parametrize("host", LOOPBACK_HOSTS)
def test_loopback_names_are_answered(live: LiveFactory, host: str) -> None:
    server = live()
    assert server.client.get("/v1/sessions", headers={"host": host}).status_code == 200


def test_allowed_hosts_admit_a_proxy_name(live: LiveFactory) -> None:
    server = live(allowed_hosts=["shiyi.lan"])
    assert server.client.get("/v1/sessions", headers={"host": "shiyi.lan:80"}).status_code == 200
    assert server.client.get("/v1/sessions", headers={"host": "other.lan"}).status_code == 403


def test_exposed_server_with_token_answers_its_public_names(live: LiveFactory) -> None:
    server = live(host="0.0.0.0", token=SecretStr("t"))
    headers = {"host": "box.example.org", "authorization": "Bearer t"}
    assert server.client.get("/v1/sessions", headers=headers).status_code == 200


FOREIGN_ORIGINS = ("http://evil.example", "null", "http://127.0.0.1:1")


@pytest.mark.parametrize("origin", FOREIGN_ORIGINS)
def test_cross_origin_writes_are_refused(live: LiveFactory, origin: str) -> None:
    """A page on another site may send a POST (a form, or no-cors fetch): it must not land."""
    server = live()
    session = server.session()
    foreign = {"origin": origin}
    attempts = [
        server.client.post("/v1/sessions", json={"title": "evil"}, headers=foreign),
        server.client.post("/v1/memory/expired/cleanup", headers=foreign),
        server.client.post("/v1/memory", json={"text": "evil fact"}, headers=foreign),
        server.client.delete(f"/v1/sessions/{session}", headers=foreign),
    ]
    for response in attempts:
        assert response.status_code == 403, response.text
        assert response.json()["error"]["code"] == "cross_origin"
        assert "server.cors_origins" in response.json()["error"]["message"]
    assert [s.id for s in server.service.log.list_sessions()] == [session]
    # Reading is not a change, and a cross-origin page cannot read the answer without CORS.
    assert server.client.get("/v1/sessions", headers=foreign).status_code == 200


def test_same_origin_and_programs_may_write(live: LiveFactory) -> None:
    server = live()
    own_origin = server.url  # the memory page served by this server
    page = server.client.post("/v1/sessions", json={}, headers={"origin": own_origin})
    assert page.status_code == 201
    assert server.client.post("/v1/sessions", json={}).status_code == 201  # CLI, curl


def test_cors_origins_may_write(live: LiveFactory) -> None:
    server = live(cors_origins=["http://ui.test"])
    response = server.client.post("/v1/sessions", json={}, headers={"origin": "http://ui.test/"})
    assert response.status_code == 201


IMAGE_FROM_ANOTHER_SITE = {
    "sec-fetch-site": "cross-site",
    "sec-fetch-mode": "no-cors",
    "sec-fetch-dest": "image",
}
"""What a browser sends for ``<img src="http://127.0.0.1:8765/v1/memory/search?q=...">`` on
another site's page: no ``Origin`` (a GET), but the fetch metadata says where it came from."""


def test_a_page_on_another_site_cannot_count_retrievals_with_gets(live: LiveFactory) -> None:
    """A search counts as a retrieval: three of them promote a short-term fact to long term
    (memory.lifecycle.promote_after) and raise its rank.  A page the user visits could do it
    with image tags against a token-less loopback server, so cross-site fetches are
    refused whatever their method; the page's own files stay reachable by a link."""
    server = live()
    assert server.service.memory is not None
    fact = observe(server.service.memory, "Prefers the quokka mug", kind="preference")
    assert fact.tier == "short"
    for site in ("cross-site", "same-site"):
        headers = {**IMAGE_FROM_ANOTHER_SITE, "sec-fetch-site": site}
        for _ in range(3):
            response = server.client.get(
                "/v1/memory/search", params={"q": "quokka", "mode": "keyword"}, headers=headers
            )
            assert response.status_code == 403, response.text
            assert response.json()["error"]["code"] == "cross_site"
    (stored,) = server.service.memory.store.get_facts([fact.id])
    assert stored.tier == "short" and stored.access_count == 0
    link = {"sec-fetch-site": "cross-site", "sec-fetch-mode": "navigate"}
    assert server.client.get("/", headers=link).status_code == 200
    assert server.client.get("/ui/app.js", headers=link).status_code == 200
    # The page itself, the address bar and programs (no fetch metadata) still read, and
    # their three searches are the retrievals that promote the fact.
    for own in ({"sec-fetch-site": "same-origin"}, {"sec-fetch-site": "none"}, {}):
        found = server.client.get(
            "/v1/memory/search", params={"q": "quokka", "mode": "keyword"}, headers=own
        )
        assert found.status_code == 200, found.text
    (stored,) = server.service.memory.store.get_facts([fact.id])
    assert stored.tier == "long" and stored.access_count == 3


def test_cors_origins_may_read_across_sites(live: LiveFactory) -> None:
    server = live(cors_origins=["http://ui.test"])
    headers = {"sec-fetch-site": "cross-site", "sec-fetch-mode": "cors", "origin": "http://ui.test"}
    assert server.client.get("/v1/sessions", headers=headers).status_code == 200


def test_a_blank_message_starts_no_run(live: LiveFactory) -> None:
    """It had run the model on "   " (shiyi run and POST /v1/memory refuse blank text)."""
    server = live()  # no script: a run would fail loudly
    session = server.client.post("/v1/sessions", json={}).json()["id"]
    blank = server.client.post(
        f"/v1/sessions/{session}/messages", params={"stream": "false"}, json={"text": "  \n "}
    )
    assert blank.status_code == 422 and "text" in blank.json()["error"]["message"]
    assert server.client.get(f"/v1/sessions/{session}").json()["messages"] == []
