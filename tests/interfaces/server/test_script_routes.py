"""``/v1/scripts`` on a real server: a served agent saves a script (but may not run one
without bash), the API lists, shows and deletes it, and the delete forgets its memory."""

from __future__ import annotations

from pathlib import Path

from shiyi.config import Settings
from shiyi.llm.scripted import call, reply
from tests.interfaces.server.conftest import LiveFactory, stream_events

DEPLOY = {
    "action": "save",
    "name": "deploy",
    "description": "Deploy the site to an environment",
    "language": "bash",
    "body": 'echo "deploying $1" > deployed.txt\n',
    "parameters": [{"name": "env", "description": "staging or production"}],
}


def tool_outputs(events: list[tuple[str, dict[str, object]]]) -> list[dict[str, object]]:
    return [data for kind, data in events if kind == "tool_result"]


def test_served_agent_saves_and_the_api_lists_shows_and_deletes(
    live: LiveFactory, settings: Settings, workspace: Path
) -> None:
    server = live(
        [
            reply("", call("scripts", DEPLOY)),
            reply("", call("scripts", {"action": "run", "name": "deploy", "args": ["prod"]})),
            reply("saved it"),
        ]
    )
    saved, ran = tool_outputs(stream_events(server.client, server.session(), "save it"))
    assert saved["ok"] is True
    assert ran["ok"] is False  # bash is not in server.tools, so neither is running scripts
    assert "not allowed here" in server.model.requests[2].last.content
    assert not (workspace / "deployed.txt").exists()

    listed = server.client.get("/v1/scripts").json()["scripts"]
    assert [(s["name"], s["usage"], s["saved_by"]) for s in listed] == [
        ("deploy", "deploy ENV", "default/shiyi")
    ]
    assert "body" not in listed[0]
    shown = server.client.get("/v1/scripts/deploy").json()
    assert shown["body"] == DEPLOY["body"] and shown["language"] == "bash"
    assert [
        s["name"]
        for s in server.client.get("/v1/scripts", params={"q": "deploying"}).json()["scripts"]
    ] == ["deploy"]
    assert server.client.get("/v1/scripts", params={"q": "zebra"}).json() == {"scripts": []}

    def procedures() -> list[str]:
        found = server.client.get(
            "/v1/memory/search", params={"q": "how do we deploy", "mode": "keyword"}
        )
        return [h["text"] for h in found.json()["hits"] if "run script deploy" in h["text"]]

    assert len(procedures()) == 1
    deleted = server.client.delete("/v1/scripts/deploy")
    assert deleted.status_code == 200, deleted.text
    assert deleted.json() == {"name": "deploy", "forgotten": 1}
    assert procedures() == []
    assert not (settings.data_dir / "scripts" / "deploy.sh").exists()
    missing = server.client.get("/v1/scripts/deploy")
    assert missing.status_code == 404
    assert "no saved script is called 'deploy'" in missing.json()["error"]["message"]


def test_a_name_that_is_not_a_script_name_is_refused(live: LiveFactory) -> None:
    server = live()
    for path in ("/v1/scripts/..%2Fshiyi", "/v1/scripts/Deploy", "/v1/scripts/.hidden"):
        for method in ("GET", "DELETE"):
            response = server.client.request(method, path)
            assert response.status_code in (404, 422), (method, path, response.text)
            assert response.status_code != 200


def test_a_served_agent_with_bash_runs_scripts(live: LiveFactory, workspace: Path) -> None:
    server = live(
        [
            reply("", call("scripts", DEPLOY)),
            reply("", call("scripts", {"action": "run", "name": "deploy", "args": ["prod"]})),
            reply("deployed"),
        ],
        tools=["scripts", "bash"],
    )
    saved, ran = tool_outputs(stream_events(server.client, server.session(), "deploy"))
    assert saved["ok"] is True and ran["ok"] is True
    assert (workspace / "deployed.txt").read_text() == "deploying prod\n"
