"""Tools the model can call: the decorator, the registry and the built-ins."""

from shiyi.tools.base import FunctionTool, Tool, ToolContext, tool
from shiyi.tools.registry import ToolOutcome, ToolRegistry
from shiyi.tools.workspace import Workspace

__all__ = [
    "FunctionTool",
    "Tool",
    "ToolContext",
    "ToolOutcome",
    "ToolRegistry",
    "Workspace",
    "tool",
]
