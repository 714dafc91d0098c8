"""The remote adapter against a real server: the same operations, the same answers as the
local one, as the token's user."""

from __future__ import annotations

import pytest

from shiyi.api.import_schemas import ImportIn, ImportTurnIn
from shiyi.api.schemas import FactOut
from shiyi.client import Client
from shiyi.client.memory_ops import RemoteMemory
from shiyi.errors import Conflict, NotFound
from shiyi.memory.operations import MemoryOperations
from shiyi.memory.operations.local import LocalMemory
from tests.interfaces.server.conftest import LiveFactory
from tests.interfaces.server.two_users import A_TOKEN, B_TOKEN, client_for, users


def test_every_operation_answers_like_the_local_adapter(live: LiveFactory) -> None:
    server = live()
    with Client(server.url) as client:
        remote: MemoryOperations = RemoteMemory(client)
        assert server.service.memory is not None
        local: MemoryOperations = LocalMemory(server.service.memory)

        first = remote.add("Paris", key="lives in")
        assert first.outcome == "new" and first.replaces == []
        stored = FactOut(**first.model_dump(exclude={"outcome", "replaces"}))
        assert local.get(first.id) == remote.get(first.id) == stored
        second = remote.add("lives in: Lisbon", key="lives in")
        assert second.outcome == "replaced"
        assert [(r.id, r.value) for r in second.replaces] == [(first.id, "Paris")]
        again = remote.add("Lisbon", key="lives in")
        assert (again.outcome, again.id) == ("confirmed", second.id)
        assert [f.status for f in remote.history(key="lives in")] == ["superseded", "active"]
        assert remote.history(key="lives in") == local.history(key="lives in")
        edited = remote.update(second.id, value="Porto")
        assert edited.value == "Porto" and local.get(second.id) == edited
        assert remote.list_facts() == local.list_facts()
        superseded = remote.list_facts(statuses=["superseded"]).facts  # the edit kept "Lisbon"
        assert [f.value for f in superseded] == ["Lisbon", "Paris"]

        turns = [
            ImportTurnIn(id="a", run="d1", ts=1_600_000_000.0, role="ann", content="Miso naps"),
            ImportTurnIn(id="b", run="d1", ts=1_700_000_000.0, role="ann", content="Miso eats"),
        ]
        assert remote.import_turns(ImportIn(session_id="c1", turns=turns)).queued == 2
        remote.run_jobs(30)
        window = {"mode": "keyword", "since": 1_650_000_000.0}
        late = remote.search("Miso", **window)  # type: ignore[arg-type]
        assert [h.ts for h in late] == [1_700_000_000.0]
        assert late == local.search("Miso", **window)  # type: ignore[arg-type]
        assert remote.read_as("What does Mmiso eat?") == {"mmiso": "miso"}
        assert local.read_as("What does Mmiso eat?") == {"mmiso": "miso"}
        assert remote.read_as("What does Miso eat?") == {}
        anchor = late[0].anchor
        assert anchor is not None
        assert remote.expand(anchor, 1) == local.expand(anchor, 1)

        planned = remote.forget("query", "naps", limit=1, dry_run=True)
        assert planned.forgotten is None and planned.events == 1
        assert remote.forget("query", "naps", limit=1).forgotten is not None
        assert remote.export() == local.export()
        assert remote.delete(first.id).deleted == 1
        with pytest.raises(NotFound):
            remote.get(first.id)
        assert remote.forget_ids([second.id, "missing"]).deleted == 2  # with its old words
        assert remote.health().facts == local.health().facts == 0
        assert remote.jobs().summary == local.jobs().summary
        assert remote.entities() == local.entities() == []


def test_a_second_user_reaches_none_of_the_firsts_memories(live: LiveFactory) -> None:
    server = live(users=users())
    with Client(server.url, token=A_TOKEN) as a, Client(server.url, token=B_TOKEN) as b:
        alice, bob = RemoteMemory(a), RemoteMemory(b)
        fact = alice.add("my locker code is 4711", key="locker code")
        with pytest.raises(NotFound):
            bob.get(fact.id)
        with pytest.raises(NotFound):
            bob.update(fact.id, value="0")
        with pytest.raises(NotFound):
            bob.delete(fact.id)
        with pytest.raises(NotFound):
            bob.forget("query", "locker")
        assert bob.search("locker code 4711", mode="keyword") == []
        # a slip is read as the asking user's words only: alice's "locker" is not bob's
        assert alice.read_as("my lockerr code") == {"lockerr": "locker"}
        assert bob.read_as("my lockerr code") == {}
        with client_for(server, B_TOKEN) as raw:
            searched = raw.get("/v1/memory/search", params={"q": "my lockerr code"}).json()
        assert searched["hits"] == [] and searched["read_as"] == {}
        with client_for(server, A_TOKEN) as raw:
            asked = {"q": "my lockerr code", "mode": "keyword"}
            searched = raw.get("/v1/memory/search", params=asked).json()
        assert searched["read_as"] == {"lockerr": "locker"}
        assert [hit["id"] for hit in searched["hits"]] == [fact.id]
        assert bob.list_facts().facts == [] and bob.history(key="locker code") == []
        with pytest.raises(Conflict):
            bob.retry_jobs()
        assert alice.get(fact.id).value == fact.value == "my locker code is 4711"
