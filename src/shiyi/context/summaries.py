"""Block summaries and session digests, cached in SQLite and computed off the reply path.

The context builder only *reads* the cache: a summary is used once it is ready.  After a
reply, :meth:`Summarizer.summarize_blocks` runs as a background task to fill the cache with
the ``fast`` model, falling back to the extractive functions when there is no usable model.
Nothing here raises to its caller: a failed summary must never fail a conversation.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import threading
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

from shiyi.context.compression import (
    DIGEST_PREFIX,
    SUMMARY_PREFIX,
    Block,
    extractive_digest,
    extractive_summary,
)
from shiyi.errors import ModelError
from shiyi.index.cache_stats import SUMMARY, counter
from shiyi.index.sqlite_file import file_damage, move_aside
from shiyi.llm.assemble import ReplyAssembler
from shiyi.llm.protocol import ChatModel
from shiyi.llm.types import Message

log = logging.getLogger(__name__)

EXTRACTIVE = "extractive"
"""The ``model`` recorded for summaries made without a model."""
_TRANSCRIPT_CHARS = 12_000
_MESSAGE_CHARS = 1_500

_SUMMARY_PROMPT = (
    "You condense a slice of a conversation between a user and an AI assistant, for the "
    "assistant's own memory. Write ONE short paragraph starting with [摘要] that says what "
    "the user asked, what was decided and the key results: keep numbers, names, file paths "
    "and identifiers exactly. Write in the language of the conversation. No preamble."
)
_DIGEST_PROMPT = (
    "You condense a whole conversation between a user and an AI assistant into a digest the "
    "assistant will read instead of the conversation. Use exactly these markdown sections, "
    "each a list of short '- ' items, and omit empty ones: '## Decisions', '## Todos', "
    "'## Conventions', '## Key facts'. Keep numbers, names, file paths and identifiers "
    "exactly. Write the items in the language of the conversation. No preamble."
)


class SummaryStore:
    """SQLite cache of block summaries keyed by :func:`~shiyi.context.compression.block_key`.

    Only a cache: a file SQLite cannot read is moved aside and replaced by an empty one (the
    summaries are recomputed), and a read that fails later is logged and counts as a miss,
    so a damaged ``summaries.sqlite3`` never stops ``run`` or ``serve``.
    """

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.Lock()
        damage = file_damage(path)  # 0 bytes or truncated: SQLite would take it as sound
        if damage is not None:
            move_aside(path, damage)
        try:
            self._db = _open(path)
        except sqlite3.DatabaseError as exc:
            move_aside(path, str(exc))
            self._db = _open(path)

    def get_many(self, keys: Iterable[str]) -> dict[str, str]:
        """Summaries of those ``keys`` that have one."""
        wanted = list(dict.fromkeys(keys))
        found: dict[str, str] = {}
        with self._lock:
            try:
                for i in range(0, len(wanted), 500):  # stay below SQLite's variable limit
                    chunk = wanted[i : i + 500]
                    marks = ",".join("?" * len(chunk))
                    rows = self._db.execute(
                        f"SELECT key, text FROM summaries WHERE key IN ({marks})", chunk
                    )
                    found.update((key, text) for key, text in rows)
            except sqlite3.DatabaseError as exc:
                log.warning("summary cache %s unreadable, summaries skipped: %s", self.path, exc)
        counter(SUMMARY).count(hits=len(found), misses=len(wanted) - len(found))
        return found

    def put(self, key: str, text: str, model: str) -> None:
        # Errors go up: Summarizer.summarize_blocks stops at the first and logs it.
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO summaries (key, text, model, created_at) "
                "VALUES (?, ?, ?, ?)",
                (key, text, model, time.time()),
            )

    def close(self) -> None:
        with self._lock:
            self._db.close()


def _open(path: Path) -> sqlite3.Connection:
    # One connection shared with background tasks (which may run in a worker thread).
    db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
    try:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute(
            "CREATE TABLE IF NOT EXISTS summaries (key TEXT PRIMARY KEY, text TEXT NOT NULL,"
            " model TEXT NOT NULL, created_at REAL NOT NULL)"
        )
        db.execute("SELECT count(*) FROM summaries").fetchone()  # a damaged table fails here
    except sqlite3.DatabaseError:
        db.close()
        raise
    return db


class Summarizer:
    """Fills the summary cache; ``model=None`` (or the tiny local model) means extractive."""

    def __init__(
        self,
        model: ChatModel | None,
        store: SummaryStore,
        *,
        summary_chars: int = 600,
        digest_chars: int = 2000,
    ) -> None:
        self._model = model
        self.store = store
        self._summary_chars = summary_chars
        self._digest_chars = digest_chars
        # Two background runs over the same history would pay twice for the same blocks.
        self._lock = asyncio.Lock()

    async def summarize_blocks(self, blocks: Sequence[Block]) -> int:
        """Compute and store the missing summaries; returns how many were computed."""
        async with self._lock:
            try:
                return await self._summarize_missing(blocks)
            except (sqlite3.Error, OSError) as exc:
                log.warning("summary cache unusable, summaries skipped: %s", exc)
                return 0

    async def _summarize_missing(self, blocks: Sequence[Block]) -> int:
        cached = self.store.get_many(b.key for b in blocks)
        missing = {b.key: b for b in blocks if b.key not in cached}
        model = self._model
        for key, block in missing.items():
            text: str | None = None
            if model is not None:
                text = await self._ask(model, _SUMMARY_PROMPT, block.messages, 400)
                if text is None:
                    model = None  # the model is failing: don't wait on it for every block
            if text:
                self.store.put(key, _strip_label(text), self._model_name())
            else:
                self.store.put(
                    key, extractive_summary(block.messages, self._summary_chars), EXTRACTIVE
                )
        return len(missing)

    async def digest(self, messages: Sequence[Message]) -> str:
        """A session digest (Decisions / Todos / Conventions / Key facts); never raises."""
        if self._model is not None:
            text = await self._ask(self._model, _DIGEST_PROMPT, messages, 800)
            if text:
                return text.removeprefix(DIGEST_PREFIX).strip()
        return extractive_digest(messages, self._digest_chars)

    def _model_name(self) -> str:
        return self._model.model_name if self._model is not None else EXTRACTIVE

    async def _ask(
        self, model: ChatModel, prompt: str, messages: Sequence[Message], max_tokens: int
    ) -> str | None:
        """The model's answer, or None (logged) when it fails or says nothing."""
        request = [Message("system", prompt), Message("user", _transcript(messages))]
        assembler = ReplyAssembler()
        try:
            async for chunk in model.stream(request, temperature=0.0, max_tokens=max_tokens):
                assembler.add(chunk)
        except ModelError as exc:
            log.warning(
                "summary model %s failed, using extractive summary: %s", model.model_name, exc
            )
            return None
        text = "".join(assembler.text).strip()
        return text or None


def _transcript(messages: Sequence[Message]) -> str:
    """The messages as plain text, each clipped, the whole bounded for the fast model."""
    lines = []
    for m in messages:
        body = m.content if len(m.content) <= _MESSAGE_CHARS else m.content[:_MESSAGE_CHARS] + "…"
        calls = "".join(f"\n  -> {c.name}({c.arguments[:200]})" for c in m.tool_calls)
        label = f"tool {m.name}" if m.role == "tool" and m.name else m.role
        lines.append(f"{label}: {body}{calls}")
    text = "\n".join(lines)
    # Keep the end when too long: the latest part holds the conclusions.
    return text if len(text) <= _TRANSCRIPT_CHARS else "…" + text[-_TRANSCRIPT_CHARS:]


def _strip_label(text: str) -> str:
    for label in ("[摘要]", "[Summary]", "[summary]", SUMMARY_PREFIX):
        text = text.removeprefix(label).strip()
    return text
