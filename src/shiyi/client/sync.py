"""The blocking client: ``Client(url).send(session, text)`` iterates typed events."""

from __future__ import annotations

from collections.abc import Generator
from types import TracebackType
from typing import Any, TypeVar

import httpx

from shiyi.api.import_schemas import ImportIn, ImportOut
from shiyi.api.knowledge_schemas import KnowledgeHits
from shiyi.api.schemas import (
    EntitySummary,
    EventOut,
    FactDetail,
    FactOut,
    FactPage,
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
from shiyi.events import Event

T = TypeVar("T")
SSE = "text/event-stream"


def auth_headers(token: str | None) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"} if token else {}


class Client:
    """A ``shiyi serve`` (or ``shiyi chat``) API client.

    Errors come back as the class named by the API's stable code: the server's own
    ``NotFound``, ``Conflict`` and ``RequestError`` (``bad_request``) for what the request
    asked, ``ClientError`` subclasses for the rest (``UnauthorizedError``, ``ServerError``,
    ...); an address where nothing answers raises ``ServiceUnavailable``.

    >>> with Client("http://127.0.0.1:8765") as client:           # doctest: +SKIP
    ...     session = client.create_session().id
    ...     for event in client.send(session, "list the files"):
    ...         print(event.type)
    """

    def __init__(
        self,
        base_url: str,
        *,
        token: str | None = None,
        timeout: float = 30.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.token = token
        self._http = httpx.Client(
            base_url=self.base_url,
            headers=auth_headers(token),
            timeout=timeout,
            transport=transport,
        )

    def _call(self, call: calls.Call[T]) -> T:
        try:
            response = self._http.request(
                call.method, call.path, params=call.params, json=call.json
            )
        except httpx.TransportError as exc:
            raise unavailable(self.base_url, exc) from None
        if response.status_code >= 400:
            raise error_from(response.status_code, response.content)
        return call.parse(response.content)

    # --- sessions and runs ---------------------------------------------------------------

    def health(self) -> Health:
        return self._call(calls.health())

    def create_session(self, title: str = "") -> SessionOut:
        return self._call(calls.create_session(title))

    def list_sessions(self, limit: int = 50) -> list[SessionOut]:
        return self._call(calls.list_sessions(limit))

    def get_session(self, session_id: str) -> SessionDetail:
        return self._call(calls.get_session(session_id))

    def delete_session(self, session_id: str) -> None:
        self._call(calls.delete_session(session_id))

    def send(
        self, session_id: str, text: str, run_id: str | None = None
    ) -> Generator[Event, None, None]:
        """Stream the events of a message (the first is ``routed``).

        Stopping the iteration early (or closing the generator) disconnects, which cancels
        the run on the server.
        """
        path = f"/v1/sessions/{session_id}/messages"
        body = calls.message_body(text, run_id)
        try:
            with self._http.stream(
                "POST", path, json=body, headers={"accept": SSE}, timeout=stream_timeout()
            ) as response:
                if response.status_code >= 400:
                    raise error_from(response.status_code, response.read())
                decoder = SSEDecoder()
                for line in response.iter_lines():
                    if (event := decoder.feed(line)) is not None:
                        yield event
                if (event := decoder.flush()) is not None:
                    yield event
        except httpx.TransportError as exc:
            raise unavailable(self.base_url, exc) from None

    def send_json(self, session_id: str, text: str, run_id: str | None = None) -> RunResult:
        """The whole run at once (every event, the final status and the reply text)."""
        return self._call(calls.send_json(session_id, text, run_id))

    def get_run(self, run_id: str) -> RunOut:
        return self._call(calls.get_run(run_id))

    def cancel(self, run_id: str) -> RunOut:
        return self._call(calls.cancel_run(run_id))

    # --- memory --------------------------------------------------------------------------

    def memory_search(
        self,
        query: str,
        *,
        mode: str = "hybrid",
        limit: int = 10,
        kinds: list[str] | None = None,
        since: float | None = None,
        until: float | None = None,
    ) -> list[MemoryHitOut]:
        """``since``/``until``: epoch seconds (inclusive) the hits' time falls in."""
        return self._call(calls.memory_search(query, mode, limit, kinds, since, until))

    def memory_read_as(self, query: str) -> dict[str, str]:
        """How a search reads ``query``'s typing slips ({"resturant": "restaurant"})."""
        return self._call(calls.memory_read_as(query))

    def memory_list(
        self,
        *,
        kinds: list[str] | None = None,
        scopes: list[str] | None = None,
        statuses: list[str] | None = None,
        limit: int = 50,
        offset: int = 0,
    ) -> FactPage:
        """Facts newest change first (default statuses: active and pending)."""
        return self._call(
            calls.memory_list(kinds or [], scopes or [], statuses or [], limit, offset)
        )

    def knowledge_search(self, query: str, limit: int = 5) -> KnowledgeHits:
        """Passages of the knowledge base for ``query``."""
        return self._call(calls.knowledge_search(query, limit))

    def memory_entities(self, query: str = "", limit: int = 50) -> list[EntitySummary]:
        """Entities the caller's current facts are about, most facts first."""
        return self._call(calls.memory_entities(query, limit))

    def memory_get(self, memory_id: str) -> EventOut | FactOut:
        return self._call(calls.memory_get(memory_id))

    def memory_add(
        self, text: str, *, kind: str = "semantic", key: str = "", scope: str = "user"
    ) -> RememberedOut:
        return self._call(calls.memory_add(text, kind, key, scope))

    def memory_export(self) -> list[str]:
        """Every event and fact the caller may see, as JSON lines."""
        return self._call(calls.memory_export())

    def memory_jobs(self) -> MemoryJobs:
        return self._call(calls.memory_jobs())

    def memory_retry_jobs(self) -> JobsRetried:
        return self._call(calls.memory_retry_jobs())

    def memory_history(self, *, key: str = "", entity: str = "") -> list[FactDetail]:
        """Every version of a fact slot, oldest first."""
        return self._call(calls.memory_history(key, entity))

    def memory_update(self, memory_id: str, **changes: Any) -> FactOut:
        return self._call(calls.memory_update(memory_id, changes))

    def memory_forget(
        self, by: str, text: str, *, limit: int = 5, dry_run: bool = False
    ) -> ForgetPlanOut:
        """Forget (or with ``dry_run`` list) what a search (``by="query"``) finds or an
        entity (``by="entity"``), of this caller's."""
        return self._call(calls.memory_forget(by, text, limit, dry_run))

    def memory_import(self, part: ImportIn) -> ImportOut:
        """Queue a part of one past conversation as this caller's turns (see
        ``shiyi memory import``, which sends whole files)."""
        return self._call(calls.memory_import(part))

    def memory_delete(self, memory_id: str) -> ForgetOut:
        return self._call(calls.memory_delete(memory_id))

    def script_delete(self, name: str) -> ScriptDeleted:
        """Delete a saved script and forget its procedural memory."""
        return self._call(calls.script_delete(name))

    def memory_expand(self, anchor: str, window: int = 3) -> list[EventOut]:
        return self._call(calls.memory_expand(anchor, window))

    def memory_health(self) -> MemoryHealth:
        return self._call(calls.memory_health())

    # --- lifecycle -----------------------------------------------------------------------

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


def stream_timeout() -> httpx.Timeout:
    # A run may think (or a tool may work) for minutes between events: no read timeout.
    return httpx.Timeout(30.0, read=None)
