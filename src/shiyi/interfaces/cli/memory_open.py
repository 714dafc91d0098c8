"""The memory store opened in this process for a ``shiyi memory`` command (refused, naming
the owner, while ``shiyi serve`` or ``shiyi chat`` has it)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from shiyi.config.settings import Settings
    from shiyi.llm.protocol import ChatModel
    from shiyi.memory.operations import MemoryOperations
    from shiyi.memory.service import Memory


@contextmanager
def opened(
    config: Path | None, *, worker: bool = False, switch_model: bool = False
) -> Iterator[Memory]:
    """The configured memory; a shiyi error while opening or using it ends the command with
    its message."""
    from shiyi.interfaces.cli.common import load, opened_or_fail
    from shiyi.interfaces.cli.remote import refuse_while_owned

    settings = load(config)
    refuse_while_owned(settings, "memory")
    with opened_or_fail(
        lambda: _open_memory(settings, start_worker=worker, switch_model=switch_model)
    ) as memory:
        yield memory


@contextmanager
def operations(config: Path | None, *, compact: bool = False) -> Iterator[MemoryOperations]:
    """Memory's operations as the configured user: through the API of the ``shiyi serve`` or
    ``shiyi chat`` that owns the data dir, or over the store opened here (no worker: each
    write waits for its embedding, so it is searchable when the command ends; ``compact``:
    a forget rewrites the graph file after).  A shiyi error ends the command with its
    message."""
    from shiyi.client.memory_ops import RemoteMemory
    from shiyi.interfaces.cli.memory_remote import connected
    from shiyi.memory.operations.local import LocalMemory

    with connected(config) as client:
        if client is not None:
            remote: MemoryOperations = RemoteMemory(client)
            yield remote
            return
    with opened(config) as memory:
        local: MemoryOperations = LocalMemory(memory, settle=True, compact=compact)
        yield local


def _open_memory(settings: Settings, **options: bool) -> Memory:
    """:func:`shiyi.app.open_memory` without importing :mod:`shiyi.app` first: that module
    brings the agent, its tools and the local model runtime, 1-1.7 s on the busy 2-core
    machine that every ``shiyi memory import`` paid before its first turn.  The fast model is
    built by the app's one rule all the same, on the first extraction."""
    from shiyi.memory.service import Memory

    built: list[ChatModel | None] = []

    def on_first_extraction() -> ChatModel | None:
        if not built:
            from shiyi.app import usable_fast_model

            built.append(usable_fast_model(settings))
        return built[0]

    return Memory.open(settings, extraction_model=on_first_extraction, **options)
