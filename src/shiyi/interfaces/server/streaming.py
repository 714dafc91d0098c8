"""Server-sent events: ``event: <type>`` / ``data: <json>`` frames, closed cleanly.

The stream ends (and so cancels its run) when the client disconnects: the response watches
``http.disconnect`` itself and always closes the event iterator, so a run never outlives the
request that started it.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import anyio
from starlette.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

from shiyi.events import Event, event_to_json

SSE_MEDIA_TYPE = "text/event-stream"


def sse_frame(event: Event) -> str:
    return f"event: {event.type}\ndata: {event_to_json(event)}\n\n"


async def sse_frames(events: AsyncIterator[Event]) -> AsyncIterator[str]:
    try:
        async for event in events:
            yield sse_frame(event)
    finally:
        aclose = getattr(events, "aclose", None)
        if aclose is not None:
            await aclose()


class EventStreamResponse(StreamingResponse):
    def __init__(self, frames: AsyncIterator[str]) -> None:
        super().__init__(
            frames,
            media_type=SSE_MEDIA_TYPE,
            headers={"cache-control": "no-cache", "x-accel-buffering": "no"},
        )
        self._frames = frames

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            async with anyio.create_task_group() as group:

                async def stream() -> None:
                    with contextlib.suppress(OSError):  # the client went away mid-write
                        await self.stream_response(send)
                    group.cancel_scope.cancel()

                group.start_soon(stream)
                await _wait_for_disconnect(receive)
                group.cancel_scope.cancel()
        finally:
            aclose = getattr(self._frames, "aclose", None)
            if aclose is not None:
                with anyio.CancelScope(shield=True):
                    await aclose()


async def _wait_for_disconnect(receive: Receive) -> None:
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return
