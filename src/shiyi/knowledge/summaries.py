"""The summary index (seed 001, 5.2.4): a summary per document and per section.

Search matches these summaries first and then descends to the chunks beneath them, which
finds a chunk that never names what the question asks about ("It runs in eu-west-2") when its
section or document does.  Summaries come from the ``fast`` model; without a usable one (or
when a call fails) they are extractive: the heading path, the lead sentence and the sentences
densest in the section's own key terms.  Each is stored prefixed with its heading path, so the
titles are searchable too.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Sequence
from typing import Protocol

from shiyi.errors import ModelError
from shiyi.index.text import tokenize
from shiyi.knowledge.chunking import SENTENCE_END, Chunked
from shiyi.knowledge.models import SectionDraft, SummaryDraft, SummaryLevel
from shiyi.llm.assemble import ReplyAssembler
from shiyi.llm.protocol import ChatModel
from shiyi.llm.types import Message

log = logging.getLogger(__name__)

EXTRACTIVE = "extractive"
SUMMARY_CHARS = 360
SHORT_SECTION_CHARS = 320
"""A section this short is its own summary: a model call would not make it shorter."""
_MODEL_INPUT_CHARS = 6000
_CONCURRENCY = 4

_PROMPT = (
    "You write entries for a document search index. Summarise the given {level} in one to "
    "three sentences (at most 60 words): say what it is about and name its key terms, "
    "numbers, names and identifiers exactly. Write in the language of the text. Reply with "
    "the summary only, no preamble."
)


class Summarizer(Protocol):
    async def summarize(self, heading_path: str, text: str, level: SummaryLevel) -> SummaryDraft:
        """A summary of ``text`` (its ``section`` field is filled in by the caller)."""
        ...


class ExtractiveSummarizer:
    """Deterministic and offline: the lead sentence plus the most term-dense sentences."""

    def __init__(self, max_chars: int = SUMMARY_CHARS) -> None:
        self.max_chars = max_chars

    async def summarize(self, heading_path: str, text: str, level: SummaryLevel) -> SummaryDraft:
        return SummaryDraft(level, None, self.extract(heading_path, text), EXTRACTIVE)

    def extract(self, heading_path: str, text: str) -> str:
        summary = " ".join(key_sentences(text, self.max_chars))
        return f"{heading_path}: {_fit(summary, self.max_chars)}"


class ModelSummarizer:
    """The ``fast`` model's summaries, extractive for short sections and after a failure.

    The first failed call switches the rest of the ingest to extractive: a model that is down
    would otherwise cost a timeout per section.
    """

    def __init__(self, model: ChatModel, max_chars: int = SUMMARY_CHARS) -> None:
        self.model = model
        self.fallback = ExtractiveSummarizer(max_chars)
        self.failed: str | None = None

    async def summarize(self, heading_path: str, text: str, level: SummaryLevel) -> SummaryDraft:
        if self.failed is not None or len(text) <= SHORT_SECTION_CHARS:
            return await self.fallback.summarize(heading_path, text, level)
        try:
            summary = await self._ask(heading_path, text, level)
        except ModelError as exc:
            if self.failed is None:
                log.warning("summaries fall back to extractive: %s", exc)
            self.failed = str(exc)
            return await self.fallback.summarize(heading_path, text, level)
        if not summary:
            return await self.fallback.summarize(heading_path, text, level)
        return SummaryDraft(level, None, f"{heading_path}: {summary}", self.model.model_name)

    async def _ask(self, heading_path: str, text: str, level: SummaryLevel) -> str:
        messages = [
            Message("system", _PROMPT.format(level=level)),
            Message("user", f"{level.title()}: {heading_path}\n\n{text[:_MODEL_INPUT_CHARS]}"),
        ]
        assembler = ReplyAssembler()
        async for chunk in self.model.stream(messages, temperature=0.0, max_tokens=200):
            assembler.add(chunk)
        return " ".join("".join(assembler.text).split())


async def summarize_document(
    title: str, chunked: Chunked, summarizer: Summarizer
) -> list[SummaryDraft]:
    """A summary for every section with text of its own, then one for the document, made
    from the section summaries (a model never reads a whole long document at once)."""
    gate = asyncio.Semaphore(_CONCURRENCY)

    async def one(section: SectionDraft) -> SummaryDraft:
        async with gate:
            draft = await summarizer.summarize(section.heading_path, section.text, "section")
        return SummaryDraft("section", section.ordinal, draft.text, draft.method)

    wanted = [s for s in chunked.sections if s.text.strip()]
    sections = list(await asyncio.gather(*(one(s) for s in wanted)))
    document = await summarizer.summarize(title, _document_digest(chunked, sections), "document")
    return [SummaryDraft("document", None, document.text, document.method), *sections]


def _document_digest(chunked: Chunked, sections: Sequence[SummaryDraft]) -> str:
    """What a document summary is made from: its opening text, its outline and the
    sections' summaries (without their heading prefixes, which the outline already has)."""
    intro = chunked.sections[0].text
    outline = [s.title for s in chunked.sections[1:] if s.level <= 2]
    parts = []
    if intro.strip():
        parts.append(" ".join(key_sentences(intro, SUMMARY_CHARS)))
    if outline:
        parts.append("Sections: " + "; ".join(outline[:20]) + ".")
    parts.extend(s.text.split(": ", 1)[-1] for s in sections if s.section != 0)
    return "\n".join(parts)


def key_sentences(text: str, max_chars: int) -> list[str]:
    """The first sentence, then the sentences whose terms recur most in ``text`` (mean term
    frequency), in their original order, within ``max_chars``."""
    sentences = [" ".join(s.split()) for s in SENTENCE_END.split(text) if s.strip()]
    if not sentences:
        return []
    counts = Counter(tokenize(text))

    def density(sentence: str) -> float:
        terms = tokenize(sentence)
        return sum(counts[t] for t in terms) / (len(terms) + 2) if terms else 0.0

    chosen = {0}
    room = max_chars - len(sentences[0])
    for index in sorted(range(1, len(sentences)), key=lambda i: (-density(sentences[i]), i)):
        if len(sentences[index]) + 1 <= room:
            chosen.add(index)
            room -= len(sentences[index]) + 1
    return [sentences[i] for i in sorted(chosen)]


def _fit(text: str, max_chars: int) -> str:
    return text if len(text) <= max_chars else text[: max_chars - 1].rstrip() + "…"
