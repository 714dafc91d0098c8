"""``server``: the HTTP API's address, its users and tokens, limits and allowed origins."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator


class ServerUser(BaseModel):
    """One person (and agent) of a shared server: requests with ``token`` act as them."""

    model_config = ConfigDict(extra="forbid")  # a typo in a key is an error

    token: SecretStr
    user_id: str = Field(min_length=1, description="Whose memories and sessions they are.")
    agent_id: str | None = Field(default=None, description="None: memory.agent_id.")

    @field_validator("token")
    @classmethod
    def _token(cls, value: SecretStr) -> SecretStr:
        if not value.get_secret_value().strip():
            raise ValueError("a server.users token must not be empty")
        return value


class AgentProfile(BaseModel):
    """An agent the OpenAI-compatible endpoint serves under its own model name."""

    model_config = ConfigDict(extra="forbid")

    description: str = ""
    tools: list[str] | None = Field(
        default=None,
        description="Tools its agent may run, a subset of server.tools; None: server.tools.",
    )


class ServerSettings(BaseModel):
    """``shiyi serve``: the HTTP API (and the owner of the data dir while it runs)."""

    model_config = ConfigDict(extra="forbid")  # a typo in a key is an error

    host: str = "127.0.0.1"
    port: int = Field(default=8765, ge=0, le=65535)
    token: SecretStr | None = Field(
        default=None,
        description="Bearer token, acting as memory.user_id/agent_id; a token (this or "
        "server.users) is required when host is not a loopback address.",
    )
    users: list[ServerUser] = Field(
        default_factory=list,
        description="Further bearer tokens, each acting as its own user (and agent): every "
        "read, write and delete is scoped to the caller. server.token acts as memory.user_id.",
    )
    chat_port: int | None = Field(
        default=0,
        ge=0,
        le=65535,
        description="Port `shiyi chat` serves the API on, on 127.0.0.1, so other commands can "
        "reach the store it owns (0: any free port; null: do not serve).",
    )
    max_body_bytes: int = Field(default=1_000_000, ge=1024)
    max_idle_agents: int = Field(
        default=64,
        ge=1,
        description="Sessions whose agent (transcript, tool memory, context) stays loaded "
        "while idle; beyond it the least recently used is closed and reloads from the log "
        "on its next message.",
    )
    cors_origins: list[str] = Field(
        default_factory=list,
        description="Origins of web apps that may call the API (CORS), and make changes; "
        "empty: CORS off, and only the server's own page may make changes from a browser.",
    )
    allowed_hosts: list[str] = Field(
        default_factory=list,
        description="Host header names a loopback server also answers (besides localhost "
        "and loopback addresses), e.g. a local proxy's name; '*': any. Guards against DNS "
        "rebinding.",
    )
    tools: list[str] | None = Field(
        default_factory=lambda: [
            "read_file", "list_dir", "grep", "write_file", "edit_file", "repo_map",
            "web_search", "query_memory", "expand_memory", "remember", "create_plan",
            "update_plan", "search_knowledge", "scripts",
        ],
        description="Tools the server lets the model run (bash is off unless listed; scripts "
        "run only where bash may); None: all.",
    )  # fmt: skip

    profiles: dict[str, AgentProfile] = Field(
        default_factory=dict,
        description="Agent profiles /v1/chat/completions serves as model names (listed by "
        "GET /v1/models), besides `shiyi`: the agent with server.tools.",
    )

    @model_validator(mode="after")
    def _profiles_within_tools(self) -> ServerSettings:
        for name, profile in self.profiles.items():
            extra = sorted(set(profile.tools or ()) - set(self.tools or profile.tools or ()))
            if extra:
                raise ValueError(
                    f"server.profiles.{name}.tools names {', '.join(extra)}, which "
                    "server.tools does not allow; a profile may only narrow server.tools"
                )
        return self

    @model_validator(mode="after")
    def _distinct_tokens(self) -> ServerSettings:
        tokens = [u.token.get_secret_value() for u in self.users]
        if self.token is not None:
            tokens.append(self.token.get_secret_value())
        if len(set(tokens)) != len(tokens):
            raise ValueError("server.token and server.users tokens must all differ")
        return self
