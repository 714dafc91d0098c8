"""The one error hierarchy of shiyi, grouped by who meets the error.

Every error a user can meet derives from :class:`ShiyiError` and carries a message that
names what went wrong and how to fix it.  Callers catch the narrowest class they can act on,
or a group: what to fix in the configuration, a model that failed, a tool the model called,
a store on disk, a memory operation, a request that cannot be served as asked, or a service
the client talked to.  The HTTP API maps them to status codes and stable codes in one table
(:data:`shiyi.api.errors.WIRE_ERRORS`); the client raises the same class the server raised
for a code both sides know (``NotFound``, ``Conflict``: one name per wire concept), so code
over :class:`~shiyi.memory.operations.MemoryOperations` catches one class, local or remote.

    ShiyiError
    ├── ConfigError              the configuration is missing, malformed or inconsistent
    ├── ModelError               a model call failed (``retryable``, ``status``, ``retry_after``)
    │   ├── ModelUnavailable     the model cannot be used at all
    │   ├── ContextTooLong       the prompt does not fit the model's context (the caller's to fix)
    │   ├── EndpointBusy         background work gave way to a conversation on its endpoint
    │   └── PullError            a GGUF download failed or did not verify
    ├── ToolError                a tool refused or failed; the model reads the message
    │   ├── ToolArgumentsError
    │   ├── WorkspaceViolation
    │   │   └── ProtectedPath    the agent's own config, secrets or data dir
    │   ├── CommandDenied
    │   └── WebSearchUnavailable
    ├── StorageError             a store is corrupt, locked or unusable
    │   └── LocalPostgresError   the throwaway local PostgreSQL could not start or stop
    ├── MemoryOperationError     memory cannot do what was asked
    │   ├── ImportFormatError    an import file is not in the expected format
    │   ├── ScopeDenied          writing shared memory that is not allowed
    │   ├── NothingToForget      ``forget`` matches nothing stored
    │   ├── ExtractionFailed     the extraction model's output stayed invalid
    │   └── MemoryRequestError   the mem0-shaped API got arguments it cannot use; a ValueError
    │       └── UnknownMemory    no memory has the id given
    ├── RequestError             a request cannot be served as asked (``code``, ``status``)
    │   ├── NotFound             not_found, 404: the run, session or memory named is not there
    │   │   └── SessionNotFound
    │   ├── Conflict             conflict, 409: the request clashes with the current state
    │   ├── OpenAIRequestError   /v1/chat/completions refused, in OpenAI's shape
    │   ├── RepoMapError         the repo map cannot be built as asked
    │   ├── IngestError          the knowledge base cannot ingest one file
    │   └── ScriptError          a script cannot be saved as given
    └── ClientError              (client) the service answered with an error, or none answered
        ├── UnauthorizedError        unauthorized, 401
        ├── ValidationFailed         validation_error, 422
        ├── PayloadTooLarge          payload_too_large, 413
        ├── ServerError              internal, 5xx
        └── ServiceUnavailable       unavailable: nothing answers at the address

Not errors, and outside that tree: the memory worker's control-flow signals, raised by a job
handler to tell the worker what to do with its jobs (like pydantic-ai's ``CallDeferred``).
No user meets them, and an ``except ShiyiError`` never swallows them.

    WorkerSignal
    ├── JobDeferred              the jobs wait for something outside them, no attempt used
    └── ModelNotReady            the extraction model cannot be reached now
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


class ContextTooLong(ModelError):
    """The prompt does not fit the model's context window.  Retrying cannot help: the
    message or the conversation must be shorter (OpenAI answers it with 400
    ``context_length_exceeded``, which its SDK does not retry)."""

    code = "context_length_exceeded"

    def __init__(self, message: str) -> None:
        super().__init__(message, retryable=False, status=400)


class EndpointBusy(ModelError):
    """A background request (extraction, summaries) did not start, or stopped, because a
    conversation needs the endpoint's slot; retry it later."""

    def __init__(self, message: str) -> None:
        super().__init__(message, retryable=True)


class PullError(ModelError):
    """``shiyi model pull``: a download that failed or did not verify (says what to do)."""


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


class WebSearchUnavailable(ToolError):
    """The search could not run (offline, unconfigured, bad key, rate limited, broken reply).

    A :class:`ToolError`, so the registry hands the message to the model as the call's
    result (``ok=False``, never cached) instead of letting anything escape the run.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(f"web search is not available: {reason}; {WEB_SEARCH_ADVICE}.")
        self.reason = reason


class StorageError(ShiyiError):
    """The on-disk store is corrupt, locked or otherwise unusable."""


class LocalPostgresError(StorageError):
    """The local PostgreSQL server (``shiyi.memory.postgres.server``) could not be prepared,
    started or stopped."""


# --- memory ----------------------------------------------------------------------------


class MemoryOperationError(ShiyiError):
    """Memory cannot do what was asked (the message says why and what to do instead)."""


class ImportFormatError(MemoryOperationError):
    """An import file is not in the expected format; the message names file and location."""


class ScopeDenied(MemoryOperationError):
    """An agent tried to write shared memory it is not allowed to write."""


class NothingToForget(MemoryOperationError):
    """The entity, query or user given to ``forget`` matches nothing stored."""


class ExtractionFailed(MemoryOperationError):
    """The extraction model's output stayed invalid after one repair attempt."""


class MemoryRequestError(MemoryOperationError, ValueError):
    """A call of the mem0-shaped API (:mod:`shiyi.compat.mem0`) got arguments it cannot use;
    a ``ValueError`` too, as mem0 raises, so code written for mem0 catches it."""


class UnknownMemory(MemoryRequestError):
    """``update``/``delete`` named an id no memory has (forgotten, or never stored)."""


# --- requests: what a caller asked for cannot be done as asked -----------------------------


class RequestError(ShiyiError):
    """A request cannot be served as asked.  ``code`` is its stable API code; ``status`` the
    HTTP status it came with when the client raised it (0 when raised here)."""

    code = "bad_request"

    def __init__(self, message: str, *, status: int = 0, code: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        if code is not None:
            self.code = code


class NotFound(RequestError):
    """A run, session or memory the request names does not exist (or is not the caller's)."""

    code = "not_found"


class SessionNotFound(NotFound):
    """No session with the given id exists in the session log."""


class Conflict(RequestError):
    """The request is valid but clashes with the current state (a run, a read-only record)."""

    code = "conflict"


class OpenAIRequestError(RequestError):
    """A request to the OpenAI-compatible endpoint refused with OpenAI's status, ``type``,
    ``param`` and ``openai_code`` (their SDKs pick the exception to raise by the status;
    ``code`` stays shiyi's own wire code)."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        type: str = "invalid_request_error",
        param: str | None = None,
        code: str | None = None,
    ) -> None:
        super().__init__(message, status=status)
        self.message = message
        self.type = type
        self.param = param
        self.openai_code = code


class RepoMapError(RequestError):
    """The repo map cannot be built as asked (not a directory, unknown focus file...)."""


class IngestError(RequestError):
    """One file could not be ingested; the message names the file and the fix."""


class ScriptError(RequestError):
    """A script cannot be saved as given (its name, language, size or parameters)."""


# --- the client: the codes only a client meets (``not_found`` and ``conflict`` raise the
# server's own :class:`NotFound` and :class:`Conflict`) ------------------------------------


class ClientError(ShiyiError):
    """The service answered with an error, or nothing answered (``code`` and ``status`` say
    which)."""

    code = "bad_request"

    def __init__(self, message: str, *, status: int = 0, code: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        if code is not None:
            self.code = code


class UnauthorizedError(ClientError):
    code = "unauthorized"


class ValidationFailed(ClientError):
    code = "validation_error"


class PayloadTooLarge(ClientError):
    code = "payload_too_large"


class ServerError(ClientError):
    code = "internal"


class ServiceUnavailable(ClientError):
    """Nothing answers at the address (not started, or gone)."""

    code = "unavailable"


# --- the memory worker's signals: control flow, not errors ---------------------------------


class WorkerSignal(Exception):
    """Raised by a memory job handler to tell the worker what to do with its jobs; not a
    :class:`ShiyiError`, since no user meets it."""


class ModelNotReady(WorkerSignal):
    """The extraction model cannot be reached now; the job should wait, not fail."""

    def __init__(self, message: str, *, retry_in: float = 120.0) -> None:
        super().__init__(message)
        self.retry_in = retry_in


class JobDeferred(WorkerSignal):
    """Raised by a handler whose jobs must wait for something outside them (a model that is
    not configured or not reachable): they go back to the queue without using an attempt."""

    def __init__(self, reason: str, *, retry_in: float = 60.0) -> None:
        super().__init__(reason)
        self.retry_in = retry_in
