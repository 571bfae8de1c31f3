"""The options of the ACP providers (`-o KEY=VALUE` / `provider_options`).

Layer: provider configuration (pydantic models only). Knows no process and no wire message. Each named provider
takes `AcpOptions` under a subclass whose `bin` also answers to `<cli>_bin` (`gemini_bin`, `qwen_bin`, ...: the
name the contract suite and the other providers use); the generic `acp` provider adds `command`.
"""

from __future__ import annotations

import shlex
from typing import Any

from harness_core.provider import ProviderOptions
from pydantic import AliasChoices, Field, create_model, field_validator

__all__ = ["AcpOptions", "GenericAcpOptions", "options_for"]


class AcpOptions(ProviderOptions):
    """Options every ACP provider takes."""

    bin: str | None = Field(default=None, description="Path to the agent's executable (default: found on PATH).")
    args: tuple[str, ...] = Field(default=(), description="Extra arguments after the agent's launch arguments.")
    public_env: dict[str, str] = Field(
        default_factory=dict, description="Environment for the agent that is no secret (paths, switches: shown in "
        "logs as they are); secrets belong in the spec's `env`, which the logs mask.")
    mode: str | None = Field(
        default=None, description="A session mode id to switch to (the agent's `modes`), instead of the one the "
        "spec's sandbox and approval choose.")
    startup_timeout: float = Field(default=60.0, gt=0, description="Seconds for `initialize` and `session/new`.")
    request_timeout: float = Field(default=30.0, gt=0, description="Seconds for the other requests.")
    interrupt_timeout: float = Field(
        default=3.0, gt=0, description="Seconds to wait for the prompt's `cancelled` stop reason after "
        "`session/cancel`; then the turn ends interrupted all the same (a live session closes after it, its agent "
        "not trusted to have stopped). Keep it below the runner's interrupt grace (5 s), which stops the agent hard.")

    @field_validator("args", mode="before")
    @classmethod
    def _split(cls, value: Any) -> Any:
        return shlex.split(value) if isinstance(value, str) else value


class GenericAcpOptions(AcpOptions):
    """The generic `acp` provider: any agent that speaks ACP on stdio, by its command."""

    command: str | tuple[str, ...] | None = Field(
        default=None, description='The agent\'s launch command, e.g. "my-agent --acp" (a shell-style string or a '
        'list). Required to run.')

    @property
    def argv(self) -> list[str]:
        if self.command is None:
            return []
        return shlex.split(self.command) if isinstance(self.command, str) else list(self.command)

    @field_validator("command")
    @classmethod
    def _not_empty(cls, value: str | tuple[str, ...] | None) -> str | tuple[str, ...] | None:
        argv = [] if value is None else shlex.split(value) if isinstance(value, str) else list(value)
        if value is not None and not argv:
            raise ValueError('must name the agent\'s command, e.g. command="my-agent --acp"')
        return value


_cache: dict[str, type[AcpOptions]] = {}


def options_for(cli: str) -> type[AcpOptions]:
    """`AcpOptions` whose `bin` is also accepted as `<cli>_bin` (`codex-acp_bin` as well as `codex_acp_bin`)."""
    found = _cache.get(cli)
    if found is None:
        names = dict.fromkeys(("bin", f"{cli}_bin", f"{cli.replace('-', '_')}_bin"))
        field = Field(default=None, validation_alias=AliasChoices(*names),
                      description=f"Path to `{cli}` (default: found on PATH); also -o {cli}_bin=PATH.")
        found = _cache[cli] = create_model(
            f"{cli.title().replace('-', '')}Options", __base__=AcpOptions, bin=(str | None, field))
    return found
