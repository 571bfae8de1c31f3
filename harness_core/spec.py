"""What an operation asks for: `AgentRunSpec` and its policy enums.

Layer: core model. Knows nothing of any provider, process, or wire protocol.
"""

from __future__ import annotations

import enum
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from harness_core.capabilities import Capability

__all__ = ["AgentRunSpec", "ApprovalPolicy", "Capability", "SandboxMode"]


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


class AgentRunSpec(BaseModel):
    """One agent run, provider-neutral. Frozen; unknown fields are rejected."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_enum_values=False)

    prompt: str = Field(min_length=1, description="The user prompt for the turn.")
    system_prompt: str | None = Field(default=None, description="Extra instructions for the agent.")
    cwd: Path = Field(default_factory=Path.cwd, description="Working directory of the agent.")
    model: str | None = Field(default=None, description="Model name; the provider's default when unset.")
    sandbox: SandboxMode = SandboxMode.WORKSPACE_WRITE
    approval: ApprovalPolicy = ApprovalPolicy.NEVER
    resume_session: str | None = Field(
        default=None, description="A provider session id to continue (needs the `session` capability)."
    )
    requires: frozenset[Capability] = Field(
        default_factory=frozenset, description="Capabilities the operation cannot do without."
    )
    env: dict[str, str] = Field(default_factory=dict, description="Extra environment for the agent CLI.")
    idle_timeout: float | None = Field(
        default=None, gt=0, description="Seconds without any event before the run is failed; none by default."
    )
    provider_options: dict[str, Any] = Field(
        default_factory=dict, description="Provider-specific options, validated by the provider's options model."
    )

    @field_validator("prompt", mode="before")  # before `min_length`, so "" gets this message too
    @classmethod
    def _prompt_not_blank(cls, value: Any) -> Any:
        if isinstance(value, str) and not value.strip():
            raise ValueError("the prompt is empty; pass the task for the agent as PROMPT or on stdin with `-`")
        return value

    @field_validator("model", "resume_session")
    @classmethod
    def _no_empty_strings(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("must not be an empty string; omit it instead")
        return value

    @field_validator("cwd")
    @classmethod
    def _absolute_cwd(cls, value: Path) -> Path:
        return value.expanduser().absolute()

    def needed_capabilities(self) -> frozenset[Capability]:
        """Every capability this spec needs: `requires` plus what its fields imply."""
        needed = set(self.requires)
        if self.resume_session is not None:
            needed.add(Capability.SESSION)
        if self.approval is not ApprovalPolicy.NEVER:
            needed.add(Capability.APPROVALS)
        return frozenset(needed)
