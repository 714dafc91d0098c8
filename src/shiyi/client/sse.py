"""Server-sent events back into typed events (the frames ``shiyi serve`` writes)."""

from __future__ import annotations

from pydantic import ValidationError

from shiyi.errors import ShiyiError
from shiyi.events import Event, event_from_json


class SSEDecoder:
    """Feed it lines; it returns an event at the blank line ending each frame."""

    def __init__(self) -> None:
        self._data: list[str] = []

    def feed(self, line: str) -> Event | None:
        line = line.rstrip("\r\n")
        if line.startswith("data:"):
            self._data.append(line[5:].removeprefix(" "))
            return None
        if line:
            return None  # "event:", "id:", comments: the type is in the data too
        if not self._data:
            return None
        data, self._data = "\n".join(self._data), []
        try:
            return event_from_json(data)
        except ValidationError as exc:
            raise ShiyiError(f"the service sent an event this client cannot read: {exc}") from exc

    def flush(self) -> Event | None:
        return self.feed("")
