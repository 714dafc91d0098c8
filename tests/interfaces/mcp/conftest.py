"""The MCP tests use the server tests' real server and the CLI tests' real subprocesses."""

from tests.interfaces.cli.conftest import cli
from tests.interfaces.server.conftest import live

__all__ = ["cli", "live"]
