from __future__ import annotations

import os
import select
import signal
import subprocess
import time

from tests.interfaces.cli.conftest import Cli, json_events


def read_until(proc: subprocess.Popen[str], marker: str, timeout: float = 30) -> str:
    """Read stdout until ``marker`` shows up (the chat prompt has no newline)."""
    assert proc.stdout is not None
    seen = ""
    deadline = time.monotonic() + timeout
    fd = proc.stdout.fileno()
    while marker not in seen:
        remaining = deadline - time.monotonic()
        assert remaining > 0, f"timed out waiting for {marker!r}; got {seen!r}"
        ready, _, _ = select.select([fd], [], [], remaining)
        if ready:
            chunk = os.read(fd, 4096).decode()
            assert chunk, f"process ended before {marker!r}; got {seen!r}"
            seen += chunk
    return seen


def test_run_json_streams_typed_events_and_runs_tools(cli: Cli) -> None:
    (cli.workspace / "notes.txt").write_text("alpha\nbeta\n")
    cli.script(
        [
            {
                "text": "Reading.",
                "tool_calls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}],
            },
            {"text": "It says alpha and beta."},
        ]
    )
    result = cli.run("run", "--json", "what is in notes.txt?")
    assert result.returncode == 0, result.stderr
    events = json_events(result.stdout)
    types = [e.type for e in events]
    assert types[:3] == ["routed", "run_start", "response_start"]
    assert types[-2:] == ["run_end", "memory_work"]  # the run, then what memory did after it
    assert events[-2].status == "completed"  # type: ignore[union-attr]
    tool_result = next(e for e in events if e.type == "tool_result")
    assert tool_result.ok  # type: ignore[union-attr]
    text = "".join(e.text for e in events if e.type == "text_delta")  # type: ignore[union-attr]
    assert text == "Reading.It says alpha and beta."


def test_run_human_output_has_one_line_per_tool_call(cli: Cli) -> None:
    cli.script(
        [
            {
                "tool_calls": [
                    {"name": "list_dir", "arguments": {}},
                    {"name": "read_file", "arguments": {"path": "missing.txt"}},
                ]
            },
            {"text": "done"},
        ]
    )
    result = cli.run("run", "look around")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert any(line.strip().startswith("✓ list_dir") for line in lines)
    assert any(line.strip().startswith("✗ read_file path=missing.txt") for line in lines)
    assert "done" in result.stdout
    assert "session ses_" in result.stderr


def test_sessions_list_and_show_after_a_run(cli: Cli) -> None:
    cli.script([{"text": "hello there"}])
    assert cli.run("run", "greet me").returncode == 0
    listing = cli.run("sessions", "list")
    assert listing.returncode == 0
    assert "greet me" in listing.stdout
    session_id = listing.stdout.splitlines()[1].split()[0]
    shown = cli.run("sessions", "show", session_id[:10])
    assert "user: greet me" in shown.stdout
    assert "assistant: hello there" in shown.stdout
    assert "completed" in shown.stdout


def test_model_failure_exits_nonzero_with_error_event(cli: Cli) -> None:
    cli.script([{"error": "endpoint answered 503", "retryable": True}])
    result = cli.run("run", "--json", "hi")
    assert result.returncode == 1
    events = json_events(result.stdout)
    assert any(e.type == "error" and "503" in e.message for e in events)  # type: ignore[union-attr]
    assert events[-2].status == "failed"  # type: ignore[union-attr]


def test_invalid_config_is_one_clear_line_without_traceback(cli: Cli) -> None:
    cli.config("models:\n  main:\n    provider: nonsense\n")
    result = cli.run("run", "hi")
    assert result.returncode == 2
    assert "models.main.provider" in result.stderr
    assert "Traceback" not in result.stderr


def test_config_show_masks_keys(cli: Cli) -> None:
    cli.env["SHIYI_PRESET"] = "deepseek"
    cli.env["DEEPSEEK_API_KEY"] = "sk-verysecret9876"
    result = cli.run("config", "show")
    assert result.returncode == 0
    assert "****9876" in result.stdout
    assert "verysecret" not in result.stdout
    assert "https://api.deepseek.com/v1" in result.stdout


def test_resume_unknown_session_is_a_clear_error(cli: Cli) -> None:
    cli.script([{"text": "x"}])
    result = cli.run("run", "--session", "ses_nope", "hi")
    assert result.returncode == 2
    assert "no session 'ses_nope'" in result.stderr


def test_chat_slash_commands_and_resume(cli: Cli) -> None:
    cli.script([{"text": "first answer"}, {"text": "second answer"}])
    result = cli.run("chat", input="hello\n/sessions\n/new\nagain\n/help\n/exit\n")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "first answer" in out
    assert "second answer" in out
    assert "new session ses_" in out
    assert "/resume ID" in out  # the help text
    listing = cli.run("sessions", "list").stdout
    assert listing.count("ses_") == 2


def test_chat_ctrl_c_cancels_the_run_not_the_program(cli: Cli) -> None:
    cli.script([{"text": "slow " * 400, "delay": 0.05}, {"text": "still here"}])
    proc = cli.popen("chat")
    try:
        read_until(proc, "you › ")
        assert proc.stdin is not None
        proc.stdin.write("talk a lot\n")
        proc.stdin.flush()
        read_until(proc, "slow")
        proc.send_signal(signal.SIGINT)
        out = read_until(proc, "you › ")
        assert "cancelled" in out
        proc.stdin.write("are you there?\n")
        proc.stdin.flush()
        assert "still here" in read_until(proc, "you › ")
        proc.stdin.write("/exit\n")
        proc.stdin.flush()
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()


def test_a_config_that_is_not_utf8_is_a_config_error_naming_the_byte(cli: Cli) -> None:
    (cli.workspace / "shiyi.yaml").write_bytes(b"agent:\n  max_iterations: 3\n# caf\xe9\n")
    for args in (("doctor",), ("memory", "search", "x")):
        ran = cli.run(*args)
        assert ran.returncode == 2, ran.stderr
        assert "Traceback" not in ran.stderr
        assert f"{cli.workspace / 'shiyi.yaml'} is not valid UTF-8" in ran.stderr
        assert "byte 0xe9 at byte offset 32 (line 3)" in ran.stderr
        assert "Save the file as UTF-8" in ran.stderr


def test_an_empty_task_is_refused_before_any_model_runs(cli: Cli) -> None:
    result = cli.run("run", "   ")
    assert result.returncode == 2
    assert "the task is empty" in result.stderr
    assert "session" not in result.stdout  # no run and no session were made
