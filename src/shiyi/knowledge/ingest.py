"""``kb add``: files and directories in, chunks, summaries and vectors out; incremental.

A file is skipped when its content hash matches what is stored (``force`` re-ingests it);
a changed file replaces its previous version in one transaction.  Everything a version
needs (blocks, chunks, summaries, vectors) is computed before anything is written, so a
file that fails at any step leaves its stored version as it was: a bad file is reported
and the batch goes on.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Literal

from shiyi.errors import IngestError
from shiyi.gitignore import walk_files
from shiyi.index.types import Embedder
from shiyi.index.vector_cache import Matrix
from shiyi.knowledge.chunking import Chunked, ChunkOptions, chunk_document
from shiyi.knowledge.loaders import format_of, load, unsupported_message
from shiyi.knowledge.models import (
    ChunkRecord,
    DocumentInfo,
    IngestReport,
    SectionRecord,
    SummaryDraft,
    SummaryRecord,
)
from shiyi.knowledge.store import DocumentRows, KnowledgeStore
from shiyi.knowledge.summaries import Summarizer, summarize_document


@dataclass(slots=True, frozen=True)
class IngestProgress:
    """Where an ingestion stands: sent as each file is done and before its slow steps."""

    path: str
    message: str
    files_done: int
    files_total: int
    bytes_done: int
    bytes_total: int
    chunks: int
    sections: int
    embedded: int
    eta_seconds: float | None
    """From the rate of the files after the first (which also loads the embedding model);
    None until there is one."""


Progress = Callable[[IngestProgress], None]
Outcome = Literal["added", "updated", "unchanged"]

# Directories that hold dependencies or build output, not the user's documents.
_SKIP_DIRS = frozenset(
    {"node_modules", "__pycache__", "venv", "site-packages", "dist", "build", "target"}
)
_EMBED_NOTICE = 64  # announce embeddings of more texts than this (they take seconds)


@dataclass(slots=True, frozen=True)
class IngestOptions:
    chunk_chars: int = 900
    max_file_bytes: int = 20 * 1024 * 1024
    force: bool = False
    refuse: Callable[[Path], str | None] | None = None
    """Why a file may not be read (``shiyi.yaml``, ``.env``, the data dir: what the agent's
    tools never read, which a search would otherwise hand it), or None."""


def document_id(path: str) -> str:
    return "d" + hashlib.sha256(path.encode("utf-8")).hexdigest()[:12]


class Ingestor:
    def __init__(
        self,
        store: KnowledgeStore,
        embedder: Embedder | None,
        summarizer: Summarizer,
        options: IngestOptions | None = None,
    ) -> None:
        self.store = store
        self.embedder = embedder if store.vectors else None
        self.summarizer = summarizer
        self.options = options or IngestOptions()

    async def add(self, paths: Sequence[Path], progress: Progress | None = None) -> IngestReport:
        started = time.perf_counter()
        report = IngestReport()
        files = [(path, _size(path)) for path in self._files(paths, report)]
        tracker = _Tracker(report, len(files), sum(size for _, size in files), started, progress)
        for path, size in files:
            try:
                outcome, chunks = await self._ingest(path, report, tracker.notify)
            except IngestError as exc:
                report.failed.append((str(path), str(exc)))
                tracker.file_done(str(path), size, "failed (see below)")
                continue
            getattr(report, outcome).append(str(path))
            report.chunks += chunks
            plural = "" if chunks == 1 else "s"
            said = outcome if outcome == "unchanged" else f"{outcome}: {chunks} chunk{plural}"
            tracker.file_done(str(path), size, said)
        await asyncio.to_thread(self.store.sweep)
        report.seconds = time.perf_counter() - started
        return report

    # --- finding files -------------------------------------------------------------------

    def _files(self, paths: Sequence[Path], report: IngestReport) -> Iterator[Path]:
        """Named files (an unsupported one is an error) and the supported files below named
        directories (others are counted as skipped)."""
        refuse = self.options.refuse or (lambda _: None)
        for raw in paths:
            path = raw.expanduser()
            if path.is_dir():
                for found in _walk(path):
                    if format_of(found) is None:
                        report.skipped.append(str(found))
                    elif refuse(found) is not None:
                        report.protected.append(str(found))
                    else:
                        yield found
            elif path.is_file():
                if (why := refuse(path)) is not None:
                    report.failed.append((str(path), f"{path} is not read: {why}"))
                elif format_of(path) is None:
                    report.failed.append((str(path), unsupported_message(path)))
                else:
                    yield path
            elif path.exists():
                report.failed.append((str(path), f"{path}: not a regular file or directory"))
            else:
                report.failed.append((str(path), f"{path}: no such file or directory"))

    # --- one file ------------------------------------------------------------------------

    async def _ingest(
        self, path: Path, report: IngestReport, notify: Callable[[str, str], None]
    ) -> tuple[Outcome, int]:
        resolved, data = await asyncio.to_thread(_read, path, self.options.max_file_bytes)
        digest = hashlib.sha256(data).hexdigest()
        existing = await asyncio.to_thread(self.store.document_by_path, str(resolved))
        if existing is not None and existing.content_hash == digest and not self.options.force:
            return "unchanged", 0
        loaded = await asyncio.to_thread(load, resolved, data)
        chunked = chunk_document(loaded, ChunkOptions(self.options.chunk_chars))
        if not any(c.text.strip() for c in chunked.chunks):
            hint = " (a scanned PDF needs OCR first)" if loaded.format == "pdf" else ""
            raise IngestError(f"{path}: no text found{hint}")
        by_model = getattr(self.summarizer, "model", None)
        if by_model is not None:
            notify(
                str(path),
                f"summarising {len(chunked.sections)} sections with {by_model.model_name}…",
            )
        drafts = await summarize_document(loaded.title, chunked, self.summarizer)
        rows = _rows(str(resolved), digest, len(data), loaded.title, loaded.format, chunked, drafts)
        texts = [c.text for c in rows.chunks] + [s.text for s in rows.summaries]
        if self.embedder is not None:
            said = partial(notify, str(path)) if len(texts) > _EMBED_NOTICE else None
            embed_started = time.perf_counter()
            matrix = await _embed(self.embedder, texts, said)
            report.embed_seconds += time.perf_counter() - embed_started
            report.embedded += len(texts)
            rows.chunk_vectors = matrix[: len(rows.chunks)]
            rows.summary_vectors = matrix[len(rows.chunks) :]
        await asyncio.to_thread(self.store.replace_document, rows)
        report.sections += len(rows.sections)
        return ("added" if existing is None else "updated"), len(rows.chunks)


class _Tracker:
    """Counts what is done and turns it into :class:`IngestProgress` for the caller."""

    def __init__(
        self,
        report: IngestReport,
        files: int,
        size: int,
        started: float,
        progress: Progress | None,
    ) -> None:
        self.report = report
        self.files_total = files
        self.bytes_total = size
        self.files_done = 0
        self.bytes_done = 0
        self.bytes_at_start = 0
        self.started = started
        self.progress = progress

    def file_done(self, path: str, size: int, message: str) -> None:
        self.files_done += 1
        self.bytes_done += size
        if self.files_done == 1:  # the rate is measured from here: the first file also
            self.started = time.perf_counter()  # paid for loading the embedding model
            self.bytes_at_start = self.bytes_done
        self.notify(path, message)

    def notify(self, path: str, message: str) -> None:
        if self.progress is None:
            return
        elapsed = time.perf_counter() - self.started
        left = self.bytes_total - self.bytes_done
        measured = self.bytes_done - self.bytes_at_start
        eta = elapsed / measured * left if measured > 0 else (0.0 if left == 0 else None)
        report = self.report
        status = IngestProgress(
            path, message, self.files_done, self.files_total, self.bytes_done,
            self.bytes_total, report.chunks, report.sections, report.embedded, eta,
        )  # fmt: skip
        self.progress(status)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0  # reading it will report the error


def _walk(root: Path) -> Iterator[Path]:
    """Files below ``root`` that git would see, in a stable order, skipping hidden files and
    dependency folders."""
    for _rel, entry in walk_files(root, prune=_pruned):
        if not entry.name.startswith("."):
            yield Path(entry.path)


def supported_files(root: Path) -> list[Path]:
    """The files below ``root`` that ``add`` of the directory would ingest."""
    return [path for path in _walk(root) if format_of(path) is not None]


def _pruned(name: str) -> bool:
    return name.startswith(".") or name in _SKIP_DIRS


def _read(path: Path, limit: int) -> tuple[Path, bytes]:
    """The absolute path (documents are keyed by it) and the file's bytes."""
    try:
        path = path.resolve()
        size = path.stat().st_size
        if size > limit:
            raise IngestError(
                # in the setting's unit (MiB): 21.6 decimal MB had been "over the 21 MB limit"
                f"{path}: {size / 2**20:.1f} MB is over the {limit / 2**20:g} MB limit "
                "(knowledge.max_file_mb)"
            )
        return path, path.read_bytes()
    except OSError as exc:
        raise IngestError(f"{path}: cannot read it ({exc.strerror or exc})") from None


async def _embed(
    embedder: Embedder, texts: list[str], said: Callable[[str], None] | None = None
) -> Matrix:
    """Vectors of ``texts`` in order, embedded in groups of similar length.

    A batch is padded to its longest text, and a document's texts range from a heading to
    a full chunk: measured on the bench's pages (17 texts of 44-873 characters), one call
    took 2.1 s and length-sorted groups 0.5 s for the same vectors.  Each group is its own
    step, so ``said`` hears how far a large file is ("embedding 320/901 texts") and Ctrl-C
    stops after the group under way (the whole file in one step had kept the process alive
    for a minute after it, with nothing shown).
    """
    import numpy as np

    matrix = np.empty((len(texts), embedder.dimension), dtype=np.float32)
    done = 0
    for group in length_groups([len(t) for t in texts]):
        if said is not None:
            said(f"embedding {done}/{len(texts)} texts…")
        vectors = await asyncio.to_thread(embedder.embed, [texts[i] for i in group])
        matrix[group] = np.asarray(vectors, dtype=np.float32).reshape(len(group), -1)
        done += len(group)
    return matrix


def length_groups(lengths: list[int], ratio: float = 1.5, cap: int = 64) -> list[list[int]]:
    """Indices sorted by length, cut wherever the longest would exceed ``ratio`` times the
    group's shortest (texts under 100 characters count as 100: they cost little anyway)."""
    groups: list[list[int]] = []
    current: list[int] = []
    for index in sorted(range(len(lengths)), key=lengths.__getitem__):
        floor = max(lengths[current[0]], 100) if current else 0
        if current and (len(current) >= cap or lengths[index] > ratio * floor):
            groups.append(current)
            current = []
        current.append(index)
    if current:
        groups.append(current)
    return groups


def _rows(
    path: str,
    digest: str,
    size: int,
    title: str,
    kind: str,
    chunked: Chunked,
    drafts: list[SummaryDraft],
) -> DocumentRows:
    """Records with ids ``<doc>.<version>.<part>``: parents, neighbours and summaries linked."""
    doc = document_id(path)
    base = f"{doc}.{digest[:10]}"

    def section_id(ordinal: int) -> str:
        return f"{base}.s{ordinal}"

    sections = [
        SectionRecord(
            section_id(s.ordinal),
            doc,
            None if s.parent is None else section_id(s.parent),
            s.ordinal,
            s.level,
            s.title,
            s.heading_path,
        )
        for s in chunked.sections
    ]
    ids = [f"{base}.c{c.ordinal}" for c in chunked.chunks]
    chunks = [
        ChunkRecord(
            ids[i],
            doc,
            section_id(c.section),
            c.ordinal,
            c.text,
            ids[i - 1] if i > 0 else None,
            ids[i + 1] if i + 1 < len(ids) else None,
        )
        for i, c in enumerate(chunked.chunks)
    ]
    summaries = [
        SummaryRecord(
            f"{base}.d" if d.section is None else f"{base}.m{d.section}",
            doc,
            None if d.section is None else section_id(d.section),
            d.level,
            d.text,
            d.method,
        )
        for d in drafts
    ]
    methods = sorted({d.method for d in drafts})
    info = DocumentInfo(
        doc, path, digest[:10], digest, kind, title, size, time.time(), len(chunks),
        len(sections), "+".join(methods),
    )  # fmt: skip
    return DocumentRows(info, sections, chunks, summaries)
