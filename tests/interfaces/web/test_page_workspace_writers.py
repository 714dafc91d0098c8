"""The memory page's conflict and clean-up actions change shared (workspace) facts only for
an agent ``memory.lifecycle.workspace_writers`` allows, like PATCH and DELETE do.

Every user of a server sees the workspace's facts; before, a user whose agent may not
write them could still resolve their conflicts (superseding the current fact with a
contradicting pending one, or deleting the pending one) and hard-delete the expired ones.
"""

from __future__ import annotations

import time

from pydantic import SecretStr

from shiyi.config.server_settings import ServerUser
from shiyi.config.settings import Settings
from shiyi.memory.scopes import Viewer
from tests.interfaces.server.conftest import LiveFactory
from tests.interfaces.server.two_users import client_for
from tests.interfaces.web.conftest import observe

ALICE = Viewer(user_id="alice")  # a writer as "user:alice" below
USERS = [
    ServerUser(token=SecretStr("token-of-alice"), user_id="alice"),
    ServerUser(token=SecretStr("token-of-bob"), user_id="bob", agent_id="helper"),
]


def test_a_reader_of_workspace_facts_cannot_resolve_or_clean_them_up(
    live: LiveFactory, settings: Settings
) -> None:
    settings.memory.lifecycle.workspace_writers = ["shiyi", "user:alice"]
    server = live(users=USERS)
    memory = server.service.memory
    assert memory is not None
    berlin = observe(memory, "Berlin", key="office in", scope="workspace", viewer=ALICE)
    munich = observe(
        memory, "Munich", key="office in", confidence=0.6, scope="workspace", viewer=ALICE
    )
    assert munich.status == "pending" and munich.conflicts_with == berlin.id
    stale = observe(memory, "Standup moved", kind="mood", scope="workspace", viewer=ALICE)
    assert stale.id in memory.store.expire_facts(time.time() + 30 * 86400.0)

    with client_for(server, "token-of-bob") as bob:
        listed = bob.get("/v1/memory/conflicts").json()["conflicts"]
        assert [c["pending"]["id"] for c in listed] == [munich.id]  # shared: Bob reads them
        assert bob.delete(f"/v1/memory/{berlin.id}").status_code == 400  # already refused
        for keep in ("new", "old"):
            refused = bob.post(f"/v1/memory/conflicts/{munich.id}/resolve", json={"keep": keep})
            assert refused.status_code == 400, refused.text
            assert "workspace_writers" in refused.json()["error"]["message"]
        cleaned = bob.post("/v1/memory/expired/cleanup", json={"ids": [stale.id]})
        assert cleaned.status_code == 200, cleaned.text
        assert cleaned.json() == {"deleted": [], "skipped": [stale.id]}
        assert bob.post("/v1/memory/expired/cleanup").json()["deleted"] == []

    by_id = {f.id: f for f in memory.store.get_facts([berlin.id, munich.id, stale.id])}
    assert by_id[berlin.id].status == "active"
    assert by_id[munich.id].status == "pending"
    assert stale.id in by_id

    with client_for(server, "token-of-alice") as alice:  # a writer still may
        kept = alice.post(f"/v1/memory/conflicts/{munich.id}/resolve", json={"keep": "new"})
        assert kept.status_code == 200, kept.text
        assert kept.json()["superseded"] == berlin.id
        done = alice.post("/v1/memory/expired/cleanup", json={"ids": [stale.id]}).json()
        assert done == {"deleted": [stale.id], "skipped": []}
