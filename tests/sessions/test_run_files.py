"""Run files: rendered from the log, capped, and rendered again (or removed) after forget."""

from __future__ import annotations

from pathlib import Path

from shiyi.llm.types import Message
from shiyi.sessions.log import SessionLog
from shiyi.sessions.run_files import (
    MESSAGE_CAP,
    rewrite_run_files,
    run_file,
    write_run_file,
)


def test_long_messages_are_capped_and_a_gone_run_loses_its_file(tmp_path: Path) -> None:
    log = SessionLog(tmp_path / "s.sqlite3")
    root = tmp_path / "runs"
    sid = log.create_session()
    run = log.start_run(sid, "dump the log")
    log.append(sid, Message("user", "dump the log"), run_id=run)
    log.append(sid, Message("tool", "y" * (MESSAGE_CAP + 500), name="bash"), run_id=run)
    log.end_run(run, "completed", iterations=1)
    path = write_run_file(log, root, run)
    assert path == run_file(root, sid, run) and path.exists()
    text = path.read_text(encoding="utf-8")
    assert "y" * MESSAGE_CAP + "\n… (500 more characters)" in text
    assert "## Final answer\n\n(none)" in text  # it ended without an answer

    assert write_run_file(log, root, "run_unknown") is None
    log.forget_sessions([sid])
    assert rewrite_run_files(log, root, [sid]) == 1
    assert not path.exists() and not path.parent.exists()
    log.close()
