"""Edits a user makes to their memory by hand: a fact patched (and embedded again), the
plan of a forget by query or entity cut to what the caller may write.

They were rules of the HTTP layer; every face (CLI, REST, MCP, the mem0-shaped API) now
reaches them through :class:`shiyi.memory.operations.local.LocalMemory`.
"""

from __future__ import annotations

import dataclasses
import time
import uuid
from typing import Literal

from shiyi.errors import Conflict, NotFound, ShiyiError
from shiyi.memory.intake.worker import EMBED
from shiyi.memory.lifecycle.forget import EARLIER_WORDING
from shiyi.memory.lifecycle.forget_report import ForgetPlan
from shiyi.memory.lifecycle.slots import normalize_key
from shiyi.memory.models import EventRecord, FactKind, FactRecord
from shiyi.memory.operations.fact_views import strip_key_prefix
from shiyi.memory.service import Memory


def patch_fact(
    memory: Memory,
    fact_id: str,
    *,
    key: str | None = None,
    value: str | None = None,
    kind: FactKind | None = None,
    confidence: float | None = None,
) -> FactRecord:
    """The fact with these changes stored; a changed text is queued to be embedded again
    (its old vector would find it by what it no longer says).

    The fact keeps its id, and what it said before the edit is kept as a superseded version
    of it (an edit had overwritten the value, so a slip on the memory page lost it with no
    way back).  History is not edited: a superseded or expired fact's words stay as they
    were (delete it instead).  A patch that changes nothing changes nothing, its
    ``updated_at`` included."""
    found = memory.get(fact_id)  # None: missing or not the viewer's
    if isinstance(found, EventRecord):
        raise Conflict(f"{fact_id} is an event: events are read-only, only facts change")
    if found is None:
        raise NotFound(f"no memory {fact_id!r}")
    who = memory.viewer
    who.check_write(found.scope, memory.writers)
    fact = patched(found, key=key, value=value, kind=kind, confidence=confidence)
    if dataclasses.replace(fact, updated_at=found.updated_at) == found:
        return found
    rewords = fact.text != found.text
    if rewords and found.status in ("superseded", "expired"):
        raise Conflict(
            f"{fact_id} is a past version ({found.status}): history keeps what was said; "
            "edit the current version, or delete this one"
        )
    owners = memory.lifecycle.facts
    if key is not None and fact.key != found.key and (owner := owners.key_owner_entity(key, who)):
        # a key edited to "Ana's city" makes the fact Ana's, as it would be if stated so
        fact.entities = list(dict.fromkeys([*fact.entities, owner]))
    memory.store.upsert_facts([fact])
    kept = _keep_as_before(memory, found, fact) if rewords else []
    if rewords and memory.embedder is not None:
        memory.jobs.enqueue(EMBED, {"node": "fact", "ids": [fact.id, *kept]})
        memory.worker.wake()
    return fact


def _keep_as_before(memory: Memory, found: FactRecord, edited: FactRecord) -> list[str]:
    """``found`` as it was, stored as the version the edit replaced; its id in a list.  The
    id is the fact's own with a suffix (``fact_1a2b~9f8e7d``): forgetting the fact forgets
    what it said before its edits (:class:`~shiyi.memory.lifecycle.forget.Forgetter`)."""
    now = edited.updated_at
    before = dataclasses.replace(
        found,
        id=f"{edited.id}{EARLIER_WORDING}{uuid.uuid4().hex[:6]}",
        status="superseded",
        valid_to=now,
        updated_at=now,
        conflicts_with="",
    )
    memory.store.upsert_facts([before])
    memory.store.add_supersedes([(edited.id, before.id)])
    return [before.id]


def patched(
    found: FactRecord,
    *,
    key: str | None,
    value: str | None,
    kind: FactKind | None,
    confidence: float | None,
) -> FactRecord:
    """``found`` with the patch applied: the key normalised like every slot's, the value
    without a copy of its key (what the page shows, "lives in: Paris", typed back as the
    value would be stored as "lives in: lives in: Paris")."""
    new_key = found.key if key is None else normalize_key(key)
    new_value = found.value
    if value is not None:
        new_value = strip_key_prefix(new_key, value)
        if not new_value:
            raise ShiyiError(
                f"the value {value!r} holds only the key {new_key!r}: "
                "give the value alone (the key has its own field)"
            )
    return dataclasses.replace(
        found,
        key=new_key,
        value=new_value,
        kind=kind or found.kind,
        confidence=found.confidence if confidence is None else confidence,
        updated_at=time.time(),
    )


def writable_forget_plan(
    memory: Memory, by: Literal["query", "entity"], text: str, limit: int
) -> ForgetPlan:
    """What a forget by query or entity may delete for the viewer: what it sees, without
    the workspace facts it may not write (and then no entity node: others' facts keep it)."""
    forgetter = memory.forgetter()
    whole = forgetter.plan_query(text, limit) if by == "query" else forgetter.plan_entity(text)
    plan = memory.within_scope(whole)
    facts = memory.store.get_facts(plan.fact_ids)
    writable = {f.id for f in facts if memory.viewer.may_write(f.scope, memory.writers)}
    if len(writable) == len(plan.fact_ids):
        return plan
    kept = [i for i in plan.fact_ids if i in writable]
    hits = [h for h in plan.hits if h.node != "fact" or h.id in writable]
    return dataclasses.replace(plan, fact_ids=kept, hits=hits, entity_names=[])
