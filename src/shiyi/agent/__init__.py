"""The agent: run loop, sessions and the library entry point."""

from shiyi.agent.agent import Agent
from shiyi.agent.loop import RunLimits, RunLoop

__all__ = ["Agent", "RunLimits", "RunLoop"]
