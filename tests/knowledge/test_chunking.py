"""Structure-aware chunking: a section tree from headings, chunks packed within sections."""

from __future__ import annotations

from pathlib import Path

from shiyi.knowledge.chunking import ChunkOptions, chunk_document
from shiyi.knowledge.loaders import load

DOC = """# Guide

Opening words.

## Install

Install step one.

### Linux

Use the package.

## Use

Run it.
"""


def test_sections_form_a_tree_with_heading_paths() -> None:
    chunked = chunk_document(load(Path("guide.md"), DOC.encode()))
    tree = [(s.ordinal, s.parent, s.heading_path) for s in chunked.sections]
    assert tree == [
        (0, None, "Guide"),  # the "# Guide" title names the document, not a section
        (1, 0, "Guide › Install"),
        (2, 1, "Guide › Install › Linux"),
        (3, 0, "Guide › Use"),
    ]
    assert [s.text for s in chunked.sections] == [
        "Opening words.",
        "Install step one.",
        "Use the package.",
        "Run it.",
    ]


def test_chunks_stay_inside_their_section_in_document_order() -> None:
    chunked = chunk_document(load(Path("guide.md"), DOC.encode()))
    assert [(c.ordinal, c.section, c.text) for c in chunked.chunks] == [
        (0, 0, "Opening words."),
        (1, 1, "Install step one."),
        (2, 2, "Use the package."),
        (3, 3, "Run it."),
    ]


def test_long_text_is_packed_up_to_the_limit_at_sentence_and_line_boundaries() -> None:
    sentences = " ".join(f"Sentence number {i} says something useful." for i in range(40))
    listing = "\n".join(f"- item {i} of the list" for i in range(30))
    text = f"# T\n\n{sentences}\n\n{listing}\n"
    chunked = chunk_document(load(Path("t.md"), text.encode()), ChunkOptions(max_chars=200))
    assert all(len(c.text) <= 200 for c in chunked.chunks)
    assert len(chunked.chunks) > 5
    for chunk in chunked.chunks:
        assert chunk.text.startswith(("Sentence number", "- item")), chunk.text
    joined = " ".join(c.text for c in chunked.chunks)
    assert all(f"Sentence number {i} says" in joined for i in range(40))
    # A list keeps one item per line (its newlines are not flattened into a paragraph).
    assert any("- item 3 of the list\n- item 4 of the list" in c.text for c in chunked.chunks)


def test_a_word_longer_than_a_chunk_is_cut_hard() -> None:
    chunked = chunk_document(load(Path("x.txt"), ("y" * 450).encode()), ChunkOptions(200))
    assert [len(c.text) for c in chunked.chunks] == [200, 200, 50]


def test_code_is_split_at_lines() -> None:
    code = "\n".join(f"line_{i} = compute({i})" for i in range(60))
    chunked = chunk_document(load(Path("m.py"), code.encode()), ChunkOptions(max_chars=300))
    assert len(chunked.chunks) > 3
    assert all(c.text.startswith("line_") for c in chunked.chunks)
