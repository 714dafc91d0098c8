"""``AsyncMemory``: the same verbs, awaited."""

from __future__ import annotations

import asyncio

from shiyi.compat.mem0 import AsyncMemory
from tests.compat.mem0.conftest import QUICKSTART, mem0_config


def test_async_quickstart(memory_store: str) -> None:
    async def flow() -> None:
        m = await AsyncMemory.from_config(mem0_config(memory_store))
        async with m:
            added = await m.add(QUICKSTART, user_id="alice")
            other = await m.add("I love thrillers", user_id="bob")
            found = await m.search("What movies do I love?", user_id="alice", limit=2)
            assert any("love sci-fi" in r["memory"] for r in found["results"])
            assert other["results"][0]["id"] not in {r["id"] for r in found["results"]}
            memory_id = added["results"][2]["id"]
            await m.update(memory_id, "I love documentaries")
            got = await m.get(memory_id)
            assert got is not None and got["memory"] == "I love documentaries"
            assert [h["event"] for h in await m.history(memory_id)] == ["ADD", "UPDATE"]
            await m.delete(memory_id)
            assert await m.get(memory_id) is None
            assert len((await m.get_all(user_id="alice"))["results"]) == 3
            await m.delete_all(user_id="alice")
            assert (await m.get_all(user_id="alice"))["results"] == []

    asyncio.run(flow())
