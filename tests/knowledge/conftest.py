"""Fixtures: a real MiniLM embedder, a knowledge base in the test's data dir, small corpora."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from shiyi.config import Settings
from shiyi.index.embeddings import MiniLMEmbedder
from shiyi.knowledge import IngestReport, KnowledgeBase
from shiyi.llm.protocol import ChatModel

FILLER = [
    "Operators review the dashboards each morning and note anything unusual in the log book.",
    "Changes to the cluster are announced in the team channel a day before they happen.",
    "The runbook lists the commands for every routine task and who may run them.",
    "Capacity is reviewed every quarter against the growth forecast of the product teams.",
    "Incidents get a written review within a week, with actions assigned to owners.",
    "Access to production is granted per request and expires after twelve hours.",
]
PROJECTS = {
    # name: (what it is, region, on-call size, escalation contact)
    "Falcon": ("the payments platform", "eu-west-2", "five", "Priya"),
    "Heron": ("the search platform", "us-east-1", "three", "Marco"),
    "Osprey": ("the analytics warehouse", "ap-south-1", "four", "Lena"),
    "Kestrel": ("the notification service", "sa-east-1", "six", "Tomas"),
}


@pytest.fixture(scope="session")
def embedder() -> MiniLMEmbedder:
    """One loaded model for every test (loading it per test would cost seconds each)."""
    return MiniLMEmbedder()


def project_doc(name: str) -> str:
    """A project page whose sections never repeat the project's name: only the document's
    title and introduction say which project the region and team belong to."""
    what, region, size, contact = PROJECTS[name]
    return (
        f"# Project {name}\n\nProject {name} is {what} of the Tern company.\n\n"
        f"## Infrastructure\n\nIt runs in the {region} region across availability zones.\n\n"
        f"## Team\n\nThe on-call rotation has {size} engineers; escalation goes to {contact}.\n"
    )


def vault_doc() -> str:
    """A long section (longer than a parent is returned whole) in which the question's words
    are in one chunk and the answer in the next."""
    paragraphs = [
        *FILLER[:3],
        "The rotation schedule for the signing keys of the Vault cluster is described next. "
        "It applies to the token signing keys, the transit encryption keys and the keys that "
        "sign audit records, in every environment that runs a Vault cluster.",
        "The interval is 45 days; the previous one stays valid for a week after that.",
        *FILLER[3:],
        *FILLER,
        *FILLER,
    ]
    body = "\n\n".join(paragraphs)
    return (
        f"# Vault operations\n\n## Key management\n\n{body}\n\n## Backups\n\n"
        "Backups of the Vault cluster are encrypted with a key held by the storage team. They "
        "are copied every night to a second site, where they are kept for ninety days.\n\n"
        "Restores are tested monthly on a scratch cluster by the on-call engineer, and each "
        "test restores the whole "
        "cluster from the newest copy at the second site.\n"
    )


def write_corpus(root: Path) -> dict[str, Path]:
    root.mkdir(parents=True, exist_ok=True)
    files: dict[str, Path] = {}
    for name in PROJECTS:
        files[name] = root / f"{name.lower()}.md"
        files[name].write_text(project_doc(name), encoding="utf-8")
    files["vault"] = root / "vault.md"
    files["vault"].write_text(vault_doc(), encoding="utf-8")
    files["auth"] = root / "auth.txt"
    files["auth"].write_text(
        "Sign-in failures\n\nWhen authentication fails with error AUTH-401, clear the session "
        "cookie and sign in again.\n\nPersistent failures go to the identity team.\n",
        encoding="utf-8",
    )
    return files


@pytest.fixture
def corpus(tmp_path: Path) -> dict[str, Path]:
    return write_corpus(tmp_path / "corpus")


@pytest.fixture
def kb_settings(settings: Settings) -> Settings:
    settings.knowledge.chunk_chars = 300  # small chunks, so sections hold several
    return settings


class Opener:
    """Opens knowledge bases on the test's data dir, closing them all at the end."""

    def __init__(self, settings: Settings, embedder: MiniLMEmbedder) -> None:
        self.settings = settings
        self.embedder = embedder
        self.opened: list[KnowledgeBase] = []

    def __call__(self, fast: ChatModel | None = None, *, embedded: bool = True) -> KnowledgeBase:
        kb = KnowledgeBase.open(
            self.settings, embedder=self.embedder if embedded else None, fast_model=fast
        )
        self.opened.append(kb)
        return kb


@pytest.fixture
def open_kb(kb_settings: Settings, embedder: MiniLMEmbedder) -> Iterator[Opener]:
    opener = Opener(kb_settings, embedder)
    yield opener
    for kb in opener.opened:
        kb.close()


def add(kb: KnowledgeBase, *paths: Path, force: bool = False) -> IngestReport:
    return asyncio.run(kb.add(list(paths), force=force))


def make_pdf(pages: list[list[str]], *, title: str = "") -> bytes:
    """A minimal valid PDF: one page per entry, each line drawn with Helvetica."""

    def escape(text: str) -> str:
        return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")

    objects: list[bytes] = []
    kids = " ".join(f"{4 + 2 * i} 0 R" for i in range(len(pages)))
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>".encode())
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    for i, lines in enumerate(pages):
        drawn = " ".join(f"({escape(line)}) Tj 0 -16 Td" for line in lines)
        stream = f"BT /F1 12 Tf 72 720 Td {drawn} ET".encode()
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            f"/Resources << /Font << /F1 3 0 R >> >> /Contents {5 + 2 * i} 0 R >>".encode()
        )
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    info = None
    if title:
        objects.append(f"<< /Title ({escape(title)}) >>".encode())
        info = len(objects)
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    trailer = f"<< /Size {len(objects) + 1} /Root 1 0 R"
    trailer += f" /Info {info} 0 R >>" if info else " >>"
    out += f"trailer\n{trailer}\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)
