"""The async client: ``async for event in AsyncClient(url).send(session, text)``."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from types import TracebackType
from typing import Any, TypeVar

import httpx

from shiyi.api.import_schemas import ImportIn, ImportOut
from shiyi.api.schemas import (
    EventOut,
    FactDetail,
    FactOut,
    ForgetOut,
    ForgetPlanOut,
    Health,
    JobsRetried,
    MemoryHealth,
    MemoryHitOut,
    MemoryJobs,
    RememberedOut,
    RunOut,
    RunResult,
    SessionDetail,
    SessionOut,
)
from shiyi.api.script_schemas import ScriptDeleted
from shiyi.client import calls
from shiyi.client.errors import error_from, unavailable
from shiyi.client.sse import SSEDecoder
from shiyi.client.sync import SSE, auth_headers, stream_timeout
from shiyi.events import Event

T = TypeVar("T")


class AsyncClient:
    """The async twin of :class:`~shiyi.client.Client` (same calls, same errors).

    Errors come back as the class named by the API's stable code: the server's own
    ``NotFound``, ``Conflict`` and ``RequestError`` (``bad_request``) for what the request
    asked, ``ClientError`` subclasses for the rest (``UnauthorizedError``, ``ServerError``,
    ...); an address where nothing answers raises ``ServiceUnavailable``.

    >>> async with AsyncClient("http://127.0.0.1:8765") as client:  # doctest: +SKIP
    ...     session = (await client.create_session()).id
    ...     async for event in client.send(session, "list the files"):
    ...         print(event.type)
    """

    def __init__(
        self,
        base_url: str,
        *,
        token: str | None = None,
        timeout: float = 30.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self._http = httpx.AsyncClient(
            base_url=self.base_url,
            headers=auth_headers(token),
            timeout=timeout,
            transport=transport,
        )

    async def _call(self, call: calls.Call[T]) -> T:
        try:
            response = await self._http.request(
                call.method, call.path, params=call.params, json=call.json
            )
        except httpx.TransportError as exc:
            raise unavailable(self.base_url, exc) from None
        if response.status_code >= 400:
            raise error_from(response.status_code, response.content)
        return call.parse(response.content)

    # --- sessions and runs ---------------------------------------------------------------

    async def health(self) -> Health:
        return await self._call(calls.health())

    async def create_session(self, title: str = "") -> SessionOut:
        return await self._call(calls.create_session(title))

    async def list_sessions(self, limit: int = 50) -> list[SessionOut]:
        return await self._call(calls.list_sessions(limit))

    async def get_session(self, session_id: str) -> SessionDetail:
        return await self._call(calls.get_session(session_id))

    async def delete_session(self, session_id: str) -> None:
        await self._call(calls.delete_session(session_id))

    async def send(
        self, session_id: str, text: str, run_id: str | None = None
    ) -> AsyncGenerator[Event, None]:
        """Stream the events of a message (the first is ``routed``).

        Stopping the iteration early (or closing the generator) disconnects, which cancels
        the run on the server.
        """
        path = f"/v1/sessions/{session_id}/messages"
        body = calls.message_body(text, run_id)
        try:
            async with self._http.stream(
                "POST", path, json=body, headers={"accept": SSE}, timeout=stream_timeout()
            ) as response:
                if response.status_code >= 400:
                    raise error_from(response.status_code, await response.aread())
                decoder = SSEDecoder()
                async for line in response.aiter_lines():
                    if (event := decoder.feed(line)) is not None:
                        yield event
                if (event := decoder.flush()) is not None:
                    yield event
        except httpx.TransportError as exc:
            raise unavailable(self.base_url, exc) from None

    async def send_json(self, session_id: str, text: str, run_id: str | None = None) -> RunResult:
        """The whole run at once (every event, the final status and the reply text)."""
        return await self._call(calls.send_json(session_id, text, run_id))

    async def get_run(self, run_id: str) -> RunOut:
        return await self._call(calls.get_run(run_id))

    async def cancel(self, run_id: str) -> RunOut:
        return await self._call(calls.cancel_run(run_id))

    # --- memory --------------------------------------------------------------------------

    async def memory_search(
        self, query: str, *, mode: str = "hybrid", limit: int = 10, kinds: list[str] | None = None
    ) -> list[MemoryHitOut]:
        return await self._call(calls.memory_search(query, mode, limit, kinds))

    async def memory_read_as(self, query: str) -> dict[str, str]:
        """How a search reads ``query``'s typing slips ({"resturant": "restaurant"})."""
        return await self._call(calls.memory_read_as(query))

    async def memory_get(self, memory_id: str) -> EventOut | FactOut:
        return await self._call(calls.memory_get(memory_id))

    async def memory_add(
        self, text: str, *, kind: str = "semantic", key: str = "", scope: str = "user"
    ) -> RememberedOut:
        return await self._call(calls.memory_add(text, kind, key, scope))

    async def memory_export(self) -> list[str]:
        """Every event and fact the caller may see, as JSON lines."""
        return await self._call(calls.memory_export())

    async def memory_jobs(self) -> MemoryJobs:
        return await self._call(calls.memory_jobs())

    async def memory_retry_jobs(self) -> JobsRetried:
        return await self._call(calls.memory_retry_jobs())

    async def memory_history(self, *, key: str = "", entity: str = "") -> list[FactDetail]:
        """Every version of a fact slot, oldest first."""
        return await self._call(calls.memory_history(key, entity))

    async def memory_update(self, memory_id: str, **changes: Any) -> FactOut:
        return await self._call(calls.memory_update(memory_id, changes))

    async def memory_forget(
        self, by: str, text: str, *, limit: int = 5, dry_run: bool = False
    ) -> ForgetPlanOut:
        """Forget (or with ``dry_run`` list) what a search (``by="query"``) finds or an
        entity (``by="entity"``), of this caller's."""
        return await self._call(calls.memory_forget(by, text, limit, dry_run))

    async def memory_import(self, part: ImportIn) -> ImportOut:
        """Queue a part of one past conversation as this caller's turns (see
        ``shiyi memory import``, which sends whole files)."""
        return await self._call(calls.memory_import(part))

    async def memory_delete(self, memory_id: str) -> ForgetOut:
        return await self._call(calls.memory_delete(memory_id))

    async def script_delete(self, name: str) -> ScriptDeleted:
        """Delete a saved script and forget its procedural memory."""
        return await self._call(calls.script_delete(name))

    async def memory_expand(self, anchor: str, window: int = 3) -> list[EventOut]:
        return await self._call(calls.memory_expand(anchor, window))

    async def memory_health(self) -> MemoryHealth:
        return await self._call(calls.memory_health())

    # --- lifecycle -----------------------------------------------------------------------

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()
