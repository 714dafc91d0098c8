"""The wire models keep their own copies of memory's names; these stay equal to the source."""

from __future__ import annotations

import dataclasses
from typing import get_args

from shiyi.api import schemas
from shiyi.interfaces.server.wire import health_detail
from shiyi.memory import models
from shiyi.memory.lifecycle.health import MemoryHealth


def test_fact_kinds_and_scopes_match_memorys() -> None:
    assert get_args(schemas.FactKind) == get_args(models.FactKind)
    assert get_args(schemas.Scope) == get_args(models.Scope)


def test_the_health_detail_carries_every_number_memory_reports() -> None:
    fields = [f.name for f in dataclasses.fields(MemoryHealth)]
    assert list(schemas.MemoryHealthDetail.model_fields) == fields
    health = MemoryHealth(facts=3, by_kind={"semantic": 3}, embedded={"facts": 2}, jobs_failed=1)
    assert health_detail(health).model_dump() == dataclasses.asdict(health)
