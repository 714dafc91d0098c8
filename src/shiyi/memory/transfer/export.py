"""``shiyi memory export``'s records: every event and fact a viewer may see, as JSON lines
(events oldest first, then facts), the same from the CLI and from ``GET /v1/memory/export``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import asdict

from shiyi.memory.protocol import MemoryStore
from shiyi.memory.scopes import Viewer

ALL = 10**9


def export_lines(store: MemoryStore, who: Viewer) -> Iterator[str]:
    for event in store.recent_events(ALL)[::-1]:
        if who.sees(event):
            yield json.dumps({"node": "event", **asdict(event)}, ensure_ascii=False)
    for fact in store.get_facts(store.fact_ids(ALL)):
        if who.sees_fact(fact):
            yield json.dumps({"node": "fact", **asdict(fact)}, ensure_ascii=False)
