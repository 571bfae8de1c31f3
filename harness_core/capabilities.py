"""Capability metadata: what a provider can do and what a run needs.

Layer: core model. Knows nothing of processes or wire protocols; the runner uses `missing_capabilities`
before anything is spawned.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["Capability", "ProviderInfo", "missing_capabilities"]


class Capability(str, enum.Enum):
    """A feature a provider may declare and an operation may require."""

    STREAMING = "streaming"
    """Token-level text deltas while the model speaks."""
    SESSION = "session"
    """Resume a previous session by id."""
    INTERRUPT = "interrupt"
    """Stop a running turn and still get a clean `interrupted` result."""
    APPROVALS = "approvals"
    """Ask the operation before running a command or changing a file."""


class ProviderInfo(BaseModel):
    """What a provider says about itself (static: no probing, no I/O)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(description="Registry name, e.g. `my-agent` (what `--provider` takes).")
    version: str = Field(description="Version of the provider plugin itself.")
    capabilities: frozenset[Capability] = frozenset()
    description: str = ""
    cli_name: str | None = Field(
        default=None, description="The agent CLI it drives, if any (its executable name, e.g. `my-agent`)."
    )
    min_cli_version: str | None = Field(default=None, description="Oldest supported CLI version.")
    tested_cli_version: str | None = Field(default=None, description="The CLI version its tests pin.")
    secret_flags: frozenset[str] = Field(
        default=frozenset(),
        description="CLI flags whose value may carry secrets (e.g. a settings JSON with keys): wherever they "
        "appear in `provider_options` (an `extra_args` list), `run_started` shows `***` for the value.",
    )


def missing_capabilities(
    needed: Iterable[Capability], declared: Iterable[Capability]
) -> list[Capability]:
    """The needed capabilities not declared, in the enum's order (stable for messages)."""
    have = set(declared)
    want = set(needed)
    return [cap for cap in Capability if cap in want and cap not in have]
