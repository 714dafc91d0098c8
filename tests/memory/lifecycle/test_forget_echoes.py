"""A forget takes the forgetting user's echoes along even when another user holds many more
echoes on the same words: the search for them reads only the forgetting user's turns."""

from __future__ import annotations

from dataclasses import replace

from shiyi.memory.lifecycle.forget_echoes import POOL, echoes_of
from shiyi.memory.protocol import MemoryStore
from shiyi.memory.scopes import Viewer
from shiyi.memory.text.echoes import MEMORY_TOOL
from tests.support.records import turn

SECRET = "my locker code is 4417 at the gym"


def test_the_forgetting_users_echo_is_found_under_anothers_many(store: MemoryStore) -> None:
    said = turn(0, SECRET, user_id="ana")
    result = "query_memory -> <memory> {} </memory>"
    echo = replace(
        turn(1, result.format(f"{SECRET}; the gym opens at six on weekdays"), user_id="ana"),
        role="tool",
        segment_type="tool_result",
        derived=MEMORY_TOOL,
    )
    # bo said the same and searched it twice as often as the search reads (shorter results:
    # each ranks above ana's)
    crowd = [
        replace(echo, id=f"bo-{n}", user_id="bo", ts=echo.ts + n + 1, content=result.format(SECRET))
        for n in range(2 * POOL)
    ]
    store.add_events([said, echo, *crowd])
    everyone = echoes_of(store, [SECRET], {said.id})
    assert echo.id not in everyone  # bo's newer echoes take every place
    assert echoes_of(store, [SECRET], {said.id}, Viewer("ana").owners()) == [echo.id]
