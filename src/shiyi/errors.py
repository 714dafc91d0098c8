"""The one error hierarchy of shiyi.

Every error a user can meet derives from :class:`ShiyiError` and carries a message that
names what went wrong and how to fix it.  Callers catch the narrowest class they can act on.
"""

from __future__ import annotations


class ShiyiError(Exception):
    """Base class of every error raised on purpose by shiyi."""


class ConfigError(ShiyiError):
    """The configuration is missing, malformed or inconsistent."""


class ModelError(ShiyiError):
    """A chat model call failed.

    ``retryable`` tells whether the same request may succeed later (rate limits, 5xx,
    timeouts); the provider has already retried with backoff when this reaches a caller.
    """

    def __init__(self, message: str, *, retryable: bool = False, status: int | None = None):
        super().__init__(message)
        self.retryable = retryable
        self.status = status


class ModelUnavailable(ModelError):
    """The model cannot be used at all (missing weights, missing package, bad endpoint)."""


class ToolError(ShiyiError):
    """A tool refused or failed; the message is shown to the model as the tool's result."""


class ToolArgumentsError(ToolError):
    """The model sent arguments that are not valid JSON or do not match the tool's schema."""


class WorkspaceViolation(ToolError):
    """A file tool was asked for a path outside the workspace."""


class CommandDenied(ToolError):
    """A shell command matched a deny rule and was not run."""


class SessionNotFound(ShiyiError):
    """No session with the given id exists in the session log."""


class StorageError(ShiyiError):
    """The on-disk store is corrupt, locked or otherwise unusable."""
