"""The built-in tools: files, search, shell and web search."""

from __future__ import annotations

from collections.abc import Iterable

from shiyi.config.settings import ToolSettings
from shiyi.errors import ConfigError
from shiyi.tools.base import Tool
from shiyi.tools.builtins.files import edit_file, list_dir, read_file, write_file
from shiyi.tools.builtins.repomap import repo_map
from shiyi.tools.builtins.search import grep
from shiyi.tools.builtins.shell import bash, bash_for
from shiyi.tools.builtins.web_search import web_search
from shiyi.tools.registry import ToolRegistry

__all__ = [
    "bash",
    "builtin_tools",
    "check_tool_names",
    "default_registry",
    "edit_file",
    "every_builtin_tool",
    "grep",
    "list_dir",
    "read_file",
    "repo_map",
    "web_search",
    "write_file",
]


# Tools registered by the memory and the agent (not built here), valid in tools.enabled;
# ``scripts`` is built by the app over the data dir's library (tools.builtins.script).
OTHER_TOOLS = (
    "query_memory", "expand_memory", "remember", "create_plan", "update_plan", "search_knowledge",
    "scripts",
)  # fmt: skip


def every_builtin_tool(settings: ToolSettings | None = None) -> list[Tool]:
    """All the built-in tools (``bash`` with the settings' limits)."""
    shell = bash_for(settings) if settings is not None else bash
    return [read_file, write_file, edit_file, list_dir, grep, shell, web_search, repo_map]


def builtin_tools(settings: ToolSettings | None = None) -> list[Tool]:
    """The built-in tools, limited to ``settings.enabled`` when that is set."""
    tools = every_builtin_tool(settings)
    if settings is None or settings.enabled is None:
        return tools
    check_tool_names(settings.enabled, "tools.enabled")
    wanted = set(settings.enabled)
    return [item for item in tools if item.spec.name in wanted]


def check_tool_names(names: Iterable[str], setting: str) -> None:
    """Raise ConfigError naming ``setting`` if ``names`` has a tool that does not exist."""
    known = [*(item.spec.name for item in every_builtin_tool()), *OTHER_TOOLS]
    unknown = [name for name in names if name not in known]
    if unknown:
        raise ConfigError(
            f"{setting} names unknown tool(s): {', '.join(unknown)}. "
            f"The tools are: {', '.join(known)}."
        )


def default_registry(settings: ToolSettings | None = None) -> ToolRegistry:
    """A registry holding the enabled built-in tools."""
    return ToolRegistry(builtin_tools(settings))
