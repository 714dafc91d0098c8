"""The client tests talk to a real server: the server tests' ``live`` fixture starts one."""

from tests.interfaces.server.conftest import live

__all__ = ["live"]
