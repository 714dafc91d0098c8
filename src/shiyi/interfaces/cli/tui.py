"""The terminal UI of ``shiyi chat``: each turn is a live region redrawn as events arrive.

The prompt stays an ordinary input line (so slash commands, Ctrl-C and Ctrl-D work as in the
plain chat, over SSH and without a mouse); while a run streams, rich's ``Live`` redraws the
turn in place, and when it ends the whole turn is printed once into the scrollback.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable

from rich.console import Console
from rich.live import Live

from shiyi.events import Event
from shiyi.interfaces.cli.tui_layout import TurnView
from shiyi.interfaces.cli.tui_state import Totals, TurnState

ResultLookup = Callable[[str], "str | None"]
"""The full content of a tool call's result by call id, once the run has recorded it."""

_MIN_REDRAW = 0.05
_TICK = 0.25


class TerminalUI:
    def __init__(self, console: Console | None = None) -> None:
        self.console = console or Console(highlight=False, emoji=False)
        self.totals = Totals()

    async def turn(self, events: AsyncIterator[Event], lookup: ResultLookup) -> TurnState:
        state = TurnState(totals=self.totals)
        view = TurnView(state)
        with Live(
            view, console=self.console, auto_refresh=False, transient=True, redirect_stderr=False
        ) as live:
            ticker = asyncio.create_task(_tick(live))
            last = 0.0
            try:
                async for event in events:
                    state.handle(event)
                    _read_memories(state, lookup)
                    now = time.monotonic()
                    if now - last >= _MIN_REDRAW or event.type != "text_delta":
                        live.refresh()
                        last = now
            finally:
                ticker.cancel()
                await asyncio.gather(ticker, return_exceptions=True)
                _read_memories(state, lookup)
                state.pending_memory.clear()
        self.console.print(TurnView(state, full=True))
        return state


def _read_memories(state: TurnState, lookup: ResultLookup) -> None:
    for call_id in list(state.pending_memory):
        content = lookup(call_id)
        if content is not None:
            state.add_memories(call_id, content)


async def _tick(live: Live) -> None:
    """Redraw now and then so a long tool call's clock keeps moving."""
    while True:
        await asyncio.sleep(_TICK)
        live.refresh()
