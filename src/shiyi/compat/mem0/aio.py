"""mem0's ``AsyncMemory``: the same verbs, awaitable (each runs in a worker thread)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from shiyi.compat.mem0.memory import Memory
from shiyi.config import Settings
from shiyi.llm.protocol import ChatModel
from shiyi.memory.service import Memory as NativeMemory


class AsyncMemory:
    """:class:`~shiyi.compat.mem0.memory.Memory` with ``async`` verbs; calls are
    serialised by the one memory under it, so the event loop never waits on storage."""

    def __init__(
        self,
        config: Mapping[str, Any] | None = None,
        *,
        settings: Settings | None = None,
        memory: NativeMemory | None = None,
        fast: ChatModel | None = None,
    ) -> None:
        self.sync = Memory(config, settings=settings, memory=memory, fast=fast)

    @classmethod
    async def from_config(cls, config: Mapping[str, Any]) -> AsyncMemory:
        return await asyncio.to_thread(cls, config)

    async def add(self, messages: object, **options: Any) -> dict[str, Any]:
        return await asyncio.to_thread(self.sync.add, messages, **options)

    async def search(self, query: str, **options: Any) -> dict[str, Any]:
        return await asyncio.to_thread(self.sync.search, query, **options)

    async def get(self, memory_id: str) -> dict[str, Any] | None:
        return await asyncio.to_thread(self.sync.get, memory_id)

    async def get_all(self, **options: Any) -> dict[str, Any]:
        return await asyncio.to_thread(self.sync.get_all, **options)

    async def update(self, memory_id: str, data: str) -> dict[str, str]:
        return await asyncio.to_thread(self.sync.update, memory_id, data)

    async def delete(self, memory_id: str) -> dict[str, str]:
        return await asyncio.to_thread(self.sync.delete, memory_id)

    async def delete_all(self, **options: Any) -> dict[str, str]:
        return await asyncio.to_thread(self.sync.delete_all, **options)

    async def history(self, memory_id: str) -> list[dict[str, Any]]:
        return await asyncio.to_thread(self.sync.history, memory_id)

    async def reset(self) -> None:
        await asyncio.to_thread(self.sync.reset)

    async def close(self) -> None:
        await asyncio.to_thread(self.sync.close)

    async def __aenter__(self) -> AsyncMemory:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.close()
