"""Keep tool output within what the model should read."""

from __future__ import annotations


def cap_output(text: str, limit: int) -> str:
    """Keep the head and tail of ``text`` within ``limit`` characters, marking the cut."""
    if len(text) <= limit:
        return text
    omitted = len(text) - limit
    marker = f"\n[... {omitted} characters omitted; narrow the request to see them ...]\n"
    keep = max(limit - len(marker), 0)
    head = keep * 2 // 3
    tail = keep - head
    return text[:head] + marker + (text[-tail:] if tail else "")


def summarize(text: str, width: int = 120) -> str:
    """One short line for progress displays."""
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return first if len(first) <= width else first[: width - 1] + "…"
