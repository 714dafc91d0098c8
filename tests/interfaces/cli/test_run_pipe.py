"""``shiyi run --json ... | head -5``: a reader that goes away ends the run quietly, with the
run recorded as cancelled, whether the run is local or in a running ``shiyi serve``."""

from __future__ import annotations

import signal

from shiyi.sessions.log import SessionLog
from tests.interfaces.cli.conftest import Cli
from tests.interfaces.cli.test_service_cli import home, start_owner, stop

LONG_REPLY = {"text": "word " * 400, "delay": 0.005}  # still streaming when the reader leaves


def read_five_then_close(cli: Cli) -> tuple[int, str]:
    proc = cli.popen("run", "--json", "say many words")
    assert proc.stdout is not None and proc.stderr is not None
    lines = [proc.stdout.readline() for _ in range(5)]
    assert all(line.startswith("{") for line in lines), lines
    proc.stdout.close()  # what `head -5` does after its fifth line
    try:
        code = proc.wait(timeout=60)
    finally:
        stop(proc)
    return code, proc.stderr.read()


def assert_quiet(stderr: str) -> None:
    assert "Traceback" not in stderr, stderr
    assert "never retrieved" not in stderr, stderr
    assert "Exception ignored" not in stderr, stderr


def run_statuses(cli: Cli) -> list[str]:
    log = SessionLog(home(cli) / "sessions.sqlite3")
    try:
        return [r.status for s in log.list_sessions(limit=10) for r in log.runs(s.id)]
    finally:
        log.close()


def test_a_closed_pipe_ends_a_local_run_quietly(cli: Cli) -> None:
    cli.script([LONG_REPLY])
    code, stderr = read_five_then_close(cli)
    assert code == 1  # the run did not complete
    assert_quiet(stderr)
    assert run_statuses(cli) == ["cancelled"]


def test_a_closed_pipe_ends_a_served_run_quietly(cli: Cli) -> None:
    cli.script([LONG_REPLY])
    server = start_owner(cli, "serve", "--port", "0")
    try:
        code, stderr = read_five_then_close(cli)
        assert code == 1
        assert_quiet(stderr)
    finally:
        server.send_signal(signal.SIGTERM)
        _, server_err = server.communicate(timeout=30)
    assert_quiet(server_err)
    assert run_statuses(cli) == ["cancelled"]
