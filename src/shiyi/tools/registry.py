"""The tool registry: offers specs to the model and runs the calls it makes."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from shiyi.errors import ShiyiError, ToolArgumentsError
from shiyi.llm.types import ToolCall, ToolSpec
from shiyi.tools.base import Tool, ToolContext
from shiyi.tools.output import cap_output, summarize


@dataclass(slots=True, frozen=True)
class ToolOutcome:
    """The result of one call: ``content`` goes to the model, ``summary`` to the UI."""

    call_id: str
    name: str
    ok: bool
    content: str
    summary: str
    duration_ms: float
    arguments: dict[str, Any] | None


def parse_arguments(call: ToolCall) -> dict[str, Any]:
    """Decode the model's argument JSON; the error names the problem, never echoes it."""
    text = call.arguments.strip() or "{}"
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ToolArgumentsError(
            f"the arguments for {call.name} were not valid JSON ({exc.msg} at character "
            f"{exc.pos}). Call {call.name} again with a single JSON object."
        ) from None
    if not isinstance(value, dict):
        raise ToolArgumentsError(
            f"the arguments for {call.name} must be a JSON object, not {type(value).__name__}."
        )
    return value


class ToolRegistry:
    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for item in tools:
            self.register(item)

    def register(self, item: Tool) -> None:
        name = item.spec.name
        if name in self._tools:
            raise ValueError(f"a tool named {name!r} is already registered")
        self._tools[name] = item

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def names(self) -> list[str]:
        return list(self._tools)

    def specs(self) -> list[ToolSpec]:
        return [item.spec for item in self._tools.values()]

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    async def execute(self, call: ToolCall, ctx: ToolContext) -> ToolOutcome:
        """Run one call. Every failure becomes an ``ok=False`` outcome the model can read."""
        started = time.perf_counter()
        arguments: dict[str, Any] | None = None
        try:
            item = self._tools.get(call.name)
            if item is None:
                known = ", ".join(sorted(self._tools)) or "(none)"
                raise ToolArgumentsError(
                    f"there is no tool named {call.name!r}. Available tools: {known}."
                )
            arguments = parse_arguments(call)
            validated = item.validate(arguments)
            timeout = item.timeout or ctx.settings.default_timeout
            try:
                raw = await asyncio.wait_for(item.invoke(validated, ctx), timeout=timeout)
            except TimeoutError:
                raise ShiyiError(
                    f"{call.name} did not finish within {timeout:g} s and was stopped."
                ) from None
            content = cap_output(raw, ctx.settings.output_cap_chars)
            ok = True
        except ShiyiError as exc:
            content, ok = f"Error: {exc}", False
        except Exception as exc:  # a tool bug must not kill the run; the model sees it
            content, ok = f"Error: {call.name} failed: {type(exc).__name__}: {exc}", False
        duration = (time.perf_counter() - started) * 1000
        return ToolOutcome(call.id, call.name, ok, content, summarize(content), duration, arguments)

    async def execute_many(
        self,
        calls: Sequence[ToolCall],
        ctx: ToolContext,
        *,
        on_done: Callable[[ToolOutcome], None] | None = None,
    ) -> list[ToolOutcome]:
        """Run calls concurrently; sequential tools run one at a time after the others.

        ``on_done`` hears of each outcome as soon as it is ready (for progress displays);
        the returned list is in call order.
        """
        results: dict[int, ToolOutcome] = {}

        async def run(index: int, call: ToolCall) -> None:
            results[index] = outcome = await self.execute(call, ctx)
            if on_done is not None:
                on_done(outcome)

        parallel = [(i, c) for i, c in enumerate(calls) if not self._is_sequential(c.name)]
        serial = [(i, c) for i, c in enumerate(calls) if self._is_sequential(c.name)]
        if parallel:
            await asyncio.gather(*(run(i, c) for i, c in parallel))
        for i, call in serial:
            await run(i, call)
        return [results[i] for i in range(len(calls))]

    def _is_sequential(self, name: str) -> bool:
        item = self._tools.get(name)
        return item is not None and item.sequential
