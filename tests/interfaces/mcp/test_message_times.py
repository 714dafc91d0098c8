"""When each message of an ``add_memory`` conversation was said, given some times or none."""

from __future__ import annotations

import time

import pytest

from shiyi.interfaces.mcp.tools import ChatMessage, _conversation


def times(*said: str | None) -> list[float]:
    part = _conversation([ChatMessage(role="user", content="hi", time=t) for t in said])
    return [turn.ts for turn in part.turns]


def test_an_untimed_reply_follows_the_timed_message_before_it() -> None:
    # it had been stamped "now": a reply to a message from 2023 remembered as said today
    first, reply = times("2023-05-07T14:02:00Z", None)
    assert reply == pytest.approx(first + 0.001)


def test_untimed_messages_before_the_first_timed_one_come_just_before_it() -> None:
    opening, second, timed = times(None, None, "2023-05-07T14:02:00Z")
    assert opening < second < timed and timed - opening < 0.01


def test_with_no_times_the_messages_are_now_in_order() -> None:
    before = time.time()
    said = times(None, None, None)
    assert said == sorted(said) and len(set(said)) == 3 and said[0] >= before
