"""The SIGKILL fault suite (``bench/fault_kill_bench.py``) in small: the real ``shiyi serve`` killed
under load three times, then the log, graph, mirror and keyword index agree and no run is
left 'running'.  The bench runs it with 20+ kills."""

from __future__ import annotations

from pathlib import Path

from bench.fault_kill_bench import run_faults


def test_sigkill_under_load_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    result = run_faults(tmp_path, kills=3, clients=4, seed=5)
    print(result)  # the counts, for a failing run's log
    assert result.acknowledged > 0 and result.kills == 3
    assert (result.lost, result.duplicated) == (0, 0)
    assert result.found == result.acknowledged == result.in_index
    assert result.log_rows_missing_in_memory == 0
    assert result.memory_events_missing_in_log == 0
    assert result.stuck_runs == 0
