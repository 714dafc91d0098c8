"""``/v1/knowledge``: the memory page's Knowledge tab — list, search, add (upload or a path
inside the workspace), re-index and remove the documents of the data dir's knowledge base.

The base is shared by everyone the server serves (like workspace memory), so reading needs
a caller and changing it needs an agent ``memory.lifecycle.workspace_writers`` allows.  A
server-side path is resolved through the tools' :class:`Workspace`: ``..``, absolute paths
and symlinks leading out, and protected files (``.env``, ``shiyi.yaml``, the data dir) are
refused, as they are for the agent's file tools.
"""

from __future__ import annotations

import asyncio
import re
import threading
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Annotated, Any

from fastapi import APIRouter, Depends, FastAPI, Query, Request
from fastapi import Path as PathParam

from shiyi.api.errors import ErrorResponse
from shiyi.api.knowledge_schemas import (
    DocumentList,
    DocumentOut,
    IngestFailure,
    IngestOut,
    KnowledgeHits,
    PassageOut,
    PathIn,
    RemovedOut,
)
from shiyi.config.settings import Settings
from shiyi.errors import Conflict, NotFound, ScopeDenied, ShiyiError, WorkspaceViolation
from shiyi.interfaces.server.deps import get_service
from shiyi.interfaces.server.identity import Caller, Identity
from shiyi.interfaces.server.service import AgentService
from shiyi.knowledge.base import UPLOADS, display_path
from shiyi.knowledge.loaders import SUPPORTED
from shiyi.memory.scopes import Writers
from shiyi.tools.base import ToolContext
from shiyi.tools.workspace import Workspace

if TYPE_CHECKING:
    from shiyi.knowledge import DocumentInfo, IngestReport, KnowledgeBase, Passage

_ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorResponse} for code in (400, 401, 404, 409, 413, 422)
}
router = APIRouter(prefix="/v1/knowledge", tags=["knowledge"], responses=_ERRORS)
Service = Annotated[AgentService, Depends(get_service)]
NAME_PATTERN = (
    r"^[^/\\\x00-\x1f\x7f.][^/\\\x00-\x1f\x7f]{0,150}\.("
    + "|".join(
        "".join(f"[{c.lower()}{c.upper()}]" if c.isalpha() else re.escape(c) for c in s.lstrip("."))
        for s in sorted(SUPPORTED)
    )
    + ")$"
)
"""An upload's name: a plain file name in any script (``会议纪要.md``, ``report (1).MD``), not
hidden, of a type the base reads, in any case.  A pattern of ASCII letters had refused both,
with a regular expression for a message; :func:`upload_path` checks again in words."""
_UPLOAD_BODY: dict[str, Any] = {
    "requestBody": {
        "required": True,
        "content": {
            "application/octet-stream": {
                "schema": {"type": "string", "format": "binary", "minLength": 1}
            }
        },
    }
}


class Knowledge:
    """The server's one knowledge base, opened on first use (sharing the memory's embedder)
    and closed with the server; writes take turns (an ingest is many statements)."""

    def __init__(self, service: AgentService) -> None:
        self.service = service
        self.writing = asyncio.Lock()
        self._kb: KnowledgeBase | None = None
        self._opening = threading.Lock()

    def get(self, *, create: bool = False) -> KnowledgeBase | None:
        from shiyi.app import DEFAULT, open_knowledge
        from shiyi.knowledge import KnowledgeBase

        settings = self.service.settings
        with self._opening:
            if self._kb is None and (create or KnowledgeBase.exists(settings)):
                memory = self.service.memory
                embedder = DEFAULT if memory is None else memory.embedder
                fast = self.service.app.models.fast
                self._kb = open_knowledge(settings, embedder=embedder, fast=fast)
            return self._kb

    def require(self) -> KnowledgeBase:
        kb = self.get()
        if kb is None:
            raise NotFound("the knowledge base is empty: add a document first")
        return kb

    def workspace(self) -> Workspace:
        """The agent's workspace and protection, never reaching outside it (even where
        ``tools.allow_outside_workspace`` lets the agent)."""
        guard = ToolContext.for_settings(self.service.settings).workspace
        return Workspace(guard.root, protected=guard.protected)

    def close(self) -> None:
        with self._opening:
            if self._kb is not None:
                self._kb.close()
                self._kb = None


def install_knowledge(app: FastAPI, service: AgentService) -> None:
    app.state.knowledge = Knowledge(service)
    app.include_router(router)


def close_knowledge(app: FastAPI) -> None:
    knowledge = getattr(app.state, "knowledge", None)
    if isinstance(knowledge, Knowledge):
        knowledge.close()


async def get_knowledge(request: Request) -> Knowledge:
    knowledge = request.app.state.knowledge
    assert isinstance(knowledge, Knowledge)
    return knowledge


Base = Annotated[Knowledge, Depends(get_knowledge)]


def check_writer(who: Identity, service: AgentService) -> None:
    memory = service.settings.memory
    writers = Writers.of(memory.lifecycle.workspace_writers, memory.user_id)
    if not who.viewer.may_write("workspace", writers):
        raise ScopeDenied(
            f"{writers.who(who.viewer)} may not change the shared knowledge base; add "
            f"{writers.entry_for(who.viewer)!r} to memory.lifecycle.workspace_writers"
        )


# --- reading ---------------------------------------------------------------------------------


@router.get("", response_model=DocumentList)
async def list_documents(knowledge: Base, who: Caller) -> DocumentList:
    """Every document: source, sections, chunks, when it was added and its size."""
    return await asyncio.to_thread(_listing, knowledge)


def _listing(knowledge: Knowledge) -> DocumentList:
    kb = knowledge.get()
    if kb is None:
        return DocumentList(exists=False, documents=[])
    root = knowledge.workspace().root
    return DocumentList(exists=True, documents=[document_out(d, root) for d in kb.documents()])


@router.get("/search", response_model=KnowledgeHits)
async def search(
    knowledge: Base,
    who: Caller,
    q: Annotated[str, Query(min_length=1, max_length=2000)],
    limit: Annotated[int, Query(ge=1, le=50)] = 5,
) -> KnowledgeHits:
    """Passages for ``q``, each with the chunk that matched and the section it is in."""
    return await passages_for(knowledge, q, limit)


async def passages_for(knowledge: Knowledge, q: str, limit: int) -> KnowledgeHits:
    """The search route's answer (the MCP tool's too)."""
    kb = await asyncio.to_thread(knowledge.require)
    result = await kb.search(q, kb.options(limit=limit))
    chunks = await asyncio.to_thread(kb.store.chunks, [p.chunk_id for p in result.passages])
    root = knowledge.workspace().root
    return KnowledgeHits(
        passages=[
            passage_out(p, chunks[p.chunk_id].text, chunks[p.chunk_id].doc_id, root)
            for p in result.passages
            if p.chunk_id in chunks
        ],
        read_as=result.read_as,
    )


# --- changing --------------------------------------------------------------------------------


@router.post("/paths", response_model=IngestOut)
async def add_path(knowledge: Base, service: Service, who: Caller, body: PathIn) -> IngestOut:
    """Ingest a file, or the supported files below a directory, inside the workspace."""
    check_writer(who, service)
    return await _ingest(knowledge, await asyncio.to_thread(files_for, knowledge, body.path))


def files_for(knowledge: Knowledge, path: str) -> list[Path]:
    workspace = knowledge.workspace()
    try:
        target = workspace.resolve(path)  # refuses escapes and protected paths
    except WorkspaceViolation as exc:
        # 409 like other requests the server's settings forbid (tools.protected_paths).
        # The server never reaches outside the workspace, whatever the tools may: the
        # violation's own hint (tools.allow_outside_workspace) would send users astray.
        said = str(exc).split("; use a path inside the workspace")[0]
        raise Conflict(
            f"{said}; the server adds documents from inside the workspace only: copy the "
            "file there, upload it (PUT /v1/knowledge/uploads/NAME), or add it with "
            "`shiyi kb add` on this machine"
            if "outside the workspace" in said
            else str(exc)
        ) from exc
    if not target.exists():
        raise NotFound(f"{path!r} does not exist in the workspace {workspace.root}")
    files = [target] if not target.is_dir() else allowed_files(workspace, target)
    if not files:
        raise NotFound(f"{path!r} holds no file the knowledge base reads ({_kinds()})")
    return files


@router.put("/uploads/{name}", response_model=IngestOut, openapi_extra=_UPLOAD_BODY)
async def upload(
    knowledge: Base,
    service: Service,
    who: Caller,
    name: Annotated[str, PathParam(pattern=NAME_PATTERN, description="A plain file name")],
    request: Request,
) -> IngestOut:
    """Store the request body as ``name`` in the data dir's upload folder and ingest it
    (the body is the file's bytes; ``server.max_body_bytes`` limits its size).  The same
    name again replaces that document."""
    check_writer(who, service)
    path = upload_path(service.settings, name)
    data = await request.body()
    if not data:
        raise ShiyiError(f"the upload of {name!r} is empty: send the file's bytes as the body")
    before = await asyncio.to_thread(_bytes_of, path)
    await asyncio.to_thread(_write, path, data)
    ingested = await _ingest(knowledge, [path], force=True)
    if ingested.failed:  # a binary or unreadable file is not kept; an earlier upload is
        await asyncio.to_thread(_put_back, path, before)
    return ingested


@router.post("/{doc_id}/reindex", response_model=IngestOut)
async def reindex(knowledge: Base, service: Service, who: Caller, doc_id: str) -> IngestOut:
    """Read the document's file again and rebuild its chunks, summaries and vectors."""
    check_writer(who, service)
    source = await asyncio.to_thread(_source, knowledge, doc_id)
    return await _ingest(knowledge, [source], force=True)


def _source(knowledge: Knowledge, doc_id: str) -> Path:
    document = _document(knowledge.require(), doc_id)
    if not Path(document.path).is_file():
        raise NotFound(f"{document.path} is gone: remove the document, or add the file again")
    return checked_source(knowledge, Path(document.path))


def checked_source(knowledge: Knowledge, path: Path) -> Path:
    """A stored document's file, checked again as when it was added (resolved, symlinks
    followed): since then it may have become a link to a protected file (``shiyi.yaml``)
    or out of the workspace, and a re-index must not read that in.  An upload must still
    be a file of the upload folder."""
    uploads = (knowledge.service.settings.knowledge_dir / UPLOADS).resolve()
    if path.parent == uploads:
        resolved = path.resolve()
        if resolved.parent != uploads:
            raise Conflict(
                f"cannot re-index {path}: it now leads to {resolved}, outside the upload "
                f"folder {uploads}; remove the document and upload the file again"
            )
        return resolved
    try:
        return knowledge.workspace().resolve(path)  # refuses escapes and protected paths
    except WorkspaceViolation as exc:
        raise Conflict(
            f"cannot re-index {path}: {exc} (the file changed since it was added; remove "
            "the document, or add the file again)"
        ) from exc


@router.delete("/{doc_id}", response_model=RemovedOut)
async def remove(knowledge: Base, service: Service, who: Caller, doc_id: str) -> RemovedOut:
    """Remove the document with its sections, chunks, summaries and vectors (an uploaded
    file goes too)."""
    check_writer(who, service)
    async with knowledge.writing:
        return await asyncio.to_thread(_remove, knowledge, doc_id)


def _remove(knowledge: Knowledge, doc_id: str) -> RemovedOut:
    kb = knowledge.require()
    removed, _ = kb.remove([_document(kb, doc_id).id])  # an uploaded file goes too
    root = knowledge.workspace().root
    return RemovedOut(removed=[document_out(d, root) for d in removed])


# --- helpers ---------------------------------------------------------------------------------


async def _ingest(knowledge: Knowledge, files: list[Path], *, force: bool = False) -> IngestOut:
    kb = await asyncio.to_thread(lambda: knowledge.get(create=True))
    assert kb is not None
    async with knowledge.writing:
        report = await kb.add(files, force=force)
    return ingest_out(report)


def _document(kb: KnowledgeBase, doc_id: str) -> DocumentInfo:
    found = kb.store.documents_by_id([doc_id])
    if doc_id not in found:
        raise NotFound(f"no document {doc_id!r} in the knowledge base; GET /v1/knowledge lists ids")
    return found[doc_id]


def allowed_files(workspace: Workspace, directory: Path) -> list[Path]:
    """The supported files below ``directory`` the workspace lets out: a protected file or a
    link leading outside is left out, not read."""
    from shiyi.knowledge.ingest import supported_files

    kept: list[Path] = []
    for path in supported_files(directory):
        try:
            kept.append(workspace.resolve(path))
        except WorkspaceViolation:
            continue
    return kept


def upload_path(settings: Settings, name: str) -> Path:
    """Where an upload called ``name`` is kept; only a plain file name of a supported type."""
    if name.startswith("."):
        raise ShiyiError(f"{name!r} starts with a dot (a hidden file): upload one like 'notes.md'")
    plain = PurePosixPath(name).name == name and "\\" not in name
    if not plain or len(name) > 200:
        raise ShiyiError(f"{name!r} is not a plain file name: upload 'notes.md', not a path")
    if PurePosixPath(name).suffix.lower() not in SUPPORTED:
        raise ShiyiError(f"{name!r}: the knowledge base reads {_kinds()}")
    return settings.knowledge_dir / UPLOADS / name


def _bytes_of(path: Path) -> bytes | None:
    return path.read_bytes() if path.is_file() else None


def _put_back(path: Path, before: bytes | None) -> None:
    if before is None:
        path.unlink(missing_ok=True)
    else:
        path.write_bytes(before)


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def _kinds() -> str:
    return "Markdown, text, HTML, PDF and source files"


def document_out(doc: DocumentInfo, root: Path) -> DocumentOut:
    return DocumentOut(
        id=doc.id,
        path=doc.path,
        shown=display_path(doc.path, root),
        title=doc.title,
        format=doc.format,
        sections=doc.sections,
        chunks=doc.chunks,
        added_at=doc.added_at,
        bytes=doc.bytes,
        summary_method=doc.summary_method,
        missing=not Path(doc.path).is_file(),
    )


def passage_out(passage: Passage, chunk: str, doc_id: str, root: Path) -> PassageOut:
    return PassageOut(
        doc_id=doc_id,
        doc_path=display_path(passage.doc_path, root),
        doc_title=passage.doc_title,
        heading_path=passage.heading_path,
        chunk=chunk,
        text=passage.text,
        score=passage.score,
        paths=passage.paths,
        expansion=passage.expansion,
    )


def ingest_out(report: IngestReport) -> IngestOut:
    return IngestOut(
        added=report.added,
        updated=report.updated,
        unchanged=report.unchanged,
        skipped=report.skipped,
        failed=[IngestFailure(path=path, reason=reason) for path, reason in report.failed],
        chunks=report.chunks,
        sections=report.sections,
        seconds=report.seconds,
    )
