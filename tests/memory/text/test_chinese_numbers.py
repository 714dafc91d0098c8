"""Numbers as Chinese speakers write them in dates and spans."""

from __future__ import annotations

import pytest

from shiyi.memory.text.chinese_numbers import number


@pytest.mark.parametrize(
    ("text", "value"),
    [
        *[("7", 7), ("七", 7), ("十", 10), ("十二", 12), ("二十一", 21), ("三十", 30)],
        *[("两", 2), ("几", 3), ("半", 0.5), ("二〇二三", 2023), ("一九九八", 1998), ("多", None)],
    ],
)
def test_numbers_in_digits_or_chinese_numerals(text: str, value: float | None) -> None:
    assert number(text) == value
