"""Owner tags: a viewer's searches filter by them, so they must say exactly what
:meth:`Viewer.sees` says, for every scope, and no choice of ids may make two owners' equal."""

from __future__ import annotations

import itertools

from shiyi.memory.models import EventRecord, FactRecord, Scope
from shiyi.memory.scopes import NOBODY, Viewer, owner_of, owner_tag, parse_owner

NAMES = ["ana", "bo", 'a"b', "x\x1fy", "x", "y\x1f", "用户", ""]
SCOPES: list[Scope] = ["user", "agent", "workspace"]


def viewers() -> list[Viewer]:
    return [Viewer(u, a, w) for u, a, w in itertools.product(NAMES[:5], NAMES[2:6], ["w1", "w2"])]


def records() -> list[EventRecord | FactRecord]:
    found: list[EventRecord | FactRecord] = []
    for user, agent in itertools.product(NAMES, NAMES):
        found.append(
            EventRecord("e", "s", "r", 0.0, "user", "hi", "message", user_id=user, agent_id=agent)
        )
        for scope, workspace in itertools.product(SCOPES, ["w1", "w2"]):
            found.append(
                FactRecord(
                    "f", "k", "v", scope=scope, user_id=user, agent_id=agent, workspace_id=workspace
                )
            )
    return found


def test_a_viewer_holds_a_records_tag_exactly_when_it_sees_the_record() -> None:
    every = records()
    for viewer in viewers():
        owners = viewer.owners()
        assert [owner_of(r) in owners for r in every] == [viewer.sees(r) for r in every]


def test_ids_with_separators_never_make_two_owners_tags_equal() -> None:
    # "x\x1fy" + "" against "x" + "\x1fy"... joined by a separator these would collide
    pairs = list(itertools.product(NAMES, NAMES))
    tags = {owner_tag("agent", user, agent) for user, agent in pairs}
    assert len(tags) == len(pairs)
    assert all(parse_owner(owner_tag("agent", u, a)) == ["agent", u, a] for u, a in pairs)


def test_nobody_is_held_by_no_viewer_and_reads_as_no_owner() -> None:
    assert all(NOBODY not in viewer.owners() for viewer in viewers())
    assert parse_owner(NOBODY) == []
    assert parse_owner("not json") == []
    assert parse_owner('{"user": "ana"}') == []
