"""Tools: a decorator that turns a typed function into a tool with a JSON schema."""

from __future__ import annotations

import asyncio
import inspect
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, get_type_hints, overload, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from shiyi.config.settings import Settings, ToolSettings
from shiyi.errors import ToolArgumentsError
from shiyi.llm.types import ToolSpec
from shiyi.tools.protection import protection
from shiyi.tools.workspace import Workspace


@dataclass(slots=True)
class ToolContext:
    """What a tool may know about where and for whom it runs."""

    workspace: Workspace
    settings: ToolSettings = field(default_factory=ToolSettings)
    session_id: str | None = None
    run_id: str | None = None
    conversation: Sequence[str] = ()
    """What the user said in this run (its goal, then messages that joined), oldest first:
    tools may favour what was mentioned (``repo_map`` ranks toward named identifiers)."""

    @classmethod
    def for_dir(cls, root: Path, settings: ToolSettings | None = None) -> ToolContext:
        """A context on ``root`` protecting the defaults and ``settings.protected_paths``."""
        settings = settings or ToolSettings()
        guard = protection(extra=settings.protected_paths, guard_code=not settings.allow_code_paths)
        workspace = Workspace(root, allow_outside=settings.allow_outside_workspace, protected=guard)
        return cls(workspace, settings)

    @classmethod
    def for_settings(cls, settings: Settings) -> ToolContext:
        """The agent's context: its workspace, protecting the data directory too."""
        tools = settings.tools
        persona = settings.context.persona_file  # it shapes the agent as much as its config
        extra = [*tools.protected_paths, *([persona] if persona else [])]
        guard = protection(
            data_dir=settings.data_dir, extra=extra, guard_code=not tools.allow_code_paths
        )
        workspace = Workspace(
            settings.workspace, allow_outside=tools.allow_outside_workspace, protected=guard
        )
        return cls(workspace, tools)


@runtime_checkable
class Tool(Protocol):
    """Anything the registry can offer to the model and run."""

    @property
    def spec(self) -> ToolSpec: ...

    @property
    def sequential(self) -> bool:
        """True when calls must not overlap with other calls of the same turn."""
        ...

    @property
    def read_only(self) -> bool:
        """True when the tool has no side effects (its results may be cached)."""
        ...

    @property
    def timeout(self) -> float | None: ...

    def validate(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """Check and coerce arguments; raise :class:`ToolArgumentsError` with the fix."""
        ...

    async def invoke(self, arguments: dict[str, Any], ctx: ToolContext) -> str: ...


_PARAM_LINE = re.compile(r"^\s*(?::param\s+)?(\w+)\s*(?:\([^)]*\))?\s*:\s*(.+)$")
_SECTION = re.compile(r"^\s*(Args|Arguments|Parameters|Returns|Raises|Yields|Examples?):\s*$")


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """Split a docstring into its description and per-parameter descriptions.

    Understands Google style (``Args:`` then ``name: text``) and reST ``:param name: text``;
    continuation lines are appended to the parameter above them.
    """
    if not doc:
        return "", {}
    lines = inspect.cleandoc(doc).splitlines()
    description: list[str] = []
    params: dict[str, str] = {}
    section: str | None = None
    current: str | None = None
    for line in lines:
        heading = _SECTION.match(line)
        if heading:
            section, current = heading.group(1), None
            continue
        reST = line.strip().startswith(":param")
        if section in ("Args", "Arguments", "Parameters") or reST:
            match = _PARAM_LINE.match(line)
            if match and (reST or not line.startswith(" " * 8)):
                current = match.group(1)
                params[current] = match.group(2).strip()
            elif current and line.strip():
                params[current] += " " + line.strip()
        elif section is None:
            description.append(line)
    return "\n".join(description).strip(), params


def _wants_context(annotation: Any) -> bool:
    return annotation is ToolContext or getattr(annotation, "__name__", "") == "ToolContext"


@dataclass(slots=True, frozen=True)
class _Derived:
    args_model: type[BaseModel]
    schema: dict[str, Any]
    description: str
    context_param: str | None


_DERIVED: dict[tuple[Any, ...], _Derived] = {}


def _derive(func: Callable[..., Any]) -> _Derived:
    """The arguments model and JSON schema of ``func``, built once per function shape.

    Tools made by a factory (memory and plan tools, one set per agent) share their code, so
    a server creating agents for many sessions builds each pydantic model only once.
    """
    try:
        key: tuple[Any, ...] | None = (
            func.__code__,
            func.__doc__,
            tuple(sorted((k, repr(v)) for k, v in func.__annotations__.items())),
            repr(func.__defaults__),
            repr(func.__kwdefaults__),
        )
    except AttributeError:  # not a plain function (a callable object, a builtin)
        key = None
    cached = _DERIVED.get(key) if key is not None else None
    if cached is not None:
        return cached
    derived = _build(func)
    if key is not None:
        _DERIVED[key] = derived
    return derived


def _build(func: Callable[..., Any]) -> _Derived:
    doc_description, param_docs = parse_docstring(func.__doc__)
    hints = get_type_hints(func)
    fields: dict[str, Any] = {}
    context_param: str | None = None
    for param in inspect.signature(func).parameters.values():
        annotation = hints.get(param.name, Any)
        if _wants_context(annotation):
            context_param = param.name
            continue
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[param.name] = (
            annotation,
            Field(default=default, description=param_docs.get(param.name)),
        )
    args_model: type[BaseModel] = create_model(
        f"{func.__name__}_args",
        __config__=ConfigDict(extra="forbid"),
        **fields,
    )
    schema = args_model.model_json_schema()
    schema.pop("title", None)
    for prop in schema.get("properties", {}).values():
        prop.pop("title", None)
    return _Derived(args_model, schema, doc_description, context_param)


class FunctionTool:
    """A tool backed by a Python function (sync functions run in a worker thread)."""

    def __init__(
        self,
        func: Callable[..., str | Awaitable[str]],
        *,
        name: str | None = None,
        description: str | None = None,
        sequential: bool = False,
        read_only: bool = False,
        timeout: float | None = None,
    ) -> None:
        self.func = func
        self._sequential = sequential
        self._read_only = read_only
        self._timeout = timeout
        derived = _derive(func)
        self._context_param = derived.context_param
        self.args_model: type[BaseModel] = derived.args_model
        doc_description = derived.description
        schema = derived.schema  # shared by every tool made from this function: read-only
        self._spec = ToolSpec(
            name=name or func.__name__,
            description=description or doc_description or func.__name__,
            parameters=schema,
        )

    @property
    def spec(self) -> ToolSpec:
        return self._spec

    @property
    def sequential(self) -> bool:
        return self._sequential

    @property
    def read_only(self) -> bool:
        return self._read_only

    @property
    def timeout(self) -> float | None:
        return self._timeout

    def validate(self, arguments: dict[str, Any]) -> dict[str, Any]:
        try:
            model = self.args_model.model_validate(arguments)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or '(arguments)'}: {err['msg']}"
                for err in exc.errors()
            )
            raise ToolArgumentsError(
                f"invalid arguments for {self.spec.name}: {problems}. "
                f"Expected parameters: {', '.join(self._param_summary())}."
            ) from None
        return {name: getattr(model, name) for name in type(model).model_fields}

    def _param_summary(self) -> list[str]:
        required = set(self.spec.parameters.get("required", []))
        return [
            f"{name}{'' if name in required else '?'}"
            for name in self.spec.parameters.get("properties", {})
        ]

    async def invoke(self, arguments: dict[str, Any], ctx: ToolContext) -> str:
        kwargs = dict(arguments)
        if self._context_param:
            kwargs[self._context_param] = ctx
        if inspect.iscoroutinefunction(self.func):
            result = await self.func(**kwargs)
        else:
            result = await asyncio.to_thread(self.func, **kwargs)
        return result if isinstance(result, str) else str(result)


@overload
def tool(func: Callable[..., Any], /) -> FunctionTool: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    sequential: bool = False,
    read_only: bool = False,
    timeout: float | None = None,
) -> Callable[[Callable[..., Any]], FunctionTool]: ...


def tool(
    func: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    sequential: bool = False,
    read_only: bool = False,
    timeout: float | None = None,
) -> FunctionTool | Callable[[Callable[..., Any]], FunctionTool]:
    """Make a tool from a typed function; the docstring gives descriptions.

    A parameter annotated ``ToolContext`` receives the context and is hidden from the model.
    """

    def wrap(f: Callable[..., Any]) -> FunctionTool:
        return FunctionTool(
            f,
            name=name,
            description=description,
            sequential=sequential,
            read_only=read_only,
            timeout=timeout,
        )

    return wrap(func) if func is not None else wrap
