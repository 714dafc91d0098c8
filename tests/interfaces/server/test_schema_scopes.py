"""Schemathesis over every operation of the live server's schema, as each of two users: no
response to one user ever holds the other user's marker.

Generated ids almost never name a stored record, so the strategy also puts the other user's
real ids (session, run, fact, turn, anchor) and marker into path and query parameters (an
error message quoting a value it was sent is no leak)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.interfaces.server.conftest import Live, LiveFactory
from tests.interfaces.server.two_users import (
    A_TOKEN,
    B_TOKEN,
    MARK_A,
    MARK_B,
    brain,
    client_for,
    remembered_event,
    users,
)


@dataclass
class Footprint:
    """What one user planted: the marker and every id that reaches it."""

    token: str
    marker: str
    ids: list[str]

    @property
    def headers(self) -> dict[str, str]:
        return {"authorization": f"Bearer {self.token}"}


def plant(server: Live, client: httpx.Client, token: str, marker: str) -> Footprint:
    """A session (title, message, run goal), a fact and a remembered turn, all with ``marker``."""
    session = client.post("/v1/sessions", json={"title": f"about {marker}"}).json()["id"]
    sent = client.post(
        f"/v1/sessions/{session}/messages", json={"text": f"note {marker}"}, params={"stream": 0}
    )
    assert sent.status_code == 200, sent.text
    run = client.get(f"/v1/sessions/{session}").json()["runs"][0]["run_id"]
    fact = client.post("/v1/memory", json={"text": f"the code word is {marker}"}).json()["id"]
    event = remembered_event(client, marker)
    turn = client.get(f"/v1/memory/{event}").json()
    anchor = f"{turn['run_id']}:{turn['iteration']}:{turn['segment']}"
    return Footprint(token, marker, [session, run, fact, event, anchor, marker])


@pytest.fixture
def two_users(live: LiveFactory) -> Iterator[tuple[Live, Footprint, Footprint]]:
    server = live([brain], repeat_last=True, users=users())
    with ExitStack() as stack:
        a = stack.enter_context(client_for(server, A_TOKEN))
        b = stack.enter_context(client_for(server, B_TOKEN))
        yield server, plant(server, a, A_TOKEN, MARK_A), plant(server, b, B_TOKEN, MARK_B)


def aim_at(case: schemathesis.Case, theirs: list[str], data: st.DataObject) -> None:
    """Put the other user's ids and marker into some of the case's string parameters."""
    for params in (case.path_parameters, case.query):
        for name, value in list((params or {}).items()):
            if isinstance(value, str) and data.draw(st.booleans(), label=f"aim {name}"):
                params[name] = data.draw(st.sampled_from(theirs), label=name)  # type: ignore[index]


def run_as(server: Live, caller: Footprint, other: Footprint, examples: int) -> int:
    """Every operation as ``caller``; returns how many operations ran."""
    schema = schemathesis.openapi.from_url(f"{server.url}/openapi.json", headers=caller.headers)
    operations = 0
    for result in schema.get_all_operations():
        operation = result.ok()

        @given(case=operation.as_strategy(), data=st.data())
        @settings(
            max_examples=examples,
            deadline=None,
            suppress_health_check=list(HealthCheck),
            database=None,
        )
        def check(case: schemathesis.Case, data: st.DataObject) -> None:
            aim_at(case, other.ids, data)
            response = case.call(base_url=server.url, headers=caller.headers, timeout=20)
            assert response.status_code < 500, (case.method, case.formatted_path, response.text)
            # An error message quotes the id it was given ('...'): that is no leak.
            shown = response.text.replace(repr(other.marker), "")
            assert other.marker not in shown, (
                f"{case.method} {case.formatted_path} {case.query!r} showed the other "
                f"user's marker: {response.text[:500]}"
            )

        check()
        operations += 1
    return operations


def test_no_response_holds_the_other_users_marker(
    two_users: tuple[Live, Footprint, Footprint],
) -> None:
    server, a, b = two_users
    assert run_as(server, b, a, examples=25) >= 12
    with client_for(server, a.token) as client:  # B's deletes did not reach A's records
        session, run, fact, event = a.ids[:4]
        for path in (f"/v1/sessions/{session}", f"/v1/runs/{run}", f"/v1/memory/{fact}"):
            assert client.get(path).status_code == 200, path
        assert MARK_A in client.get(f"/v1/memory/{event}").text
    # A's own forgets may take A's records (a random query hits them): checked before this.
    assert run_as(server, a, b, examples=10) >= 12
