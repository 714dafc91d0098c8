"""``shiyi serve``: the HTTP/SSE API over the agent, its sessions and its memory."""

from shiyi.interfaces.server.app import create_app
from shiyi.interfaces.server.service import AgentService

__all__ = ["AgentService", "create_app"]
