"""What a new run is told about the ended run it continues (``send(text, run_id=old)``).

Memory is asked through its public API: the old run's anchored turns around its start and
its end (``expand``) and what a search for its goal finds (``search``).  Without memory, or
before the memory worker has caught up, the session log's record of the run stands in.
Blocking: call it in a worker thread.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from shiyi.sessions.log import SessionLog
from shiyi.sessions.records import RunRecord

if TYPE_CHECKING:
    from shiyi.memory.service import Memory

log = logging.getLogger(__name__)

MAX_CHARS = 2000
_LINE_CHARS = 300
_LAST = 10**6
"""An iteration past any real one: ``expand`` around it gives a run's last turns."""


@dataclass(slots=True, frozen=True)
class Seed:
    text: str
    items: int


def seed_from_run(memory: Memory | None, session_log: SessionLog, run: RunRecord) -> Seed:
    lines = _from_memory(memory, run) if memory is not None else []
    if not lines:
        lines = _from_log(session_log, run)
    head = (
        f"This run continues an earlier run ({run.id}, {run.status}) whose goal was: "
        f"{_clip(run.goal)}"
    )
    if not lines:
        return Seed(head, 0)
    body = "What memory holds about it:\n" + "\n".join(f"- {line}" for line in lines)
    return Seed(f"{head}\n{body}"[:MAX_CHARS], len(lines))


def _from_memory(memory: Memory, run: RunRecord) -> list[str]:
    try:
        turns = memory.expand(f"{run.id}:0:0", 2) + memory.expand(f"{run.id}:{_LAST}:0", 3)
        hits = memory.search(run.goal, limit=4) if run.goal.strip() else []
    except Exception:  # a seed is a help, never a reason to fail the run
        log.warning("could not read memory about run %s", run.id, exc_info=True)
        return []
    seen: set[str] = set()
    lines: list[str] = []
    for event in turns:
        if event.id not in seen:
            seen.add(event.id)
            lines.append(f"[{event.anchor.key()}] {event.role}: {_clip(event.content)}")
    for hit in hits:
        if hit.id not in seen:
            seen.add(hit.id)
            where = f"[{hit.anchor.key()}] " if hit.anchor else ""
            lines.append(f"{where}{_clip(hit.text)}")
    return lines


def _from_log(session_log: SessionLog, run: RunRecord) -> list[str]:
    messages = [
        logged.message
        for logged in session_log.messages(run.session_id)
        if logged.run_id == run.id and logged.message.content
    ]
    picked = [m for m in messages if m.role == "user"][:2]
    picked += [m for m in messages if m.role == "assistant"][-2:]
    return [f"{m.role}: {_clip(m.content)}" for m in picked]


def _clip(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= _LINE_CHARS else line[: _LINE_CHARS - 1] + "…"
