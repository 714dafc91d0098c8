"""The benches' paired comparison: a difference the questions cannot tell from luck is said
to be one."""

from __future__ import annotations

import pytest
from bench.paired import paired, print_above_best_single, print_paired


def test_the_same_recall_differs_by_nothing_and_cannot_be_told_apart() -> None:
    recall = [1.0, 0.5, 0.0, 1.0, 0.25] * 20
    found = paired(recall, list(recall))
    assert (found.mean, found.low, found.high) == (0.0, 0.0, 0.0)
    assert (found.better, found.worse, found.certain) == (0, 0, False)


def test_a_gain_on_most_questions_is_certain_and_counted() -> None:
    first = [1.0] * 80 + [0.0] * 20
    second = [0.0] * 60 + [1.0] * 20 + [0.0] * 20
    found = paired(first, second)
    assert found.mean == pytest.approx(0.6)
    assert 0 < found.low < 0.6 < found.high
    assert (found.better, found.worse, found.certain) == (60, 0, True)


def test_two_questions_of_a_hundred_are_luck() -> None:
    first = [1.0, 1.0] + [0.5] * 98
    second = [0.0, 0.0] + [0.5] * 98
    found = paired(first, second)
    assert found.mean == pytest.approx(0.02)
    assert found.low == 0.0 and not found.certain


def test_the_questions_must_be_the_same() -> None:
    with pytest.raises(ValueError, match="3 against 2"):
        paired([1.0, 0.0, 1.0], [1.0, 0.0])


def test_the_table_names_each_system_and_marks_what_cannot_be_told(
    capsys: pytest.CaptureFixture[str],
) -> None:
    hybrid = [1.0] * 90 + [0.0] * 10
    print_paired(
        "hybrid",
        {
            "hybrid": hybrid,
            "bm25": [0.0] * 100,
            "twin": [1.0] * 89 + [0.0] * 11,
            "copy": list(hybrid),
        },
    )
    lines = capsys.readouterr().out.splitlines()
    bm25 = next(line for line in lines if line.startswith("bm25"))
    twin = next(line for line in lines if line.startswith("twin"))
    assert "+0.900" in bm25 and "90 / 0" in bm25 and "cannot tell" not in bm25
    assert "+0.010" in twin and "1 / 0" in twin and "cannot tell" in twin
    copy = next(line for line in lines if line.startswith("copy"))
    assert "the same on every question" in copy


def test_hybrid_below_a_single_path_at_one_k_fails_the_bar(
    capsys: pytest.CaptureFixture[str],
) -> None:
    singles = {"keyword": {5: 0.40, 10: 0.50}, "semantic": {5: 0.45, 10: 0.61}}
    assert print_above_best_single({5: 0.46, 10: 0.61}, singles)
    assert not print_above_best_single({5: 0.46, 10: 0.60}, singles)
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert (
        last
        == "hybrid >= best single path at every k: NO (R@5 0.460 vs 0.450, R@10 0.600 vs 0.610)"
    )
