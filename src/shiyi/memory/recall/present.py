"""Memories as the model reads them: compact, grouped, with confidence, age and anchors."""

from __future__ import annotations

import time
from collections.abc import Sequence

from shiyi.memory.models import MemoryHit

_GROUPS = (
    ("user_preferences", ("preference",)),
    ("project_context", ("semantic", "decision", "convention")),
    ("relevant_procedures", ("procedural",)),
    ("todos", ("todo",)),
    ("facts", ("episodic",)),
    ("user_state", ("mood",)),
)


def age_text(ts: float, now: float) -> str:
    seconds = max(0.0, now - ts)
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit} ago"
    return "just now"


def _clip(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _fact_notes(hit: MemoryHit, now: float, handles: bool) -> str:
    """Confidence, age and id; what is no longer current or not yet confirmed says so."""
    notes = [f"confidence {hit.confidence:.0%}", age_text(hit.ts, now)]
    if hit.status == "superseded":
        until = time.strftime("%Y-%m-%d", time.localtime(hit.valid_to)) if hit.valid_to else ""
        notes.insert(0, f"no longer true{' since ' + until if until else ''}")
    elif hit.status == "pending":
        notes.insert(0, "unconfirmed")
    if handles:
        notes += [f"anchor {hit.anchor.key()}"] if hit.anchor is not None else []
        notes.append(f"id {hit.id}")
    return ", ".join(notes)


def format_hits(
    hits: Sequence[MemoryHit], *, now: float | None = None, width: int = 300, handles: bool = True
) -> str:
    """The ``<memory>`` block of seed 001 section 3.2; events carry an anchor for expand.

    ``handles=False`` leaves out anchors and ids, for a model offered no tool that takes
    them (a small model's compact tools): ~15 tokens a memory it cannot use.
    """
    if not hits:
        return "<memory>\n  (nothing relevant remembered)\n</memory>"
    now = time.time() if now is None else now
    lines = ["<memory>"]
    facts = [h for h in hits if h.node == "fact"]
    for tag, kinds in _GROUPS:
        group = [h for h in facts if h.fact_kind in kinds]
        if group:
            lines.append(f"  <{tag}>")
            lines += [
                f"    - {_clip(h.text, width)} ({_fact_notes(h, now, handles)})" for h in group
            ]
            lines.append(f"  </{tag}>")
    events = [h for h in hits if h.node == "event"]
    if events:
        lines.append("  <recent_episodes>")
        for hit in events:
            anchor = f", anchor {hit.anchor.key()}" if hit.anchor and handles else ""
            when = time.strftime("%Y-%m-%d %H:%M", time.localtime(hit.ts))
            # a burst shown as one hit has the room its pieces would have had apart
            text = _clip(hit.text, width * (1 + len(hit.joined)))
            lines.append(f"    - [{when}, {age_text(hit.ts, now)}{anchor}] {text}")
        lines.append("  </recent_episodes>")
    lines.append("</memory>")
    return "\n".join(lines)
