"""shiyi's memory as MCP tools: ``shiyi mcp`` (stdio) and ``/mcp`` on ``shiyi serve``
(streamable HTTP), on the official ``mcp`` SDK.  Every tool calls memory's operations
(:mod:`shiyi.memory.operations`) as the caller."""
