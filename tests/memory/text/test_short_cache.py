"""Readings of short texts are cached; long texts are read every time and never kept."""

from __future__ import annotations

from shiyi.memory.text.short_cache import MAX_CHARS, short_text_cache


def test_short_texts_are_read_once_and_long_ones_every_time() -> None:
    reads: list[str] = []

    @short_text_cache
    def words(text: str) -> tuple[str, ...]:
        reads.append(text)
        return tuple(text.split())

    short, long = "I live in Berlin", "x " * MAX_CHARS
    assert words(short) == words(short) == ("I", "live", "in", "Berlin")
    assert reads == [short]  # the second call came from the cache
    words(long)
    words(long)
    assert reads == [short, long, long]  # a model's huge value is never held by the cache
    assert words.__name__ == "words"
