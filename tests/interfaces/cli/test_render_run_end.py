"""The run's last line: its status, and its reason once."""

from __future__ import annotations

from shiyi.events import ErrorEvent, Event, RunEnd
from tests.interfaces.cli.test_render_plan import printed

REASON = "model endpoint http://127.0.0.1:9/v1 could not be reached after 5 attempts"


def test_a_failure_already_shown_as_an_error_is_not_said_again() -> None:
    events: list[Event] = [
        ErrorEvent(message=REASON, retryable=True),
        RunEnd(run_id="run_1", status="failed", detail=REASON),
    ]
    out = printed(events)
    assert out.count(REASON) == 1
    assert out.splitlines()[-1] == "[failed] 0 in / 0 out tokens"


def test_a_reason_no_error_line_gave_stays_on_the_last_line() -> None:
    out = printed([RunEnd(run_id="run_1", status="failed", detail="the step budget ran out")])
    assert out.splitlines()[-1] == "[failed: the step budget ran out] 0 in / 0 out tokens"
