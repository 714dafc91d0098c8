"""Ingestion on a real SQLite file with real embeddings: incremental by content hash, changed
files replace their chunks everywhere, bad files are reported and lose nothing."""

from __future__ import annotations

import asyncio
from itertools import pairwise
from pathlib import Path

from shiyi.knowledge import KnowledgeBase
from shiyi.knowledge.ingest import IngestProgress
from tests.knowledge.conftest import Opener, add, make_pdf


def chunk_ids(kb: KnowledgeBase, path: Path) -> set[str]:
    doc = kb.store.document_by_path(str(path.resolve()))
    assert doc is not None
    return {c.id for c in kb.store.chunks_of_documents([doc.id])}


def keyword_ids(kb: KnowledgeBase, query: str) -> set[str]:
    return {s.id for s in kb.store.keyword_search("chunk", query, 50)}


def test_add_stores_sections_chunks_summaries_and_vectors(
    open_kb: Opener, corpus: dict[str, Path]
) -> None:
    kb = open_kb()
    report = add(kb, corpus["vault"], corpus["Falcon"])
    assert sorted(report.added) == sorted(str(corpus[k]) for k in ("vault", "Falcon"))
    assert not report.failed
    counts = kb.counts()
    assert counts["documents"] == 2
    assert counts["chunks"] == report.chunks == 13  # 300-char chunks: 10 + 3
    doc = kb.store.document_by_path(str(corpus["vault"].resolve()))
    assert doc is not None
    assert doc.title == "Vault operations"
    assert doc.summary_method == "extractive"  # no fast model here
    chunks = kb.store.chunks_of_documents([doc.id])
    # Neighbour links follow document order, parents are the chunk's own section.
    for before, after in pairwise(chunks):
        assert before.next_id == after.id
        assert after.prev_id == before.id
    sections = kb.store.sections([c.section_id for c in chunks])
    assert {s.heading_path for s in sections.values()} == {
        "Vault operations › Key management",
        "Vault operations › Backups",
    }
    assert len(kb.store.vectors["chunk"]) == counts["chunks"]
    assert len(kb.store.vectors["summary"]) == counts["summaries"]


def test_readding_unchanged_files_skips_them(open_kb: Opener, corpus: dict[str, Path]) -> None:
    kb = open_kb()
    first = add(kb, corpus["vault"].parent)
    before = chunk_ids(kb, corpus["vault"])
    again = add(kb, corpus["vault"].parent)
    assert len(first.added) == 6
    assert sorted(again.unchanged) == sorted(first.added)
    assert again.chunks == 0
    assert again.embed_seconds == 0.0  # nothing was embedded
    assert chunk_ids(kb, corpus["vault"]) == before
    forced = add(kb, corpus["vault"], force=True)
    assert forced.updated == [str(corpus["vault"])]


def test_a_changed_file_replaces_its_old_chunks_everywhere(
    open_kb: Opener, corpus: dict[str, Path]
) -> None:
    kb = open_kb()
    add(kb, corpus["Falcon"], corpus["Heron"])
    old = chunk_ids(kb, corpus["Falcon"])
    heron = chunk_ids(kb, corpus["Heron"])
    assert old & keyword_ids(kb, "Priya")
    corpus["Falcon"].write_text(
        "# Project Falcon\n\nFalcon moved to the zephyr-9 datacentre in March.\n",
        encoding="utf-8",
    )
    report = add(kb, corpus["Falcon"])
    assert report.updated == [str(corpus["Falcon"])]
    new = chunk_ids(kb, corpus["Falcon"])
    assert new and not new & old
    assert not kb.store.chunks(old)  # rows gone
    assert not keyword_ids(kb, "Priya")  # keyword entries gone
    assert keyword_ids(kb, "zephyr-9") == new
    assert len(kb.store.vectors["chunk"]) == len(new | heron)  # vectors gone
    assert chunk_ids(kb, corpus["Heron"]) == heron  # other documents untouched
    assert kb.counts()["documents"] == 2


def test_remove_a_deleted_file_and_a_directory(open_kb: Opener, corpus: dict[str, Path]) -> None:
    kb = open_kb()
    add(kb, corpus["vault"].parent)
    gone = chunk_ids(kb, corpus["Osprey"])
    corpus["Osprey"].unlink()
    removed, unmatched = kb.remove([str(corpus["Osprey"]), "/no/such/doc.md"])
    assert [d.path for d in removed] == [str(corpus["Osprey"].resolve())]
    assert unmatched == ["/no/such/doc.md"]
    assert not kb.store.chunks(gone)
    assert not keyword_ids(kb, "Lena")
    assert len(kb.store.vectors["chunk"]) == kb.counts()["chunks"]
    removed, _ = kb.remove([str(corpus["vault"].parent)])
    assert len(removed) == 5
    assert kb.counts() == {"documents": 0, "sections": 0, "chunks": 0, "summaries": 0}
    assert kb.store.keywords.count() == 0


def test_remove_by_document_id(open_kb: Opener, corpus: dict[str, Path]) -> None:
    kb = open_kb()
    add(kb, corpus["auth"])
    (doc,) = kb.documents()
    removed, unmatched = kb.remove([doc.id])
    assert [d.id for d in removed] == [doc.id] and not unmatched
    assert kb.documents() == []


def test_bad_files_are_reported_and_the_batch_goes_on(open_kb: Opener, tmp_path: Path) -> None:
    docs = tmp_path / "mixed"
    docs.mkdir()
    (docs / "good.md").write_text("# Good\n\nThe answer is 42.\n", encoding="utf-8")
    (docs / "broken.pdf").write_bytes(b"%PDF-1.7\n%%garbage without objects")
    (docs / "blob.txt").write_bytes(b"\x00\x01\x02\x03")
    (docs / "empty.md").write_text("\n\n", encoding="utf-8")
    (docs / "photo.png").write_bytes(b"\x89PNG\r\n")
    (docs / ".hidden.md").write_text("secret", encoding="utf-8")
    (docs / "node_modules").mkdir()
    (docs / "node_modules" / "dep.md").write_text("dependency docs", encoding="utf-8")
    (docs / "report.pdf").write_bytes(make_pdf([["The audit passed in 2024."]]))
    kb = open_kb()
    report = add(kb, docs, tmp_path / "missing.md", docs / "photo.png")
    assert sorted(Path(p).name for p in report.added) == ["good.md", "report.pdf"]
    reasons = dict(report.failed)
    assert "cannot read this PDF" in reasons[str(docs / "broken.pdf")]
    assert "looks binary" in reasons[str(docs / "blob.txt")]
    assert "no text found" in reasons[str(docs / "empty.md")]
    assert "no such file or directory" in reasons[str(tmp_path / "missing.md")]
    assert "unsupported file type .png" in reasons[str(docs / "photo.png")]  # named: an error
    assert report.skipped == [str(docs / "photo.png")]  # met in the directory: skipped
    assert {d.title for d in kb.documents()} == {"Good", "report"}


def test_a_file_that_turns_bad_keeps_its_stored_version(open_kb: Opener, tmp_path: Path) -> None:
    kb = open_kb()
    path = tmp_path / "manual.pdf"
    path.write_bytes(make_pdf([["Torque the bolts to 35 newton metres."]]))
    add(kb, path)
    stored = chunk_ids(kb, path)
    path.write_bytes(b"%PDF-1.4\ntruncated in the middle of a cop")
    report = add(kb, path)
    assert [p for p, _ in report.failed] == [str(path)]
    assert chunk_ids(kb, path) == stored
    assert keyword_ids(kb, "newton") == stored


def test_orphan_index_entries_are_never_shown_and_get_swept(
    open_kb: Opener, corpus: dict[str, Path]
) -> None:
    kb = open_kb()
    add(kb, corpus["auth"])
    # What a crash between indexing and the row transaction leaves behind.
    kb.store.keywords.add([("dghost.0000000000.c0", "chunk", "AUTH-401 ghost entry")])
    result = kb.searcher.retrieve("AUTH-401", options=kb.options(rewrite=False))
    assert result.passages
    assert all(p.chunk_id != "dghost.0000000000.c0" for p in result.passages)
    assert kb.store.sweep() == 1
    assert kb.store.sweep() == 0


def test_a_knowledge_base_embedded_with_another_model_is_refused(
    open_kb: Opener, corpus: dict[str, Path]
) -> None:
    import pytest

    from shiyi.errors import StorageError
    from shiyi.knowledge.store import KnowledgeStore

    kb = open_kb()
    add(kb, corpus["auth"])
    with pytest.raises(StorageError, match="was embedded with all-MiniLM-L6-v2"):
        KnowledgeStore(kb.store.path, embed_model="other-model", dimension=384)


def test_texts_are_embedded_in_groups_of_similar_length() -> None:
    from shiyi.knowledge.ingest import length_groups

    lengths = [900, 40, 120, 850, 60, 130, 400, 170]
    groups = length_groups(lengths)
    assert sorted(i for g in groups for i in g) == list(range(len(lengths)))
    assert groups == [[1, 4, 2, 5], [7], [6], [3, 0]]
    for group in groups:
        shortest = max(min(lengths[i] for i in group), 100)
        assert max(lengths[i] for i in group) <= 1.5 * shortest
    assert [len(g) for g in length_groups([50] * 130)] == [64, 64, 2]


def test_adding_a_folder_honours_its_gitignore(open_kb: Opener, tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    (folder / "drafts").mkdir(parents=True)
    (folder / ".gitignore").write_text("drafts/\n*.tmp.md\n")
    (folder / "kept.md").write_text("# Kept\n\nThe heron nests by the lake.\n")
    (folder / "scratch.tmp.md").write_text("# Scratch\n\nNot for the knowledge base.\n")
    (folder / "drafts" / "wip.md").write_text("# Draft\n\nUnfinished thoughts.\n")
    report = add(open_kb(), folder)
    assert report.added == [str((folder / "kept.md").resolve())]


def test_progress_counts_files_bytes_chunks_and_embeddings(
    open_kb: Opener, corpus: dict[str, Path]
) -> None:
    kb = open_kb()
    seen: list[IngestProgress] = []
    files = [corpus["vault"], corpus["Falcon"], corpus["auth"]]
    report = asyncio.run(kb.add(files, seen.append))
    done = [s for s in seen if s.message.startswith("added")]
    assert [s.files_done for s in done] == [1, 2, 3]
    assert {s.files_total for s in seen} == {3}
    assert {s.bytes_total for s in seen} == {sum(f.stat().st_size for f in files)}
    assert done[-1].bytes_done == done[-1].bytes_total
    last = done[-1]
    assert (last.chunks, last.sections, last.embedded) == (
        report.chunks,
        report.sections,
        report.embedded,
    )
    assert report.embedded == kb.counts()["chunks"] + kb.counts()["summaries"]
    assert [s.eta_seconds is None for s in done] == [True, False, False]
    assert done[-1].eta_seconds == 0


def test_a_large_file_says_how_far_its_embedding_is(open_kb: Opener, tmp_path: Path) -> None:
    """A 616 KB file had sat at "embedding 901 texts…" for a minute, and Ctrl-C waited for
    all of them: each group of texts is now a step of its own, said as it starts."""
    big = tmp_path / "big.md"
    big.write_text(
        "# Almanac\n\n"
        + "".join(
            f"## Entry {i}\n\nThe tide table for harbour {i} is posted at dawn.\n\n"
            for i in range(90)
        )
    )
    seen: list[IngestProgress] = []
    report = asyncio.run(open_kb().add([big], seen.append))
    steps = [s.message for s in seen if s.message.startswith("embedding ")]
    total = report.embedded
    assert total > 64 and steps[0] == f"embedding 0/{total} texts…"
    counts = [int(m.split()[1].split("/")[0]) for m in steps]
    assert len(counts) >= 2 and counts == sorted(counts) and 0 < counts[-1] < total
