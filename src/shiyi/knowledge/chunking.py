"""Structure-aware chunking: sections from headings, chunks packed inside one section.

A chunk never spans two sections, so its parent section is exact; it is packed from whole
paragraphs (a paragraph larger than a chunk is cut at sentences, code at lines), so a chunk
rarely starts mid-thought.  Chunks are numbered in document order: chunk ``n``'s neighbours
are ``n - 1`` and ``n + 1``, which parent/neighbour expansion follows at search time.

Section 0 is the document itself (its title, the text before the first heading); every
heading opens a section under the nearest open section of a lower level.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from shiyi.knowledge.models import Block, ChunkDraft, LoadedDocument, SectionDraft

PATH_SEPARATOR = " › "
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=\S)|(?<=[。！？；])")


@dataclass(slots=True, frozen=True)
class ChunkOptions:
    max_chars: int = 900
    """About 220 English tokens: under MiniLM's 256-token window, so no chunk is truncated
    when embedded."""


@dataclass(slots=True, frozen=True)
class Chunked:
    sections: list[SectionDraft]
    chunks: list[ChunkDraft]


def chunk_document(document: LoadedDocument, options: ChunkOptions | None = None) -> Chunked:
    options = options or ChunkOptions()
    sections = [SectionDraft(0, document.title, 0, None, document.title)]
    bodies: dict[int, list[Block]] = {0: []}
    open_sections: list[SectionDraft] = [sections[0]]
    for block in document.blocks:
        if block.kind == "heading":
            if _repeats_title(block, document, sections):
                continue  # "# Title" at the top names the document, not a section in it
            while len(open_sections) > 1 and open_sections[-1].level >= block.level:
                open_sections.pop()
            parent = open_sections[-1]
            section = SectionDraft(
                len(sections),
                block.text,
                block.level,
                parent.ordinal,
                parent.heading_path + PATH_SEPARATOR + block.text,
            )
            sections.append(section)
            open_sections.append(section)
            bodies[section.ordinal] = []
        else:
            bodies[open_sections[-1].ordinal].append(block)
    chunks: list[ChunkDraft] = []
    for section in sections:
        blocks = bodies[section.ordinal]
        section.text = "\n\n".join(b.text for b in blocks)
        for text in pack(blocks, options.max_chars):
            chunks.append(ChunkDraft(len(chunks), section.ordinal, text))
    return Chunked(sections, chunks)


def _repeats_title(block: Block, document: LoadedDocument, sections: list[SectionDraft]) -> bool:
    return len(sections) == 1 and block.level == 1 and block.text == document.title


def pack(blocks: list[Block], max_chars: int) -> list[str]:
    """Greedily join the pieces of ``blocks`` into texts of at most ``max_chars``."""
    chunks: list[str] = []
    current: list[str] = []
    size = 0
    for piece in _pieces(blocks, max_chars):
        if current and size + 2 + len(piece) > max_chars:
            chunks.append("\n\n".join(current))
            current, size = [], 0
        current.append(piece)
        size += len(piece) + (2 if size else 0)
    if current:
        chunks.append("\n\n".join(current))
    return chunks


def _pieces(blocks: list[Block], max_chars: int) -> Iterator[str]:
    for block in blocks:
        text = block.text.strip("\n")
        if not text.strip():
            continue
        if len(text) <= max_chars:
            yield text
        elif block.kind == "code":
            yield from _join_units(text.split("\n"), max_chars, "\n")
        else:
            # Lines first (a list keeps its items), then sentences within a long line.
            yield from _join_units(
                [part for line in text.split("\n") for part in _sentences(line, max_chars)],
                max_chars,
                "\n",
            )


def _sentences(line: str, max_chars: int) -> list[str]:
    if len(line) <= max_chars:
        return [line]
    sentences = [s for s in SENTENCE_END.split(line) if s.strip()]
    return list(_join_units(sentences, max_chars, " "))


def _join_units(units: list[str], max_chars: int, glue: str) -> Iterator[str]:
    """Units (sentences or lines) joined up to ``max_chars``; a unit longer than that alone
    is cut hard, since a chunk past the embedder's window would be silently truncated."""
    current = ""
    for unit in units:
        while len(unit) > max_chars:
            if current:
                yield current
                current = ""
            yield unit[:max_chars]
            unit = unit[max_chars:]
        candidate = f"{current}{glue}{unit}" if current else unit
        if len(candidate) > max_chars:
            yield current
            current = unit
        else:
            current = candidate
    if current.strip():
        yield current
