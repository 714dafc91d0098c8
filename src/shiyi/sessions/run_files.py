"""One readable Markdown file per finished run (seed 002, step 4):
``<data dir>/runs/<session_id>/<run_id>.md`` with the goal, the messages and tool calls
(long ones capped), the final answer, the status and the timings.

The file is rendered from the session log, so it never says more than the log does: when
``forget`` removes messages (or a whole user's sessions) from the log, it renders the files
of the sessions it touched again (:func:`rewrite_run_files`), and a run the log no longer
holds loses its file.  The files are the local user's: no HTTP route serves them.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from pathlib import Path

from shiyi.llm.types import Message
from shiyi.sessions.log import SessionLog
from shiyi.sessions.records import LoggedMessage, RunRecord

RUNS_DIR = "runs"
MESSAGE_CAP = 4000
"""Characters of one message or tool result kept in the file (a read file can be huge)."""


def runs_root(data_dir: Path) -> Path:
    return data_dir / RUNS_DIR


def run_file(root: Path, session_id: str, run_id: str) -> Path:
    # Ids are generated (new_id) or imported; keep any path separator out of the file name.
    return root / _safe(session_id) / f"{_safe(run_id)}.md"


def write_run_file(log: SessionLog, root: Path, run_id: str) -> Path | None:
    """Render the run's file from the log (None: the log has no such run)."""
    run = log.get_run(run_id)
    if run is None:
        return None
    messages = [m for m in log.messages(run.session_id) if m.run_id == run_id]
    path = run_file(root, run.session_id, run_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".md.tmp")
    partial.write_text(render_run(run, messages), encoding="utf-8")
    os.replace(partial, path)  # a reader never sees half a file
    return path


def rewrite_run_files(log: SessionLog, root: Path, session_ids: Iterable[str]) -> int:
    """Render the existing files of these sessions again from the log, as it is now (after
    a forget); a run the log no longer has loses its file.  Returns the files touched."""
    touched = 0
    for session_id in dict.fromkeys(session_ids):
        folder = run_file(root, session_id, "x").parent
        if not folder.is_dir():
            continue
        for path in sorted(folder.glob("*.md")):
            if write_run_file(log, root, path.stem) is None:
                path.unlink(missing_ok=True)
            touched += 1
        if not any(folder.iterdir()):
            folder.rmdir()
    return touched


def render_run(run: RunRecord, messages: list[LoggedMessage]) -> str:
    lines = [f"# Run {run.id}", "", *_summary(run), "", "## Goal", "", run.goal, ""]
    lines += ["## Messages", ""]
    for logged in messages:
        lines += _message(logged.message, logged.iteration)
    final = next((m.message.content for m in reversed(messages) if _is_answer(m.message)), "")
    lines += ["## Final answer", "", _cap(final) if final else "(none)", ""]
    return "\n".join(lines)


def _summary(run: RunRecord) -> list[str]:
    ended = run.ended_at
    took = f"{ended - run.started_at:.1f} s" if ended is not None else "-"
    rows = [
        ("session", run.session_id),
        ("status", run.status + (f" ({run.detail})" if run.detail else "")),
        ("started", _time(run.started_at)),
        ("ended", _time(ended) if ended is not None else "-"),
        ("took", took),
        ("iterations", str(run.iterations)),
        ("tokens", f"{run.prompt_tokens} prompt, {run.completion_tokens} completion"),
    ]
    if run.cost is not None:
        rows.append(("cost", f"${run.cost:.4f}"))
    return [f"- {name}: {value}" for name, value in rows]


def _message(message: Message, iteration: int) -> list[str]:
    title = {"user": "User", "assistant": "Assistant", "tool": "Tool result"}.get(
        message.role, message.role.capitalize()
    )
    if message.role == "tool" and message.name:
        title += f" `{message.name}`"
    lines = [f"### {title} (iteration {iteration})", ""]
    if message.content:
        lines += [_cap(message.content), ""]
    for call in message.tool_calls:
        lines += [f"Tool call `{call.name}`:", "", "```json", _cap(call.arguments), "```", ""]
    return lines


def _is_answer(message: Message) -> bool:
    return message.role == "assistant" and bool(message.content) and not message.tool_calls


def _cap(text: str) -> str:
    if len(text) <= MESSAGE_CAP:
        return text
    return text[:MESSAGE_CAP] + f"\n… ({len(text) - MESSAGE_CAP} more characters)"


def _time(ts: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts))


def _safe(name: str) -> str:
    return name.replace("/", "_").replace(os.sep, "_").lstrip(".") or "_"
