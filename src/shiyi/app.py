"""The composition root: the one place that turns :class:`Settings` into working parts.

The chat and run commands, the server and library users all start here.  The models (main
and fast, each built once by one rule), the memory, the knowledge base and the filtered tool
registry are built here and handed down; nothing below reads ``Settings`` to build a model.

    >>> app = App.open(load_settings())                 # doctest: +SKIP
    >>> agent = app.agent()                              # doctest: +SKIP
    >>> async for event in agent.send("list the files here"):  # doctest: +SKIP
    ...     print(event.type)
    >>> app.close()                                      # doctest: +SKIP
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Callable, Collection
from concurrent.futures import Executor
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from shiyi.agent.agent import Agent
from shiyi.agent.documents import DocumentHints
from shiyi.agent.persona import load_persona
from shiyi.agent.plan import CurrentPlan
from shiyi.agent.plan_tools import plan_tools
from shiyi.config.hosts import is_loopback_url
from shiyi.config.private_dir import ensure_private_dir
from shiyi.config.settings import Settings
from shiyi.context.summaries import SummaryStore
from shiyi.errors import ShiyiError
from shiyi.llm.factory import build_chat_model
from shiyi.llm.gate import conversations_in_progress, since_last_conversation
from shiyi.llm.local.model import LocalModel
from shiyi.llm.protocol import ChatModel
from shiyi.llm.tokens import TokenCounter, preload_encoder
from shiyi.sessions.log import SessionLog
from shiyi.tools.base import Tool
from shiyi.tools.builtins import check_tool_names, every_builtin_tool
from shiyi.tools.profiles import compact
from shiyi.tools.registry import ToolRegistry

if TYPE_CHECKING:
    from shiyi.index.types import Embedder
    from shiyi.knowledge import KnowledgeBase
    from shiyi.memory.scopes import Viewer
    from shiyi.memory.service import Memory

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Models:
    """The two model roles, built once per process and shared by every part that needs one."""

    main: ChatModel
    fast: ChatModel | None
    """The helper for work beside the conversation: memory extraction, summaries, query
    rewriting and HyDE, routing tie-breaks.  None when the ``fast`` role is the embedded tiny
    model (its summaries, extractions and queries are worse than the fallbacks: extractive
    summaries, waiting extraction jobs, the question alone, the routing heuristic) or when it
    cannot be built (the error is logged; the fallbacks apply)."""


def build_models(settings: Settings, *, main: ChatModel | None = None) -> Models:
    """The main model (``main`` if given) and the usable fast model."""
    return Models(main or build_chat_model(settings, "main"), usable_fast_model(settings))


def usable_fast_model(settings: Settings) -> ChatModel | None:
    """The ``fast`` role's model by the one rule :attr:`Models.fast` states."""
    if settings.model_role("fast").provider == "local":
        return None
    try:
        return build_chat_model(settings, "fast")
    except ShiyiError as exc:
        log.warning("working without a fast model (extraction waits, summaries are extractive,"
                    " no query rewriting): %s", exc)  # fmt: skip
        return None


class Default(Enum):
    """Marks an argument left to the settings, where None means "without one"."""

    DEFAULT = "default"


DEFAULT = Default.DEFAULT


def open_memory(
    settings: Settings, *, fast: ChatModel | Default | None = DEFAULT, **options: bool
) -> Memory:
    """The data dir's memory, extracting with ``fast`` (default: the usable fast model; None:
    extraction jobs wait for one).  ``options`` go to :meth:`Memory.open` (``start_worker``,
    ``switch_model``, ``shared``)."""
    from shiyi.memory.service import Memory

    if fast is not DEFAULT:
        chosen = fast
        return Memory.open(settings, extraction_model=lambda: chosen, **options)
    built: list[ChatModel | None] = []

    def on_first_extraction() -> ChatModel | None:  # a command that never extracts pays nothing
        if not built:
            built.append(usable_fast_model(settings))
        return built[0]

    return Memory.open(settings, extraction_model=on_first_extraction, **options)


def open_knowledge(
    settings: Settings,
    *,
    embedder: Embedder | Default | None = DEFAULT,
    fast: ChatModel | Default | None = DEFAULT,
) -> KnowledgeBase:
    """The data dir's knowledge base (created if needed).

    ``embedder`` defaults to the configured one, with its own cache in the knowledge file
    (pass the memory's to share one loaded model); ``fast`` to the usable fast model.  The
    fast model is used (and built) only when a knowledge setting asks for it, and summarises
    documents only when it is configured apart from the main model.
    """
    from shiyi.index.embeddings import build_embedder
    from shiyi.knowledge import KnowledgeBase
    from shiyi.knowledge.store import check_knowledge_file

    owns = embedder is DEFAULT
    # Before the embedding cache opens the file: it would turn a 0-byte one into a new base.
    check_knowledge_file(KnowledgeBase.path_for(settings))
    if embedder is DEFAULT:
        embedder = build_embedder(
            settings.memory, KnowledgeBase.path_for(settings), settings.cache_dir
        )
    if not uses_fast_model(settings):
        fast = None
    elif fast is DEFAULT:
        fast = usable_fast_model(settings)
    # A summary per section is a model call per section: only a fast model of its own does
    # that, never the main model standing in for an unset fast role (minutes per document).
    summaries = fast if has_own_fast_model(settings) else None
    return KnowledgeBase.open(
        settings,
        embedder=embedder,
        fast_model=fast,
        summary_model=summaries,
        owns_embedder=owns,
        refuse=_protected_reason(settings),
    )


def _protected_reason(settings: Settings) -> Callable[[Path], str | None]:
    """Why the knowledge base may not read a file: what the agent's tools never read
    (``shiyi.yaml``, ``.env``, the config and data dirs), since ``search_knowledge`` would
    hand its text to the model all the same."""
    from shiyi.knowledge.base import UPLOADS
    from shiyi.tools.base import ToolContext
    from shiyi.tools.protection import protected_name

    guard = ToolContext.for_settings(settings).workspace.protected
    uploads = (settings.knowledge_dir / UPLOADS).resolve()

    def reason(path: Path) -> str | None:
        resolved = path.resolve()
        why = protected_name(resolved.name) or protected_name(path.name)
        if not why and not resolved.is_relative_to(uploads):  # uploads live in the data dir
            why = guard.reason(resolved) or guard.reason(path.absolute())
        return f"it is protected ({why}): the agent never reads it" if why else None

    return reason


def has_own_fast_model(settings: Settings) -> bool:
    """Whether ``fast`` is configured apart from ``main`` (unset, it copies the main role)."""
    return settings.model_role("fast") != settings.model_role("main")


def uses_fast_model(settings: Settings) -> bool:
    """Whether a knowledge feature (model summaries, query rewriting, HyDE) is on."""
    k = settings.knowledge
    return k.summarize_with_model or k.rewrite or k.hyde


SMALL_MODEL_BYTES = 1_500_000_000
"""An embedded model below this gets the compact tool profile (``tools.profile: auto``)."""


def _budget_counter(main: ChatModel) -> TokenCounter | None:
    """A character-count estimate for the embedded model (whose weights start loading now),
    else the default (cl100k, loaded now in the background).

    cl100k is not the embedded model's tokenizer anyway, the model reports exact prompt
    tokens that calibrate the estimate after its first reply, and loading ``bpe-openai``
    (it decodes three vocabularies at import) was the slowest step of a first local reply:
    1-3 s of the ~6 s measured.
    """
    if isinstance(main, LocalModel):
        # Its weights load while the first context is built.
        main.load_in_background()
        return TokenCounter(use_tokenizer=False)
    preload_encoder()
    return None


def computes_here(model: ChatModel) -> bool:
    """Whether ``model``'s replies take this machine's CPU: the embedded model, or a server
    on loopback.  Then the memory worker's embedding and extraction wait for them."""
    if isinstance(model, LocalModel):
        return True
    endpoint = getattr(model, "endpoint", None)
    return isinstance(endpoint, str) and is_loopback_url(endpoint)


QUIET_AFTER_REPLY = 2.0
"""Seconds after a run ends that background work still waits: the next message often comes
at once (a script, a client), and an embedding batch started in between slowed that reply
from 0.9 to 2-3 s."""


def _replying(main: ChatModel) -> bool:
    loading = isinstance(main, LocalModel) and main.loading
    recent = since_last_conversation() < QUIET_AFTER_REPLY
    return loading or recent or conversations_in_progress() > 0


def tool_profile(settings: Settings, main: ChatModel) -> Literal["full", "compact"]:
    """``tools.profile``, with ``auto`` decided by the main model actually used: compact for
    an embedded GGUF under :data:`SMALL_MODEL_BYTES` (SmolLM2-135M is 0.1 GB), else full."""
    chosen = settings.tools.profile
    if chosen != "auto":
        return chosen
    size = getattr(main, "weights_bytes", None)
    return "compact" if isinstance(size, int) and size < SMALL_MODEL_BYTES else "full"


def repair_after_crash(log_: SessionLog, memory: Memory) -> None:
    """What a killed process left half done, repaired by the next owner of the data dir
    (holding its lock, so nothing else is running): runs still 'running' are interrupted,
    and logged messages memory never stored are queued for it."""
    from shiyi.memory.intake.reconcile import reconcile

    interrupted = log_.interrupt_running()
    if interrupted:
        log.info("marked %d runs of a stopped process interrupted", interrupted)
    writer = memory.writer
    reconcile(log_, memory.store, memory.jobs, user_id=writer.user_id, agent_id=writer.agent_id)


class App:
    """What one process serves from: models, memory, the knowledge tools, the session log,
    the summary cache and the persona, shared by all of its agents.

    :meth:`agent` makes an agent with the tools an allow-list permits, handing it every part
    it uses; :meth:`close` closes what :meth:`open` opened (an agent closes nothing).
    """

    def __init__(
        self,
        settings: Settings,
        models: Models,
        *,
        memory: Memory | None = None,
        owns_memory: bool = False,
    ) -> None:
        self.settings = settings
        self.models = models
        self.memory = memory
        self._owns_memory = owns_memory
        ensure_private_dir(settings.data_dir)
        self.log = SessionLog(settings.sessions_db)
        self.summaries = SummaryStore(settings.data_dir / "summaries.sqlite3")
        self.persona = load_persona(settings)
        self.knowledge_tools = self._knowledge_tools()
        self.documents = self._document_hints()
        self.tool_profile = tool_profile(settings, models.main)
        self._counter = _budget_counter(models.main)
        self._agents: weakref.WeakSet[Agent] = weakref.WeakSet()

    @classmethod
    def open(
        cls,
        settings: Settings,
        *,
        model: ChatModel | None = None,
        memory: Memory | None = None,
        start_worker: bool = True,
    ) -> App:
        """Build everything ``settings`` configures.  ``model`` replaces the main model (a
        test's scripted one); ``memory`` is an open memory to share (the app will not close
        it); else the data dir's memory is opened when ``memory.enabled``."""
        models = build_models(settings, main=model)
        owns = memory is None and settings.memory.enabled
        if owns:
            memory = open_memory(settings, fast=models.fast, start_worker=False)
        try:
            app = cls(settings, models, memory=memory, owns_memory=owns)
            if owns and memory is not None:
                repair_after_crash(app.log, memory)
                if computes_here(models.main):
                    memory.worker.hold_heavy_while = lambda: _replying(models.main)
                if start_worker:
                    memory.worker.start()
            return app
        except BaseException:
            # The store and its worker thread must not be left open, or the process dies in
            # Kuzu's destructor at exit ("terminate called").
            if owns and memory is not None:
                memory.close()
            raise

    def _knowledge_tools(self) -> list[Tool]:
        """``search_knowledge``, when the data dir has a knowledge base and the setting is on;
        the base opens on the first search and shares the memory's embedder."""
        from shiyi.knowledge import KnowledgeBase
        from shiyi.tools.builtins.knowledge import knowledge_tools

        settings = self.settings
        if not settings.knowledge.enabled or not KnowledgeBase.exists(settings):
            return []
        memory, fast = self.memory, self.models.fast

        def open_kb() -> KnowledgeBase:
            embedder = DEFAULT if memory is None else memory.embedder
            return open_knowledge(settings, embedder=embedder, fast=fast)

        return knowledge_tools(open_kb, settings.workspace)

    def _document_hints(self) -> DocumentHints | None:
        """Passages for a bug fix's memory hint, by keywords (no embedder, no model)."""
        from shiyi.knowledge import KnowledgeBase

        settings = self.settings
        if not settings.knowledge.enabled or not KnowledgeBase.exists(settings):
            return None
        return DocumentHints(lambda: open_knowledge(settings, embedder=None, fast=None))

    def tools(
        self, allowed: Collection[str] | None, memory: Memory | None, plan: CurrentPlan
    ) -> ToolRegistry:
        """Every tool ``allowed`` names (all when None), in one registry: the built-in ones,
        the ``memory``'s (an agent's view of it), the knowledge base's and the plan tools
        acting on ``plan``."""
        from shiyi.tools.builtins.memory import memory_tools

        candidates = every_builtin_tool(self.settings.tools)
        if memory is not None:
            candidates += memory_tools(memory)
        candidates += self.knowledge_tools
        candidates += self._script_tools(allowed, memory)
        candidates += plan_tools(lambda: plan.state)
        chosen = [t for t in candidates if allowed is None or t.spec.name in allowed]
        if self.tool_profile == "compact":
            chosen = compact(chosen, None if allowed is None else list(allowed))
        return ToolRegistry(chosen)

    def _script_tools(self, allowed: Collection[str] | None, memory: Memory | None) -> list[Tool]:
        """``scripts`` over the data dir's library, remembering in ``memory``; it runs
        scripts only where ``bash`` is allowed too (running one is running code)."""
        from shiyi.scripts.library import ScriptLibrary
        from shiyi.tools.builtins.script import script_tools

        user = memory.viewer.user_id if memory else self.settings.memory.user_id
        library = ScriptLibrary.for_user(
            self.settings.data_dir, user, configured_user=self.settings.memory.user_id
        )
        can_run = allowed is None or "bash" in allowed
        return script_tools(library, memory, self.settings.tools, can_run=can_run)

    def agent(
        self,
        session_id: str | None = None,
        *,
        allowed: Collection[str] | Default | None = DEFAULT,
        executor: Executor | None = None,
        viewer: Viewer | None = None,
    ) -> Agent:
        """A new agent on this app's parts, with the tools ``allowed`` names (default: the
        ``tools.enabled`` setting; None: all), resuming ``session_id`` if given.

        ``executor`` runs the blocking part of each run's set-up (a server's thread pool);
        ``viewer``: whose memories it reads and writes (a server's caller; default: the
        configured memory.user_id and agent_id)."""
        names = self.settings.tools.enabled if allowed is DEFAULT else allowed
        if names is not None:
            check_tool_names(names, "tools.enabled" if allowed is DEFAULT else "server.tools")
        memory = self.memory.scoped(viewer) if self.memory and viewer else self.memory
        plan = CurrentPlan()
        forced = self.settings.tools.force_first_call
        agent = Agent(
            self.models.main,
            settings=self.settings,
            tools=self.tools(names, memory, plan),
            session_log=self.log,
            summaries=self.summaries,
            plan=plan,
            force_first_call=self.tool_profile == "compact" if forced is None else forced,
            memory=memory,
            summary_model=self.models.fast,
            router_model=self.models.fast if self.settings.routing.use_llm else None,
            persona=self.persona,
            executor=executor,
            counter=self._counter,
            documents=self.documents,
        )
        if session_id is not None:
            agent.resume(session_id)
        self._agents.add(agent)
        return agent

    def __enter__(self) -> App:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the agents still open (queuing their sessions' consolidation), then the
        shared parts this app opened."""
        for agent in list(self._agents):
            agent.close()
        if self.documents is not None:
            self.documents.close()
        if self.memory is not None and self._owns_memory:
            from shiyi.memory.intake.reconcile import mark_reconciled

            mark_reconciled(self.log)
        self.log.close()
        self.summaries.close()
        if self.memory is not None and self._owns_memory:
            self.memory.close()
        self.memory = None
