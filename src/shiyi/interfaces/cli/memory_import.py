"""``shiyi memory import FILE``: past conversations into memory, here or through the server.

The file is read on this machine either way.  When ``shiyi serve`` or ``shiyi chat`` owns the
data dir, each conversation goes to it in parts (``POST /v1/memory/import``); otherwise the
store is opened here.  Both print the same lines, and both store a conversation under the
importer's tag when another user's memory already uses its names
(:mod:`shiyi.memory.import_claims`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from shiyi.api.import_schemas import ImportIn
    from shiyi.client import Client
    from shiyi.memory.importers import ImportedConversation
    from shiyi.memory.models import EventRecord
    from shiyi.memory.service import Memory

_PART_BYTES = 400_000  # well under server.max_body_bytes' default (1 MB)
_REPORT_EVERY = 2.0  # seconds between progress lines


def import_(
    path: Annotated[Path, typer.Argument(help="JSONL messages or a LoCoMo JSON file.")],
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
    from shiyi.memory.import_claims import check_runs
    from shiyi.memory.importers import detect_and_load

    try:
        conversations = detect_and_load(path)
        for conversation in conversations:  # before anything is sent or stored
            check_runs(conversation.session_id, conversation.events)
    except ShiyiError as exc:
        fail(str(exc))
    started = time.perf_counter()
    progress = _Progress(sum(len(c.events) for c in conversations))
    with connected(config) as client:
        if client is not None:
            for conversation in conversations:
                _send(client, conversation, progress)
            if wait:
                _wait_served(client)
            return _done(conversations, started)
    with opened(config) as memory:
        for conversation in conversations:
            _queue(memory, conversation, progress)
        if wait:
            _wait_local(memory)
        _done(conversations, started)


def _queue(memory: Memory, conversation: ImportedConversation, progress: _Progress) -> None:
    claimed = memory.import_conversation(conversation.session_id, conversation.events)
    _say_renamed(conversation.session_id, claimed.session_id)
    progress.add(conversation.session_id, len(conversation.events))


def _send(client: Client, conversation: ImportedConversation, progress: _Progress) -> None:
    stored = conversation.session_id
    for part in parts(conversation.session_id, conversation.events):
        stored = client.memory_import(part).session_id
        progress.add(conversation.session_id, len(part.turns))
    _say_renamed(conversation.session_id, stored)


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


def _say_renamed(original: str, stored: str) -> None:
    if stored != original:
        typer.echo(
            f"  {original} is stored as {stored}: another user's memory already uses that name"
        )


def _done(conversations: list[ImportedConversation], started: float) -> None:
    turns = sum(len(c.events) for c in conversations)
    took = time.perf_counter() - started
    typer.echo(f"imported {turns} turns from {len(conversations)} conversations in {took:.1f} s")


class _Progress:
    """``  conv-26: 419 turns (1,200 of 5,882, ETA 9 s)`` on stderr as parts go out."""

    def __init__(self, total: int) -> None:
        self.total, self.done, self.started = total, 0, time.monotonic()

    def add(self, session_id: str, turns: int) -> None:
        self.done += turns
        rate = self.done / max(time.monotonic() - self.started, 1e-6)
        eta = (self.total - self.done) / rate
        typer.echo(
            f"  {session_id}: {turns} turns ({self.done:,} of {self.total:,}, ETA {eta:.0f} s)",
            err=True,
        )


def _wait_local(memory: Memory) -> None:
    """Process the queue here (embed, link) as ``drain`` does, saying how much is left."""
    deadline = time.monotonic() + 3600
    report = _reporter(memory.jobs.ready_count)
    while time.monotonic() < deadline and memory.worker.run_once():
        report()


def _wait_served(client: Client) -> None:
    """Wait while the server's worker processes what was sent (it does anyway)."""
    deadline = time.monotonic() + 3600
    report = _reporter(lambda: client.memory_jobs().ready)
    while time.monotonic() < deadline and client.memory_jobs().ready:
        report()
        time.sleep(0.3)


def _reporter(left: Callable[[], int]) -> Callable[[], None]:
    """A callable that prints the jobs left, at most every ``_REPORT_EVERY`` seconds."""
    last = time.monotonic()

    def report() -> None:
        nonlocal last
        if time.monotonic() - last >= _REPORT_EVERY:
            last = time.monotonic()
            typer.echo(f"  processing: {left():,} jobs left", err=True)

    return report
