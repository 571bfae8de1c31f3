"""The `claude` provider's options (`-o KEY=VALUE`, or `provider_options` in a spec).

Layer: provider (configuration model), pure. Knows which Claude Code flags and environment variables an option
stands for (`argv` turns them into a command line); knows nothing of processes, the wire or events.
"""

from __future__ import annotations

from typing import Any, Literal

from harness_core.provider import ProviderOptions
from pydantic import Field, field_validator

__all__ = ["PermissionMode", "ClaudeOptions"]

PermissionMode = Literal["default", "acceptEdits", "bypassPermissions", "plan", "dontAsk", "auto", "manual"]
"""Claude Code's `--permission-mode` values (2.1.328)."""


class ClaudeOptions(ProviderOptions):
    """Options of the `claude` provider. A comma list is accepted for the tuple options (`-o allowed_tools=A,B`)."""

    claude_bin: str | None = Field(default=None, description="Path of the claude CLI (default: PATH).")
    bare: bool = Field(
        default=False,
        description="Pass --bare: skip user/project settings, hooks, plugins and CLAUDE.md discovery. Off by "
        "default because --bare also ignores `claude /login` credentials (only ANTHROPIC_API_KEY works) and "
        "offers only the Bash, Edit and Read tools (no Write) in 2.1.328.",
    )
    setting_sources: str | None = Field(
        default=None,
        description='Pass --setting-sources: which settings to load, a comma list of user, project, local ("" '
        "loads none, so no hooks or permission rules from the directories around the workspace). Default: `user` "
        "when the spec does not trust its project (no hooks, MCP servers or commands of the project), Claude "
        "Code's own (all three) when it does.",
    )
    max_retries: int | None = Field(
        default=None,
        ge=0,
        le=50,
        description="CLAUDE_CODE_MAX_RETRIES: how often Claude Code retries a failed model API call "
        "(default: the CLI's own, 10).",
    )
    stream_idle_timeout_ms: int = Field(
        default=60_000,
        ge=10_000,
        description="CLAUDE_BYTE_STREAM_IDLE_TIMEOUT_MS: a model API stream silent this long is abandoned (without "
        "it a stalled stream hangs forever). A value in the spec's env wins over the default.",
    )
    max_turns: int | None = Field(
        default=None, ge=1, description="--max-turns: stop the turn after this many model calls."
    )
    permission_mode: PermissionMode | None = Field(
        default=None,
        description="--permission-mode, overriding the mode the spec's sandbox and approval policy choose.",
    )
    allowed_tools: tuple[str, ...] = Field(
        default=(),
        description="Extra --allowedTools permission rules (never widen the read-only tool list).",
    )
    disallowed_tools: tuple[str, ...] = Field(
        default=(), description="Extra --disallowedTools permission rules: tools refused for this run."
    )
    keep_user_mcp_servers: bool = Field(
        default=False,
        description="Let Claude Code load its own MCP servers (user and trusted project config) besides the run's "
        "`mcp_servers`. Off by default: the run gets only the servers it names (--strict-mcp-config).",
    )
    replace_system_prompt: bool = Field(
        default=False,
        description="Pass the spec's system prompt with --system-prompt (replacing Claude Code's own) instead "
        "of --append-system-prompt.",
    )
    extra_args: tuple[str, ...] = Field(
        default=(), description="Arguments appended to the command line verbatim."
    )
    interrupt_grace: float = Field(
        default=5.0,
        gt=0,
        le=120,
        description="Seconds to wait for the `result` line after an interrupt before stopping the CLI.",
    )

    @field_validator("allowed_tools", "disallowed_tools", "extra_args", mode="before")
    @classmethod
    def _split(cls, value: Any) -> Any:
        if isinstance(value, str):
            return tuple(v for v in (p.strip() for p in value.split(",")) if v)
        return value
