"""What an operation asks for: `AgentRunSpec` and its policy enums.

Layer: core model. Knows nothing of any provider, process, or wire protocol.
"""

from __future__ import annotations

import enum
import os
from collections.abc import Iterable, Mapping, Set as AbstractSet
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from harness_core.attachment import Attachment
from harness_core.capabilities import Capability
from harness_core.mcp import McpServer, check_server_name, check_tool_name

__all__ = ["AgentRunSpec", "ApprovalName", "ApprovalPolicy", "Capability", "SandboxMode", "SandboxName", "SessionSpec",
           "schema_problem"]


class SandboxMode(str, enum.Enum):
    """How much of the machine the agent may change."""

    READ_ONLY = "read-only"
    WORKSPACE_WRITE = "workspace-write"
    DANGER_FULL_ACCESS = "danger-full-access"


class ApprovalPolicy(str, enum.Enum):
    """When the agent must ask the operation before acting."""

    NEVER = "never"
    ON_REQUEST = "on-request"
    UNTRUSTED = "untrusted"


SandboxName = Literal["read-only", "workspace-write", "danger-full-access"]
"""A `SandboxMode` by its value: what `sandbox=` also takes (`sandbox="read-only"`)."""
ApprovalName = Literal["never", "on-request", "untrusted"]
"""An `ApprovalPolicy` by its value: what `approval=` also takes (`approval="on-request"`)."""


class _SpecFields(BaseModel):
    """Everything a run is played with except its prompt: shared by `AgentRunSpec` and `SessionSpec`.

    Typed as they are read (`spec.cwd` is an absolute `Path`, `spec.sandbox` a `SandboxMode`); given, they take
    what pydantic converts (`cwd="my-repo"`, `sandbox="read-only"`, `requires={Capability.SESSION}`, any
    mapping for `env`): `AgentRunSpec` and `SessionSpec` spell that out in an `__init__` for type checkers only,
    since pydantic types its `__init__` with the read types (and its mypy plugin with `Any`)."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_enum_values=False)

    system_prompt: str | None = Field(default=None, description="Extra instructions for the agent.")
    cwd: Path = Field(default_factory=Path.cwd, description="Working directory of the agent.")
    model: str | None = Field(default=None, description="Model name; the provider's default when unset.")
    effort: str | None = Field(
        default=None, description="Reasoning effort, as the provider's model names it (e.g. low, medium, high); "
        "the provider's default when unset (needs the `effort` capability)."
    )
    sandbox: SandboxMode = SandboxMode.WORKSPACE_WRITE
    approval: ApprovalPolicy = ApprovalPolicy.NEVER
    resume_session: str | None = Field(
        default=None, description="A provider session id to continue (needs the `session` capability)."
    )
    output_schema: dict[str, Any] | None = Field(
        default=None, description="A JSON Schema the final answer must be valid against: the result's "
        "`structured_output` holds the parsed value (needs the `structured_output` capability)."
    )
    max_turns: int | None = Field(
        default=None, ge=1, description="At most this many agent steps (needs the `max_turns` capability)."
    )
    max_cost_usd: float | None = Field(
        default=None, gt=0, allow_inf_nan=False,
        description="Stop the run (failed, `budget_exceeded`) once it has cost more than this "
        "many USD, as the provider reports it (needs the `cost` capability); in a session, over all its turns."
    )
    max_output_tokens: int | None = Field(
        default=None, ge=1, description="Stop the run (failed, `budget_exceeded`) once the model has written more "
        "than this many tokens; in a session, over all its turns."
    )
    requires: frozenset[Capability] = Field(
        default_factory=frozenset, description="Capabilities the operation cannot do without."
    )
    env: dict[str, str] = Field(default_factory=dict, description="Extra environment for the agent CLI.")
    idle_timeout: float | None = Field(
        default=None, gt=0, allow_inf_nan=False,
        description="Seconds without any event before the run is failed; none by default."
    )
    provider_options: dict[str, Any] = Field(
        default_factory=dict, description="Provider-specific options, validated by the provider's options model."
    )
    trust_project: bool = Field(
        default=False, description="Let the agent load its own configuration from the project in `cwd` (hooks, "
        "MCP servers, custom commands: programs a cloned repository chose). Off by default: the provider keeps "
        "the agent from loading them with the agent's own switches (setting sources, folder trust). `harness run` "
        "turns it on for the directories in the user's `trusted_projects`."
    )

    mcp_servers: tuple[McpServer, ...] = Field(
        default=(), description="MCP servers the agent gets (stdio, http or sse, as the provider's capabilities "
        "say), each by a unique name."
    )
    attachments: tuple[Attachment, ...] = Field(
        default=(), description="Images and files sent with the prompt; what the provider cannot take is named in "
        "the prompt by its path with a notice (refused before spawn with `strict_attachments`)."
    )
    strict_attachments: bool = Field(
        default=False, description="Refuse the run before spawn when an attachment cannot be sent natively."
    )
    allowed_tools: frozenset[str] | None = Field(
        default=None, description="The only tools the agent may use, by provider-neutral name (`shell`, `read`, "
        "`edit`, `write`, `search`, `web`, `agent`, `mcp`, `mcp:SERVER`, `mcp:SERVER.TOOL`); all when unset."
    )
    disallowed_tools: frozenset[str] = Field(
        default_factory=frozenset, description="Tools the agent may not use, by provider-neutral name."
    )
    trace_context: dict[str, str] = Field(
        default_factory=dict, description="The W3C trace context the run continues (`traceparent`, optional "
        "`tracestate`): set by whoever starts a run that plays elsewhere (a background worker, a batch task, a Ray "
        "worker) from its own current context (`PluginHost.with_trace_context`), read by the observers where the "
        "run plays. Empty: the run's observers take the context current where it plays."
    )

    @field_validator("mcp_servers")
    @classmethod
    def _unique_servers(cls, value: tuple[McpServer, ...]) -> tuple[McpServer, ...]:
        names = [server.name for server in value]
        twice = sorted({name for name in names if names.count(name) > 1})
        if twice:
            raise ValueError(f"MCP server names must be unique; given twice: {', '.join(twice)}")
        for server in value:
            check_server_name(server)
        return value

    @field_validator("allowed_tools", "disallowed_tools")
    @classmethod
    def _neutral_tool_names(cls, value: frozenset[str] | None) -> frozenset[str] | None:
        if value is not None:
            for name in sorted(value):
                check_tool_name(name)
        return value

    @field_validator("model", "resume_session", "effort")
    @classmethod
    def _no_empty_strings(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("must not be an empty string; omit it instead")
        return value

    @field_validator("cwd")
    @classmethod
    def _absolute_cwd(cls, value: Path) -> Path:
        return value.expanduser().absolute()

    @field_validator("output_schema")
    @classmethod
    def _valid_schema(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        if value is not None:
            problem = schema_problem(value)
            if problem is not None:
                raise ValueError(f"not a valid JSON Schema: {problem}")
        return value

    def needed_capabilities(self) -> frozenset[Capability]:
        """Every capability this spec needs: `requires` plus what its fields imply."""
        needed = set(self.requires)
        if self.resume_session is not None:
            needed.add(Capability.SESSION)
        if self.approval is not ApprovalPolicy.NEVER:
            needed.add(Capability.APPROVALS)
        for name, capability in _FIELD_CAPABILITIES.items():
            if getattr(self, name) is not None:
                needed.add(capability)
        needed.update(TRANSPORT_CAPABILITIES[server.transport] for server in self.mcp_servers)
        if self.strict_attachments:
            needed.update(ATTACHMENT_CAPABILITIES[attachment.kind] for attachment in self.attachments)
        return frozenset(needed)


_FIELD_CAPABILITIES = {
    "output_schema": Capability.STRUCTURED_OUTPUT,
    "effort": Capability.EFFORT,
    "max_turns": Capability.MAX_TURNS,
    "max_cost_usd": Capability.COST,
}
"""The optional spec fields that need a capability when set (`needed_capabilities`)."""
TRANSPORT_CAPABILITIES = {"stdio": Capability.MCP_STDIO, "http": Capability.MCP_HTTP, "sse": Capability.MCP_SSE}
"""What an MCP server of each transport needs."""
ATTACHMENT_CAPABILITIES = {"image": Capability.IMAGE_INPUT, "file": Capability.FILE_INPUT}
"""What an attachment of each kind needs to be sent natively (a need only with `strict_attachments`)."""


class AgentRunSpec(_SpecFields):
    """One agent run, provider-neutral. Frozen; unknown fields are rejected."""

    prompt: str = Field(min_length=1, description="The user prompt for the turn.")

    if TYPE_CHECKING:  # what the fields take (pydantic converts), for a type checker without pydantic's plugin
        def __init__(  # the fields' names and defaults: tests/test_python_api.py keeps them equal
            self, *, prompt: str, system_prompt: str | None = None, cwd: str | os.PathLike[str] = ...,
            model: str | None = None, effort: str | None = None, sandbox: SandboxMode | SandboxName = ...,
            approval: ApprovalPolicy | ApprovalName = ..., resume_session: str | None = None,
            output_schema: Mapping[str, Any] | None = None, max_turns: int | None = None,
            max_cost_usd: float | None = None, max_output_tokens: int | None = None,
            requires: AbstractSet[Capability] = ..., env: Mapping[str, str] = ..., idle_timeout: float | None = None,
            provider_options: Mapping[str, Any] = ..., trust_project: bool = False,
            mcp_servers: Iterable[McpServer] = (), attachments: Iterable[Attachment] = (),
            strict_attachments: bool = False, allowed_tools: AbstractSet[str] | None = None,
            disallowed_tools: AbstractSet[str] = ..., trace_context: Mapping[str, str] = ...,
        ) -> None: ...

    @field_validator("prompt", mode="before")  # before `min_length`, so "" gets this message too
    @classmethod
    def _prompt_not_blank(cls, value: Any) -> Any:
        if isinstance(value, str) and not value.strip():
            raise ValueError("the prompt is empty; give the agent a task (on the command line: PROMPT, or `-` "
                             "to read it from stdin)")
        return value


class SessionSpec(_SpecFields):
    """A live session's settings (`open_session`): an `AgentRunSpec` without the prompt, which each turn brings.
    Frozen; unknown fields are rejected."""

    if TYPE_CHECKING:  # as for `AgentRunSpec`
        def __init__(
            self, *, system_prompt: str | None = None, cwd: str | os.PathLike[str] = ...,
            model: str | None = None, effort: str | None = None, sandbox: SandboxMode | SandboxName = ...,
            approval: ApprovalPolicy | ApprovalName = ..., resume_session: str | None = None,
            output_schema: Mapping[str, Any] | None = None, max_turns: int | None = None,
            max_cost_usd: float | None = None, max_output_tokens: int | None = None,
            requires: AbstractSet[Capability] = ..., env: Mapping[str, str] = ..., idle_timeout: float | None = None,
            provider_options: Mapping[str, Any] = ..., trust_project: bool = False,
            mcp_servers: Iterable[McpServer] = (), attachments: Iterable[Attachment] = (),
            strict_attachments: bool = False, allowed_tools: AbstractSet[str] | None = None,
            disallowed_tools: AbstractSet[str] = ..., trace_context: Mapping[str, str] = ...,
        ) -> None: ...

    def turn(self, prompt: str, **overrides: Any) -> AgentRunSpec:
        """The spec of one turn: these settings, `prompt`, and the turn's overrides (a None override keeps the
        session's value).

        Raises:
            pydantic.ValidationError: the prompt is empty or an override does not validate.
        """
        fields = {name: getattr(self, name) for name in type(self).model_fields}  # as is: keeps `harness_own` marks
        fields.update({k: v for k, v in overrides.items() if v is not None})
        return AgentRunSpec(prompt=prompt, **fields)

    @classmethod
    def of(cls, spec: _SpecFields) -> SessionSpec:
        """The settings of `spec` (an `AgentRunSpec`'s prompt left out)."""
        return cls(**{name: getattr(spec, name) for name in cls.model_fields})


def schema_problem(schema: dict[str, Any]) -> str | None:
    """What is wrong with `schema` as a JSON Schema (its own meta-schema's verdict), or None when it is valid."""
    from jsonschema import exceptions, validators  # only when a schema is given: keeps `import harness_core` cheap

    try:
        validators.validator_for(schema).check_schema(schema)
    except exceptions.SchemaError as exc:
        where = "/".join(str(p) for p in exc.path)
        return f"{exc.message}" + (f" (at {where})" if where else "")
    return None
