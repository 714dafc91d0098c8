"""The one error hierarchy of shiyi.

Every error a user can meet derives from :class:`ShiyiError` and carries a message that
names what went wrong and how to fix it.  Callers catch the narrowest class they can act on.
The HTTP API maps these to status codes and stable codes in one table
(:data:`shiyi.api.errors.ERROR_STATUS`); the client turns the codes back into the
``ClientError`` classes below.

    ShiyiError
    ├── ConfigError              the configuration is missing, malformed or inconsistent
    ├── ModelError               a model call failed (``retryable``, ``status``, ``retry_after``)
    │   ├── ModelUnavailable     the model cannot be used at all
    │   └── EndpointBusy         background work gave way to a conversation on its endpoint
    ├── ToolError                a tool refused or failed; the model reads the message
    │   ├── ToolArgumentsError
    │   ├── WorkspaceViolation
    │   │   └── ProtectedPath    the agent's own config, secrets or data dir
    │   ├── CommandDenied
    │   └── WebSearchUnavailable
    ├── SessionNotFound
    ├── StorageError             a store is corrupt, locked or unusable
    │   └── LocalPostgresError   the throwaway local PostgreSQL could not start or stop
    ├── NotFound                 (server) a run or memory the request names does not exist
    ├── Conflict                 (server) the request clashes with the current state
    ├── OpenAIRequestError       (server) /v1/chat/completions refused, in OpenAI's shape
    ├── RepoMapError
    ├── PullError                (models) a GGUF download failed or did not verify
    ├── IngestError              (knowledge base) one file could not be ingested
    ├── ImportFormatError        (memory) an import file is not in the expected format
    ├── ScopeDenied              (memory) writing shared memory that is not allowed
    ├── NothingToForget          (memory) ``forget`` matches nothing stored
    ├── ExtractionFailed         (memory worker) the model's output stayed invalid
    ├── ModelNotReady            (memory worker) the extraction model cannot be reached now
    ├── JobDeferred              (memory worker) the job waits for something outside it
    ├── MemoryRequestError       (mem0-shaped API) arguments it cannot use; also a ValueError
    │   └── UnknownMemory        no memory has the id given
    └── ClientError              (client) the service answered with an error
        ├── NotFoundError            not_found, 404
        ├── UnauthorizedError        unauthorized, 401
        ├── ConflictError            conflict, 409
        ├── ValidationFailed         validation_error, 422
        ├── PayloadTooLarge          payload_too_large, 413
        ├── ServerError              internal, 5xx
        └── ServiceUnavailable       unavailable: nothing answers at the address
"""

from __future__ import annotations

WEB_SEARCH_ADVICE = "answer from what you know or ask the user"


class ShiyiError(Exception):
    """Base class of every error raised on purpose by shiyi."""


class ConfigError(ShiyiError):
    """The configuration is missing, malformed or inconsistent."""


class ModelError(ShiyiError):
    """A chat or embedding model call failed.

    ``retryable`` tells whether the same request may succeed later (rate limits, 5xx,
    timeouts); the provider has already retried with backoff when this reaches a caller.
    ``retry_after``: the server's Retry-After hint in seconds, when it sent one.
    """

    def __init__(
        self,
        message: str,
        *,
        retryable: bool = False,
        status: int | None = None,
        retry_after: float | None = None,
    ):
        super().__init__(message)
        self.retryable = retryable
        self.status = status
        self.retry_after = retry_after


class ModelUnavailable(ModelError):
    """The model cannot be used at all (missing weights, missing package, bad endpoint)."""


class EndpointBusy(ModelError):
    """A background request (extraction, summaries) did not start, or stopped, because a
    conversation needs the endpoint's slot; retry it later."""

    def __init__(self, message: str) -> None:
        super().__init__(message, retryable=True)


class ToolError(ShiyiError):
    """A tool refused or failed; the message is shown to the model as the tool's result."""


class ToolArgumentsError(ToolError):
    """The model sent arguments that are not valid JSON or do not match the tool's schema."""


class WorkspaceViolation(ToolError):
    """A file tool was asked for a path outside the workspace."""


class ProtectedPath(WorkspaceViolation):
    """A tool was asked to read or change the agent's own configuration, secrets or data
    directory (it could otherwise lift its own sandbox or read the server token)."""


class CommandDenied(ToolError):
    """A shell command matched a deny rule and was not run."""


class SessionNotFound(ShiyiError):
    """No session with the given id exists in the session log."""


class StorageError(ShiyiError):
    """The on-disk store is corrupt, locked or otherwise unusable."""


class LocalPostgresError(StorageError):
    """The local PostgreSQL server (``shiyi.memory.postgres.server``) could not be prepared,
    started or stopped."""


class WebSearchUnavailable(ToolError):
    """The search could not run (offline, unconfigured, bad key, rate limited, broken reply).

    A :class:`ToolError`, so the registry hands the message to the model as the call's
    result (``ok=False``, never cached) instead of letting anything escape the run.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(f"web search is not available: {reason}; {WEB_SEARCH_ADVICE}.")
        self.reason = reason


# --- the server, the repo map, the knowledge base -------------------------------------


class NotFound(ShiyiError):
    """A run or memory the request names does not exist."""


class Conflict(ShiyiError):
    """The request is valid but clashes with the current state (a run, a read-only record)."""


class OpenAIRequestError(ShiyiError):
    """A request to the OpenAI-compatible endpoint refused with OpenAI's status, ``type``,
    ``param`` and ``code`` (their SDKs pick the exception to raise by the status)."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        type: str = "invalid_request_error",
        param: str | None = None,
        code: str | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.type = type
        self.param = param
        self.code = code


class RepoMapError(ShiyiError):
    """The repo map cannot be built as asked (not a directory, unknown focus file...)."""


class IngestError(ShiyiError):
    """One file could not be ingested; the message names the file and the fix."""


class PullError(ShiyiError):
    """``shiyi model pull``: a download that failed or did not verify (says what to do)."""


class ScriptError(ShiyiError):
    """A script cannot be saved as given (its name, language, size or parameters)."""


# --- memory ----------------------------------------------------------------------------


class ImportFormatError(ShiyiError):
    """An import file is not in the expected format; the message names file and location."""


class ScopeDenied(ShiyiError):
    """An agent tried to write shared memory it is not allowed to write."""


class NothingToForget(ShiyiError):
    """The entity, query or user given to ``forget`` matches nothing stored."""


class ExtractionFailed(ShiyiError):
    """The extraction model's output stayed invalid after one repair attempt."""


class ModelNotReady(ShiyiError):
    """The extraction model cannot be reached now; the job should wait, not fail."""

    def __init__(self, message: str, *, retry_in: float = 120.0) -> None:
        super().__init__(message)
        self.retry_in = retry_in


class JobDeferred(ShiyiError):
    """Raised by a handler whose jobs must wait for something outside them (a model that is
    not configured or not reachable): they go back to the queue without using an attempt."""

    def __init__(self, reason: str, *, retry_in: float = 60.0) -> None:
        super().__init__(reason)
        self.retry_in = retry_in


class MemoryRequestError(ShiyiError, ValueError):
    """A call of the mem0-shaped API (:mod:`shiyi.compat.mem0`) got arguments it cannot use;
    a ``ValueError`` too, as mem0 raises, so code written for mem0 catches it."""


class UnknownMemory(MemoryRequestError):
    """``update``/``delete`` named an id no memory has (forgotten, or never stored)."""


# --- the client: one class per stable API error code -------------------------------------


class ClientError(ShiyiError):
    """The service answered with an error (``code`` and ``status`` say which)."""

    code = "bad_request"

    def __init__(self, message: str, *, status: int = 0, code: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        if code is not None:
            self.code = code


class NotFoundError(ClientError):
    code = "not_found"


class UnauthorizedError(ClientError):
    code = "unauthorized"


class ConflictError(ClientError):
    code = "conflict"


class ValidationFailed(ClientError):
    code = "validation_error"


class PayloadTooLarge(ClientError):
    code = "payload_too_large"


class ServerError(ClientError):
    code = "internal"


class ServiceUnavailable(ClientError):
    """Nothing answers at the address (not started, or gone)."""

    code = "unavailable"
