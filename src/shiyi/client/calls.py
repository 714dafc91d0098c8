"""The API's operations as data: method, path, parameters and how to read the answer.

:class:`~shiyi.client.Client` and :class:`~shiyi.client.AsyncClient` send the same calls,
one with blocking and one with async httpx, so the two cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar
from urllib.parse import quote

from pydantic import BaseModel, TypeAdapter

from shiyi.api.import_schemas import ImportIn, ImportOut
from shiyi.api.knowledge_schemas import KnowledgeHits
from shiyi.api.schemas import (
    EntityList,
    EntitySummary,
    EventOut,
    FactDetail,
    FactHistory,
    FactOut,
    FactPage,
    ForgetOut,
    ForgetPlanOut,
    Health,
    JobsRetried,
    MemoryEvents,
    MemoryHealth,
    MemoryHitOut,
    MemoryHits,
    MemoryJobs,
    ReadAs,
    RememberedOut,
    RunOut,
    RunResult,
    SessionDetail,
    SessionList,
    SessionOut,
)
from shiyi.api.script_schemas import ScriptDeleted

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)
_MEMORY: TypeAdapter[EventOut | FactOut] = TypeAdapter(EventOut | FactOut)


@dataclass(slots=True, frozen=True)
class Call(Generic[T]):
    method: str
    path: str
    parse: Callable[[bytes], T]
    params: dict[str, Any] = field(default_factory=dict)
    json: dict[str, Any] | None = None


def _model(cls: type[M]) -> Callable[[bytes], M]:
    return cls.model_validate_json


def _nothing(_: bytes) -> None:
    return None


def health() -> Call[Health]:
    return Call("GET", "/healthz", _model(Health))


def create_session(title: str) -> Call[SessionOut]:
    return Call("POST", "/v1/sessions", _model(SessionOut), json={"title": title})


def list_sessions(limit: int) -> Call[list[SessionOut]]:
    return Call(
        "GET",
        "/v1/sessions",
        lambda body: SessionList.model_validate_json(body).sessions,
        params={"limit": limit},
    )


def get_session(session_id: str) -> Call[SessionDetail]:
    return Call("GET", f"/v1/sessions/{session_id}", _model(SessionDetail))


def delete_session(session_id: str) -> Call[None]:
    return Call("DELETE", f"/v1/sessions/{session_id}", _nothing)


def message_body(text: str, run_id: str | None) -> dict[str, Any]:
    return {"text": text, **({"run_id": run_id} if run_id else {})}


def send_json(session_id: str, text: str, run_id: str | None) -> Call[RunResult]:
    return Call(
        "POST",
        f"/v1/sessions/{session_id}/messages",
        _model(RunResult),
        params={"stream": "false"},
        json=message_body(text, run_id),
    )


def get_run(run_id: str) -> Call[RunOut]:
    return Call("GET", f"/v1/runs/{run_id}", _model(RunOut))


def cancel_run(run_id: str) -> Call[RunOut]:
    return Call("POST", f"/v1/runs/{run_id}/cancel", _model(RunOut))


def memory_search(
    query: str,
    mode: str,
    limit: int,
    kinds: list[str] | None,
    since: float | None = None,
    until: float | None = None,
) -> Call[list[MemoryHitOut]]:
    params: dict[str, Any] = {"q": query, "mode": mode, "limit": limit}
    if kinds:
        params["kind"] = kinds
    if since is not None:
        params["since"] = since
    if until is not None:
        params["until"] = until
    return Call(
        "GET",
        "/v1/memory/search",
        lambda body: MemoryHits.model_validate_json(body).hits,
        params=params,
    )


def memory_read_as(query: str) -> Call[dict[str, str]]:
    return Call(
        "GET",
        "/v1/memory/read-as",
        lambda body: ReadAs.model_validate_json(body).read_as,
        params={"q": query},
    )


def memory_get(memory_id: str) -> Call[EventOut | FactOut]:
    return Call("GET", f"/v1/memory/{memory_id}", _MEMORY.validate_json)


def memory_add(text: str, kind: str, key: str, scope: str) -> Call[RememberedOut]:
    body = {"text": text, "kind": kind, "key": key, "scope": scope}
    return Call("POST", "/v1/memory", _model(RememberedOut), json=body)


def memory_list(
    kinds: list[str], scopes: list[str], statuses: list[str], limit: int, offset: int
) -> Call[FactPage]:
    params: dict[str, Any] = {"limit": limit, "offset": offset}
    for name, values in (("kind", kinds), ("scope", scopes), ("status", statuses)):
        if values:
            params[name] = values
    return Call("GET", "/v1/memory/facts", _model(FactPage), params=params)


def memory_entities(query: str, limit: int) -> Call[list[EntitySummary]]:
    return Call(
        "GET",
        "/v1/memory/entities",
        lambda body: EntityList.model_validate_json(body).entities,
        params={"q": query, "limit": limit},
    )


def knowledge_search(query: str, limit: int) -> Call[KnowledgeHits]:
    return Call(
        "GET",
        "/v1/knowledge/search",
        _model(KnowledgeHits),
        params={"q": query, "limit": limit},
    )


def memory_history(key: str, entity: str) -> Call[list[FactDetail]]:
    return Call(
        "GET",
        "/v1/memory/history",
        lambda body: FactHistory.model_validate_json(body).facts,
        params={"key": key, "entity": entity},
    )


def memory_update(memory_id: str, changes: dict[str, Any]) -> Call[FactOut]:
    return Call("PATCH", f"/v1/memory/{memory_id}", _model(FactOut), json=changes)


def script_delete(name: str) -> Call[ScriptDeleted]:
    return Call("DELETE", f"/v1/scripts/{quote(name, safe='')}", _model(ScriptDeleted))


def memory_forget(by: str, text: str, limit: int, dry_run: bool) -> Call[ForgetPlanOut]:
    body = {"by": by, "text": text, "limit": limit, "dry_run": dry_run}
    return Call("POST", "/v1/memory/forget", _model(ForgetPlanOut), json=body)


def memory_import(part: ImportIn) -> Call[ImportOut]:
    return Call("POST", "/v1/memory/import", _model(ImportOut), json=part.model_dump())


def memory_delete(memory_id: str) -> Call[ForgetOut]:
    return Call("DELETE", f"/v1/memory/{memory_id}", _model(ForgetOut))


def memory_expand(anchor: str, window: int) -> Call[list[EventOut]]:
    return Call(
        "GET",
        "/v1/memory/expand",
        lambda body: MemoryEvents.model_validate_json(body).events,
        params={"anchor": anchor, "window": window},
    )


def memory_health() -> Call[MemoryHealth]:
    return Call("GET", "/v1/memory/health", _model(MemoryHealth))


def memory_export() -> Call[list[str]]:
    return Call("GET", "/v1/memory/export", lambda body: body.decode("utf-8").splitlines())


def memory_jobs() -> Call[MemoryJobs]:
    return Call("GET", "/v1/memory/jobs", _model(MemoryJobs))


def memory_retry_jobs() -> Call[JobsRetried]:
    return Call("POST", "/v1/memory/jobs/retry", _model(JobsRetried))
