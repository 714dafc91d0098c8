"""Text files as the file tools and the context show them: binary sniffing, numbered lines."""

from __future__ import annotations

from pathlib import Path

_SNIFF_BYTES = 8192


def looks_binary(path: Path) -> bool:
    """Guess from the first few KiB, like git does: a NUL byte or mostly undecodable bytes."""
    with path.open("rb") as fh:
        chunk = fh.read(_SNIFF_BYTES)
    if b"\0" in chunk:
        return True
    text = chunk.decode("utf-8", errors="replace")
    return bool(text) and text.count("\ufffd") / len(text) > 0.3


def number_line(number: int, text: str) -> str:
    return f"{number:>5}| {text}"
