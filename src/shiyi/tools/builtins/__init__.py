"""The built-in tools: files, search, shell and web search."""

from __future__ import annotations

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
    "default_registry",
    "edit_file",
    "grep",
    "list_dir",
    "read_file",
    "repo_map",
    "web_search",
    "write_file",
]


# Tools registered by the memory and the agent (not built here), valid in tools.enabled.
OTHER_TOOLS = (
    "query_memory", "expand_memory", "remember", "create_plan", "update_plan", "search_knowledge",
)  # fmt: skip


def builtin_tools(settings: ToolSettings | None = None) -> list[Tool]:
    """The built-in tools, limited to ``settings.enabled`` when that is set."""
    shell = bash_for(settings) if settings is not None else bash
    tools: list[Tool] = [
        read_file, write_file, edit_file, list_dir, grep, shell, web_search, repo_map,
    ]  # fmt: skip
    if settings is None or settings.enabled is None:
        return tools
    by_name = {item.spec.name: item for item in tools}
    known = [*by_name, *OTHER_TOOLS]
    unknown = [name for name in settings.enabled if name not in known]
    if unknown:
        raise ConfigError(
            f"tools.enabled names unknown tool(s): {', '.join(unknown)}. "
            f"The tools are: {', '.join(known)}."
        )
    wanted = set(settings.enabled)
    return [item for item in tools if item.spec.name in wanted]


def default_registry(settings: ToolSettings | None = None) -> ToolRegistry:
    """A registry holding the enabled built-in tools."""
    return ToolRegistry(builtin_tools(settings))
