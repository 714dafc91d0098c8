"""``shiyi worker``: the memory worker on its own, without an agent.

With ``memory.store: postgresql://...`` the job queue lives in the database, so any number of
``shiyi worker`` processes, on any number of machines, drain it together: claims never
overlap (``FOR UPDATE SKIP LOCKED``) and a dead worker's jobs come back when its lease
expires.  ``--processes N`` starts N of them here.

The embedded store is single-process by design (Kuzu allows one writer): there ``shiyi
worker`` runs as the store's owner, and refuses while another process owns it.

SIGTERM or Ctrl-C stops a worker after the batch in hand (handlers are short and
idempotent); a second signal abandons the batch.  Jobs still claimed go back to the queue.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from shiyi.config import Settings
    from shiyi.memory.intake.worker import MemoryWorker
    from shiyi.memory.jobs import JobQueue
    from shiyi.memory.service import Memory

INTERRUPTED = 130


@dataclass(frozen=True, slots=True)
class WorkerOptions:
    """What a worker process needs to set itself up (picklable: sent to spawned children)."""

    config: Path | None = None
    workspace: Path | None = None
    drain: bool = False
    poll: float = 1.0


def worker(
    processes: Annotated[
        int,
        typer.Option(
            "--processes", "-n", min=1, help="Worker processes to run here (PostgreSQL only)."
        ),
    ] = 1,
    drain: Annotated[
        bool,
        typer.Option(
            "--drain", "--once", help="Exit once no job is ready or running, instead of waiting."
        ),
    ] = False,
    poll: Annotated[
        float, typer.Option(min=0.01, help="Seconds between looks at an empty queue.")
    ] = 1.0,
    config: Annotated[
        Path | None, typer.Option("--config", "-c", help="Config file (default: ./shiyi.yaml).")
    ] = None,
    workspace: Annotated[
        Path | None, typer.Option("--workspace", "-w", help="Directory the tools work in.")
    ] = None,
) -> None:
    """Run the memory worker without an agent (SIGTERM/Ctrl-C: stop after the batch in hand)."""
    from shiyi.interfaces.cli.common import guard, load

    settings = load(config, workspace)
    options = WorkerOptions(config, workspace, drain, poll)
    raise typer.Exit(guard(lambda: run(settings, options, processes)))


def run(settings: Settings, options: WorkerOptions, processes: int) -> int:
    if settings.memory.store == "embedded":
        refuse_shared_embedded(settings, processes)
    if processes == 1:
        return serve_process(settings, options)
    return run_children(options, processes)


def refuse_shared_embedded(settings: Settings, processes: int) -> None:
    from shiyi.interfaces.cli.common import fail
    from shiyi.interfaces.cli.remote import find_owner

    if processes > 1:
        fail(
            "memory.store is 'embedded', which one process owns at a time, so it cannot be "
            "drained by several workers; run `shiyi worker` without --processes, or set "
            "memory.store to a postgresql:// URL for several workers"
        )
    owner = find_owner(settings)
    if owner is not None:
        fail(
            f"pid {owner.pid} (`{owner.command or 'shiyi'}`) owns the embedded memory store "
            f"in {settings.data_dir} and runs its memory worker itself; `shiyi worker` is for "
            "when no shiyi process is running (or for memory.store: postgresql://...)"
        )


# --- one worker process ------------------------------------------------------------------


def open_memory(settings: Settings) -> Memory:
    from shiyi.app import open_memory as open_app_memory
    from shiyi.errors import StorageError

    try:
        # PostgreSQL: shared, beside `shiyi serve` and the other workers of this directory.
        return open_app_memory(settings, start_worker=False, shared=True)
    except StorageError as exc:
        if settings.memory.store != "embedded":
            raise
        raise StorageError(
            f"{exc} (the embedded store is single-process: `shiyi worker` must be its only "
            "user; for several workers use memory.store: postgresql://...)"
        ) from exc


def serve_process(settings: Settings, options: WorkerOptions) -> int:
    """Open memory, handle jobs until stopped (or drained), hand back what is unfinished."""
    from shiyi.memory.work import queue_location, serve_memory

    stop = threading.Event()
    restore = install_stop_handlers(stop)  # first: a stop may come while memory opens
    try:
        memory = open_memory(settings)
    except BaseException as exc:
        restore()
        if isinstance(exc, KeyboardInterrupt):  # a second signal while opening
            return INTERRUPTED
        raise
    started = time.monotonic()
    handled = 0
    until = " until drained" if options.drain else ""
    _say(f"serving the job queue of {queue_location(memory)}{until}")
    try:
        handled = serve_memory(memory, drain=options.drain, stop=stop, poll=options.poll, say=_say)
    except KeyboardInterrupt:
        _say("abandoned the batch in hand; its jobs go back to the queue")
        return INTERRUPTED
    finally:
        memory.close(flush=False)  # hands back jobs still claimed (PostgreSQL)
        restore()
    _say(f"handled {handled} jobs in {time.monotonic() - started:.1f} s")
    return 0


def serve(
    worker: MemoryWorker, jobs: JobQueue, *, drain: bool, stop: threading.Event, poll: float
) -> int:
    """:func:`shiyi.memory.work.serve`, saying on stderr when the queue fails."""
    from shiyi.memory.work import serve as serve_queue

    return serve_queue(worker, jobs, drain=drain, stop=stop, poll=poll, say=_say)


def install_stop_handlers(stop: threading.Event) -> Callable[[], None]:
    """SIGTERM/SIGINT: the first sets ``stop``, a second one interrupts the batch in hand.
    Returns a function restoring the previous handlers."""

    def handle(signum: int, frame: FrameType | None) -> None:
        if stop.is_set():
            raise KeyboardInterrupt
        _say(f"{signal.Signals(signum).name}: stopping after the batch in hand")
        stop.set()

    previous = {sig: signal.signal(sig, handle) for sig in (signal.SIGTERM, signal.SIGINT)}

    def restore() -> None:
        for sig, handler in previous.items():
            signal.signal(sig, handler)

    return restore


def _say(message: str) -> None:
    typer.echo(f"shiyi worker {os.getpid()}: {message}", err=True)


# --- several worker processes ------------------------------------------------------------


def run_children(options: WorkerOptions, processes: int) -> int:
    """Start ``processes`` workers and wait for them; signals here are passed on to them."""
    import multiprocessing  # here: `shiyi --help` should not pay for it

    context = multiprocessing.get_context("spawn")
    children = [
        context.Process(target=child_main, args=(options,), name=f"shiyi-worker-{n}")
        for n in range(processes)
    ]
    for child in children:
        child.start()

    stopping = threading.Event()

    def forward(signum: int, frame: FrameType | None) -> None:
        stopping.set()
        for child in children:
            if child.is_alive() and child.pid is not None:
                os.kill(child.pid, signal.SIGTERM)

    previous = {sig: signal.signal(sig, forward) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        for child in children:
            child.join()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return combined_exit_code([child.exitcode or 0 for child in children], stopping.is_set())


def combined_exit_code(codes: list[int], stopped: bool) -> int:
    """0 when every worker ended well.  A worker still starting when told to stop dies of
    the SIGTERM itself (its handlers were not installed yet): it held no job, so that is
    a clean stop too."""
    failed = [c for c in codes if c != 0 and not (stopped and c == -signal.SIGTERM)]
    if not failed:
        return 0
    return failed[0] if failed[0] > 0 else 1


def child_main(options: WorkerOptions) -> None:
    """Entry point of a spawned worker: its own session, so a terminal's Ctrl-C reaches
    only the parent, which passes it on once (a second Ctrl-C then interrupts)."""
    from shiyi.interfaces.cli.common import guard, load

    os.setsid()
    parent = os.getppid()
    settings = load(options.config, options.workspace)
    stop_with_parent(parent)
    sys.exit(guard(lambda: serve_process(settings, options)))


def stop_with_parent(parent: int, every: float = 1.0) -> None:
    """A worker whose parent died (killed) stops as if told to, instead of lingering."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(every)
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, name="shiyi-worker-parent", daemon=True).start()
