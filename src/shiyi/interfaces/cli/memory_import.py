"""``shiyi memory import FILE``: past conversations into memory, here or through the server.

The file is read on this machine either way.  When ``shiyi serve`` or ``shiyi chat`` owns the
data dir, each conversation goes to it in parts (``POST /v1/memory/import``); otherwise the
store is opened here.  Both print the same lines, and both store a conversation under the
importer's tag when another user's memory already uses its names
(:mod:`shiyi.memory.transfer.import_claims`).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from shiyi.interfaces.cli.import_progress import ImportProgress, rate_text

if TYPE_CHECKING:
    from shiyi.api.import_schemas import ImportIn
    from shiyi.client import Client
    from shiyi.memory.models import EventRecord
    from shiyi.memory.service import Memory
    from shiyi.memory.transfer.importers import ImportedConversation

_PART_BYTES = 400_000  # well under server.max_body_bytes' default (1 MB)
_EMBED_JOBS = 8
"""Embed jobs per worker batch while importing (8 x 64 turns): a progress line every ~512
turns; the length-sorted batches inside one such window pad as little as in a bigger one."""


def import_(
    path: Annotated[
        Path,
        typer.Argument(
            help="JSONL messages, a LoCoMo JSON file, or a ChatGPT or Claude export's "
            "conversations.json (the format is detected)."
        ),
    ],
    wait: Annotated[bool, typer.Option(help="Process (embed, link) before returning.")] = True,
    config: Annotated[
        Path | None, typer.Option("--config", "-c", help="Config file (default: ./shiyi.yaml).")
    ] = None,
) -> None:
    """Import past conversations as the configured user's; original timestamps are kept.
    Works the same while `shiyi serve` or `shiyi chat` runs (through its API)."""
    from shiyi.errors import ShiyiError
    from shiyi.interfaces.cli.common import fail
    from shiyi.interfaces.cli.memory_open import opened
    from shiyi.interfaces.cli.memory_remote import connected
    from shiyi.memory.transfer.import_claims import check_runs
    from shiyi.memory.transfer.importers import detect_and_load

    try:
        conversations = detect_and_load(path)
        for conversation in conversations:  # before anything is sent or stored
            check_runs(conversation.session_id, conversation.events)
    except ShiyiError as exc:
        fail(str(exc))
    started = time.perf_counter()
    total = sum(len(c.events) for c in conversations)
    progress = ImportProgress(total)
    with connected(config) as client:
        if client is not None:
            for conversation in conversations:
                _send(client, conversation, progress)
            if wait:
                _wait_served(client, progress)
            return _done(conversations, started, progress)
    with opened(config) as memory:
        for conversation in conversations:
            _queue(memory, conversation, progress)
        if wait:
            _wait_local(memory, progress)
        _done(conversations, started, progress)


def _queue(memory: Memory, conversation: ImportedConversation, progress: ImportProgress) -> None:
    claimed = memory.import_conversation(conversation.session_id, conversation.events)
    _say_renamed(conversation.session_id, claimed.session_id, progress)


def _send(client: Client, conversation: ImportedConversation, progress: ImportProgress) -> None:
    stored = conversation.session_id
    for part in parts(conversation.session_id, conversation.events):
        stored = client.memory_import(part).session_id
    _say_renamed(conversation.session_id, stored, progress)


def parts(session_id: str, events: list[EventRecord]) -> Iterator[ImportIn]:
    """The conversation as requests of at most ``MAX_TURNS`` turns and about
    ``_PART_BYTES`` bytes (one turn bigger than that goes alone, for the server to judge)."""
    from shiyi.api.import_schemas import MAX_TURNS, ImportIn, ImportTurnIn

    turns: list[ImportTurnIn] = []
    size = 0
    for event in events:
        turn = ImportTurnIn(
            id=event.id,
            run=event.run_id.removeprefix(f"{session_id}:"),
            ts=event.ts,
            role=event.role,
            content=event.content,
            iteration=event.iteration,
        )
        turn_size = len(turn.model_dump_json())
        if turns and (len(turns) == MAX_TURNS or size + turn_size > _PART_BYTES):
            yield ImportIn(session_id=session_id, turns=turns)
            turns, size = [], 0
        turns.append(turn)
        size += turn_size
    if turns:
        yield ImportIn(session_id=session_id, turns=turns)


def _say_renamed(original: str, stored: str, progress: ImportProgress) -> None:
    if stored != original:
        progress.finish()
        typer.echo(
            f"  {original} is stored as {stored}: another user's memory already uses that name"
        )


def _done(
    conversations: list[ImportedConversation], started: float, progress: ImportProgress
) -> None:
    progress.finish()
    turns = sum(len(c.events) for c in conversations)
    took = time.perf_counter() - started
    typer.echo(
        f"imported {turns} turns from {len(conversations)} conversations in {took:.1f} s "
        f"({rate_text(turns, took)})"
    )


def _wait_local(memory: Memory, progress: ImportProgress) -> None:
    """Process the queue here (embed, link) as ``drain`` does, counting the turns done."""
    from shiyi.memory.work import process_queue

    done = [0]

    def step(turns: int) -> None:
        done[0] = turns
        progress.update(turns)

    progress.update(0, force=True)
    process_queue(memory, step, embed_jobs=_EMBED_JOBS, timeout=3600)
    progress.update(done[0], force=True)


def _wait_served(client: Client, progress: ImportProgress) -> None:
    """Wait while the server's worker processes what was sent (it does anyway).  The server
    says how many jobs are left, not turns: the turns done are estimated from the share of
    the jobs left after sending."""
    deadline = time.monotonic() + 3600
    first = max(client.memory_jobs().ready, 1)
    while time.monotonic() < deadline and (left := client.memory_jobs().ready):
        progress.update(round(progress.total * (1 - min(left, first) / first)))
        time.sleep(0.3)
    progress.update(progress.total, force=True)
