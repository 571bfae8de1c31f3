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
    LIVE_SESSION = "live_session"
    """`open_session` keeps one agent process across turns (without it, a session with `session` runs each
    turn as a new process resuming the last one)."""
    STEER = "steer"
    """Add input to a turn while it runs (`LiveRun.steer`, on a turn of a live session)."""
    STRUCTURED_OUTPUT = "structured_output"
    """Make the agent's final answer a JSON value valid against `output_schema`."""
    EFFORT = "effort"
    """Set the model's reasoning effort (`effort`)."""
    MAX_TURNS = "max_turns"
    """Bound the agent's steps natively (`max_turns`)."""
    COST = "cost"
    """Report what a run cost in USD (`Usage.cost_usd`), so `max_cost_usd` can be enforced."""
    MCP_STDIO = "mcp_stdio"
    """Give the agent an MCP server it starts as a program (`McpServer` with a `command`)."""
    MCP_HTTP = "mcp_http"
    """Give the agent an MCP server it reaches over streamable HTTP (`McpServer` with a `url`)."""
    MCP_SSE = "mcp_sse"
    """Give the agent an MCP server it reaches over the older HTTP+SSE transport (`transport="sse"`)."""
    IMAGE_INPUT = "image_input"
    """Send an image attachment to the model natively (without it, its path goes in the prompt)."""
    FILE_INPUT = "file_input"
    """Send a file attachment to the model natively (without it, its path goes in the prompt)."""


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
    genai_provider: str | None = Field(
        default=None,
        description="The OpenTelemetry GenAI conventions' `gen_ai.provider.name` of the model behind the agent: a "
        "well-known value where one applies (`anthropic`, `openai`, `gcp.gemini`, ...), which the conventions "
        "require then; None: traces use the provider's `name` (a custom value).",
    )
    min_cli_version: str | None = Field(default=None, description="Oldest supported CLI version.")
    tested_cli_version: str | None = Field(default=None, description="The CLI version its tests pin.")
    session_overrides: frozenset[str] = Field(
        default=frozenset({"model", "approval", "sandbox", "effort", "output_schema"}),
        description="The spec fields a turn of a live session may change (`Session.turn(model=...)`); a provider "
        "without `live_session` plays each turn as a new process and can change them all.",
    )
    secret_flags: frozenset[str] = Field(
        default=frozenset(),
        description="CLI flags whose value may carry secrets (e.g. a settings JSON with keys): wherever they "
        "appear in `provider_options` (an `extra_args` list), `run_started` shows `***` for the value.",
    )
    public_env: frozenset[str] = Field(
        default=frozenset(),
        description="Environment variables whose values are never secrets (the paths, switches, endpoints and "
        "model names its offline setup sets, say): shown in logs when they are in `spec.env`, whose other values "
        "are masked (`HOME`, `PATH`, `TMPDIR`, `LANG`, `LC_*`, `XDG_*` are shown anyway). A secret-looking name "
        "(`*_API_KEY`, `*TOKEN*`, …) stays masked even here.",
    )
    aliases: frozenset[str] = Field(
        default=frozenset(),
        description="Other names `--provider` accepts for it; a provider's own name always wins over another's "
        "alias, and an alias two providers claim names neither.",
    )
    tool_filters: frozenset[str] = Field(
        default=frozenset(),
        description="The provider-neutral tool names (`shell`, `edit`, `mcp`, ...; `mcp:*` for every `mcp:SERVER` "
        "and `mcp:SERVER.TOOL`) its CLI filters natively in `allowed_tools` / `disallowed_tools`. Another name is "
        "enforced by Harness through approvals when the provider has `approvals` and the action asks (commands, "
        "file changes), else refused before spawn.",
    )
    tool_allow_lists: bool = Field(
        default=True,
        description="Its CLI honours its `tool_filters` in `allowed_tools` (\"only these\"): it can turn off every "
        "tool the list leaves out, its own shell, edits and web search as well as MCP servers. False for a CLI that "
        "takes only a deny-list, or that can leave out MCP servers but not turn off its own tools: every "
        "`allowed_tools` is then refused before anything is made (an allow-list is never half applied), naming the "
        "providers that take it; `harness providers NAME` says so.",
    )
    tool_allow_mcp_tools: bool = Field(
        default=True,
        description="Its CLI's allow-list can name one tool of an MCP server (`mcp:SERVER.TOOL`). False for a CLI "
        "that allows MCP tools by server only: such a name in `allowed_tools` is refused before spawn, naming the "
        "providers that take it (Harness's own `harness` server excepted: the CLI allows it whole, and Harness serves "
        "only the tools named).",
    )
    attachment_types: frozenset[str] = Field(
        default=frozenset({"*/*"}),
        description="The media types it sends the model natively (`image/png`, `text/*`, `*/*` for any), for the "
        "kinds its capabilities take (`image_input`, `file_input`). An attachment of another type goes in the "
        "prompt as its path with a notice (refused before spawn with `strict_attachments`).",
    )
    attachment_data: bool = Field(
        default=True,
        description="It takes an attachment given as bytes (`data`) natively. False for a CLI that takes files by "
        "path only: bytes are refused before spawn (they have no path to put in the prompt either).",
    )
    mcp_object_results: bool = Field(
        default=False,
        description="Its agent's MCP client reads a tool's JSON text result as structured content and refuses one "
        "that is not a JSON object (`5`, `[1, 2]`): Harness's Python tools then send such a result also as "
        "`structuredContent` `{\"result\": ...}`. Off for every other agent, which would show the model that object "
        "instead of the text.",
    )
    approval_kinds: frozenset[str] = Field(
        default=frozenset(),
        description="The kinds of action (`shell`, `edit`, `write`, ...) its agent always asks approval for under "
        "approval `untrusted` (needs `approvals`): a filter of one of them that the CLI does not take natively is "
        "enforced by Harness, which denies the request. Declare only what the agent really asks for (the contract's "
        "`test_disallowed_tools_honoured_or_refused` checks it); the rest is refused before spawn.",
    )
    project_config: tuple[str, ...] = Field(
        default=(),
        description="The agent's own configuration a project carries that can run programs (hooks, MCP servers, "
        "custom commands), as paths relative to a project directory (`.agent/settings.json`), which the provider "
        "keeps the agent from loading unless `spec.trust_project`: `harness run` names the ones a project has when "
        "it does not load them.",
    )


def missing_capabilities(
    needed: Iterable[Capability], declared: Iterable[Capability]
) -> list[Capability]:
    """The needed capabilities not declared, in the enum's order (stable for messages)."""
    have = set(declared)
    want = set(needed)
    return [cap for cap in Capability if cap in want and cap not in have]
