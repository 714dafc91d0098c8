"""``/v1/scripts``: the script library the agent keeps (list, show, delete).

The library belongs to the data dir, as the workspace the scripts run in does: every caller
sees the same scripts.  Deleting one also forgets the procedural memory of it, which is its
last saver's.  Saving and running stay the agent's (the ``scripts`` tool), so running code
remains subject to ``server.tools``.
"""

from __future__ import annotations

import asyncio
from typing import Annotated

from fastapi import APIRouter, Depends, Path, Query

from shiyi.api.script_schemas import (
    ScriptDeleted,
    ScriptDetail,
    ScriptList,
    ScriptOut,
    ScriptParameterOut,
)
from shiyi.interfaces.server.deps import get_service, require_memory
from shiyi.interfaces.server.identity import Caller, Identity
from shiyi.interfaces.server.service import AgentService
from shiyi.scripts.library import NAME_PATTERN, Script, ScriptLibrary, forget_script

router = APIRouter(prefix="/v1/scripts", tags=["scripts"])
Service = Annotated[AgentService, Depends(get_service)]
Name = Annotated[str, Path(pattern=f"^{NAME_PATTERN.pattern}$", description="A script's name.")]


def library(service: AgentService, who: Identity) -> ScriptLibrary:
    """The caller's own library (users do not share scripts)."""
    settings = service.settings
    return ScriptLibrary.for_user(
        settings.data_dir, who.user_id, configured_user=settings.memory.user_id
    )


def script_out(script: Script) -> ScriptOut:
    return ScriptOut(
        name=script.name,
        description=script.description,
        language=script.language,
        usage=script.usage(),
        parameters=[
            ScriptParameterOut(name=p.name, description=p.description, required=p.required)
            for p in script.parameters
        ],
        created_at=script.created_at,
        updated_at=script.updated_at,
        saved_by=script.saved_by,
    )


@router.get("", response_model=ScriptList)
async def list_scripts(
    service: Service,
    who: Caller,
    q: Annotated[str | None, Query(max_length=500, description="Search words.")] = None,
) -> ScriptList:
    """Every saved script by name, or those matching ``q``, best first."""
    scripts = library(service, who)
    found = await asyncio.to_thread(lambda: scripts.search(q) if q else scripts.list_all())
    return ScriptList(scripts=[script_out(s) for s in found])


@router.get("/{name}", response_model=ScriptDetail)
async def show_script(service: Service, who: Caller, name: Name) -> ScriptDetail:
    script = await asyncio.to_thread(library(service, who).get, name)
    return ScriptDetail(**script_out(script).model_dump(), body=script.body)


@router.delete("/{name}", response_model=ScriptDeleted)
async def delete_script(service: Service, who: Caller, name: Name) -> ScriptDeleted:
    """Delete the script's files and forget its procedural memory."""
    await asyncio.to_thread(library(service, who).delete, name)
    forgotten = 0
    if service.memory is not None:
        memory = require_memory(service, who)
        forgotten = await asyncio.to_thread(forget_script, memory, name)
    return ScriptDeleted(name=name, forgotten=forgotten)
