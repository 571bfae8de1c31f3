"""The ACP agents Harness knows by name: how to launch each, which version is tested, what it can do.

Layer: provider configuration (data). Knows each named agent's executable, launch arguments, npm package, pinned
version, install hint, session modes and offline setup; knows no wire message. A profile is all it takes to add a
named agent (`provider.named_provider`). How capabilities are declared: providers/acp/README.md.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness_core.provider import Capability

from harness_acp.trust import gemini_untrusted_env, qwen_untrusted_env

if TYPE_CHECKING:
    from harness_core import AgentRunSpec, SessionSpec

    Spec = AgentRunSpec | SessionSpec

__all__ = ["BASE_CAPABILITIES", "CLAUDE_KIND_TOOLS", "PROFILES", "AgentProfile", "ModeKey", "claude_disallowed"]

ModeKey = tuple[str, str]
"""(sandbox value, "never" | "ask"): which session mode a spec's sandbox and approval policy choose."""

BASE_CAPABILITIES = frozenset({Capability.STREAMING, Capability.INTERRUPT, Capability.APPROVALS,
                               Capability.LIVE_SESSION, Capability.MCP_STDIO})
"""What every ACP agent can do through the protocol itself: streamed chunks, `session/cancel`, permission requests,
many prompts on one session in one process, and stdio MCP servers in `session/new`. Each named agent adds the
MCP transports and prompt blocks its `initialize` offers (`mcpCapabilities`, `promptCapabilities`) where the
`acp-real` env showed them working."""


@dataclass(frozen=True)
class AgentProfile:
    name: str
    """The provider's name (`--provider NAME`)."""
    title: str
    cli: str
    """The executable's name on PATH."""
    args: tuple[str, ...]
    """Arguments that make it speak ACP on stdio."""
    package: str
    """Its npm package (the version is read from the package.json it was installed with)."""
    tested_version: str
    min_version: str
    capabilities: frozenset[Capability]
    description: str
    genai_provider: str | None = None
    """`gen_ai.provider.name` of the model behind it (`ProviderInfo.genai_provider`): `anthropic`, `openai`, ..."""
    offline: str | None = None
    """`module:function` of its `offline_setup(scenario, workspace, state_dir)`, imported only when used."""
    modes: Mapping[ModeKey, str] = field(default_factory=dict)
    """Session mode per (sandbox, approval kind); a key not here keeps the agent's own default mode."""
    native_globs: tuple[str, ...] = ()
    """Where the native binary lies beside an npm wrapper (spawned instead of the wrapper)."""
    aliases: frozenset[str] = frozenset()
    exits_on_eof: bool = True
    """Whether the agent exits when its stdin closes (else it is sent SIGTERM at once when the run ends)."""
    fix_env: Callable[[dict[str, str]], dict[str, str]] | None = None
    """Adjusts the agent's environment before it is spawned (a known quirk of the agent)."""
    entry: Callable[[Path], list[str] | None] | None = None
    """The command that runs the agent in one process, from the executable found (None: run that), for an npm
    wrapper that starts the agent as its child (killing the wrapper would leave the agent serving its pipes)."""
    reports_exit_codes: bool = True
    """Whether its shell tool results carry the command's exit status."""
    reports_command_output: bool = True
    """Whether its shell tool results carry the command's output."""
    warning_chunks: re.Pattern[str] | None = None
    """Message chunks that are the agent's own warnings, not its answer (a `cli_warning` notice instead)."""
    launch: Callable[[Spec], list[str]] | None = None
    """Launch arguments for spec fields the agent takes on its command line (model, system prompt)."""
    launch_env: Callable[[Spec], dict[str, str]] | None = None
    """Environment for spec fields the agent takes from its environment."""
    set_model_first: bool = False
    """Choose the model with `session/set_model` even where a `model` config option exists (claude-agent-acp
    0.23.1's option takes only the names it lists; its set_model any model Claude Code knows)."""
    session_meta: Callable[[Spec], dict[str, Any]] | None = None
    """`_meta` of `session/new` for spec fields the agent takes there."""
    handles: frozenset[str] = frozenset()
    """The spec fields `launch`/`session_meta` take care of (not set again over ACP)."""
    session_overrides: frozenset[str] = frozenset({"model", "approval", "sandbox", "effort"})
    """What a turn of a live session may change (what is set at launch or session/new is the session's)."""
    project_config: tuple[str, ...] = ()
    """What the agent loads from a project that can run programs (`ProviderInfo.project_config`)."""
    untrusted_env: Callable[[Mapping[str, str]], dict[str, str]] | None = None
    """Environment that keeps the agent from loading a project's own configuration, for a spec that does not trust
    its project (given the environment the agent would get). `session_meta` does it for an agent that takes it
    in `session/new`."""
    mcp_needs_trust: bool = False
    """Whether the agent connects MCP servers only in a trusted folder (Gemini CLI 0.61.0 and Qwen Code 0.24.4, even
    those given in `session/new`): a run with servers whose project is not trusted then keeps `untrusted_env` off
    when the project has none of `project_config`, and is refused before spawn when it has some."""
    approval_kinds: frozenset[str] = frozenset()
    """The actions the agent always asks permission for in the mode an asking policy chooses
    (`ProviderInfo.approval_kinds`): a filter of one is enforced by Harness denying the request. Not `shell`: every
    ACP agent runs some commands without asking (docs/*.md)."""
    mcp_object_results: bool = False
    """Its MCP client refuses a JSON tool result that is not an object (`ProviderInfo.mcp_object_results`)."""
    tool_filters: frozenset[str] = frozenset()
    """The neutral tool names the agent filters itself in `disallowed_tools` (`ProviderInfo.tool_filters`);
    `session_meta` passes them. No ACP agent takes `allowed_tools` here (refused before spawn)."""
    untrusted_modes: Mapping[ModeKey, str] = field(default_factory=dict)
    """Modes replacing `modes` in a project the agent does not trust (Gemini CLI and Qwen Code refuse `yolo` there:
    their asking mode instead, with Harness answering by the same policy)."""

    @property
    def install(self) -> str:
        return f"npm install -g {self.package}@{self.tested_version}"


def _modes(read_only: str, workspace: str, full: str, *, full_never: str | None = None,
           ask: str | None = None) -> dict[ModeKey, str]:
    """Modes by sandbox; under danger-full-access with approval `never`, `full_never` (a mode that asks nothing)."""
    table = {("read-only", "never"): read_only, ("workspace-write", "never"): workspace,
             ("danger-full-access", "never"): full_never or full,
             ("read-only", "ask"): ask or read_only, ("workspace-write", "ask"): ask or workspace,
             ("danger-full-access", "ask"): ask or full}
    return table


def _is_sandbox_one(env: dict[str, str]) -> dict[str, str]:
    """claude-agent-acp 0.23.1 passes `--allow-dangerously-skip-permissions` to Claude Code whenever `IS_SANDBOX` is
    set, and Claude Code accepts it (as root) only for `IS_SANDBOX=1`: any other value fails every session/new
    ("Query closed before response received"). Set, it is made "1"; unset stays unset."""
    if env.get("IS_SANDBOX") not in (None, "1"):
        env = {**env, "IS_SANDBOX": "1"}
    return env


def _codex_launch(spec: Spec) -> list[str]:
    return ["-c", f"model={json.dumps(spec.model)}"] if spec.model else []


def _model_flag(spec: Spec) -> list[str]:
    """`--model=NAME` in one argument: as two, a name that starts with `-` (`--openai-base-url=...`, from a
    project's `.harness.toml` say) would be read by the agent as a flag of its own."""
    return [f"--model={spec.model}"] if spec.model else []


def _qwen_launch(spec: Spec) -> list[str]:
    args = _model_flag(spec)
    return [*args, f"--append-system-prompt={spec.system_prompt}"] if spec.system_prompt else args


OFFLINE_MARK = "HARNESS_OFFLINE"
"""Set to "1" in the env of every spec `harness_core.offline` points at a scripted backend (a literal: importing the
offline package here would load it for every run)."""

CLAUDE_READ_ONLY_TOOLS = ("Read", "Grep", "Glob", "WebFetch", "WebSearch", "ToolSearch", "TaskCreate", "TaskGet",
                          "TaskList", "TaskUpdate")
"""The built-in tools claude-acp offers under `read-only` (the same allow-list as the claude provider's, which
explains each): its plan mode did not stop edits in 0.23.1, so read-only is enforced by the tools offered."""


CLAUDE_KIND_TOOLS: dict[str, tuple[str, ...]] = {
    "shell": ("Bash", "Monitor", "BashOutput", "KillShell"),
    "read": ("Read",),
    "edit": ("Edit", "MultiEdit", "NotebookEdit"),
    "write": ("Write",),
    "search": ("Grep", "Glob", "LS"),
    "web": ("WebFetch", "WebSearch"),
    "agent": ("Task", "Agent", "SendMessage", "ListAgents", "Workflow"),
}
"""Claude Code's built-in tools of each neutral kind (the claude provider's table), for `disallowedTools`."""


def claude_disallowed(names: frozenset[str]) -> list[str]:
    """`disallowed_tools` as Claude Agent SDK `disallowedTools`: a kind's built-in tools, `mcp:S` → `mcp__S`,
    `mcp:S.T` → `mcp__S__T`."""
    found: list[str] = []
    for name in sorted(names):
        if name.startswith("mcp:"):
            found.append("mcp__" + name[4:].replace(".", "__", 1))
        else:
            found += CLAUDE_KIND_TOOLS.get(name, ())
    return list(dict.fromkeys(found))


def _claude_meta(spec: Spec) -> dict[str, Any]:
    meta: dict[str, Any] = {}
    options: dict[str, Any] = {}
    if spec.disallowed_tools:  # merged by claude-agent-acp 0.23.1 with its own (AskUserQuestion)
        options["disallowedTools"] = claude_disallowed(spec.disallowed_tools)
    if spec.system_prompt:
        meta["systemPrompt"] = {"append": spec.system_prompt}
    if spec.sandbox.value == "read-only":
        options["tools"] = list(CLAUDE_READ_ONLY_TOOLS)
    if spec.env.get(OFFLINE_MARK) == "1":  # offline: none (the user's are the isolated, empty ones anyway)
        options["settingSources"] = []
    elif not spec.trust_project:  # the adapter's own default is user, project and local
        options["settingSources"] = ["user"]
    if options:
        meta["claudeCode"] = {"options": options}
    return meta


def _no_relaunch(name: str) -> Callable[[dict[str, str]], dict[str, str]]:
    def fix(env: dict[str, str]) -> dict[str, str]:
        return {name: "1", **env} if name not in env else env
    fix.__doc__ = f"""{name}: the agent does not start itself again as its own child (one process, which Harness
    owns: the relaunching parent ignores SIGTERM, and its child would outlive a killed parent)."""
    return fix


def _qwen_entry(found: Path) -> list[str] | None:
    """`node --expose-gc cli.js` (what 0.24.4's `cli-entry.js` spawns as its child), when `found` is that wrapper."""
    try:
        package = found.resolve(strict=True).parent
    except OSError:
        return None
    node = shutil.which("node")
    if node is None or not (package / "cli.js").is_file() or found.resolve().name != "cli-entry.js":
        return None
    return [node, "--expose-gc", str(package / "cli.js")]


_ASKS_BEFORE_FILE_CHANGES = frozenset({"edit", "write"})
"""What the named agents ask before in their asking modes (Gemini CLI and Qwen Code `default`, codex-acp `read-only`):
edits and writes; not every command."""

PROFILES: dict[str, AgentProfile] = {
    p.name: p
    for p in (
        AgentProfile(
            name="codex-acp",
            genai_provider="openai",
            title="Codex (ACP adapter)",
            cli="codex-acp",
            args=(),
            package="@zed-industries/codex-acp",
            tested_version="0.16.0",
            min_version="0.16.0",
            capabilities=BASE_CAPABILITIES | {Capability.SESSION, Capability.EFFORT, Capability.MCP_HTTP,
                                              Capability.IMAGE_INPUT},
            description="OpenAI Codex through Zed's ACP adapter: sandboxed modes, approvals, load/resume.",
            offline="harness_acp.offline_adapters:codex_acp_offline_setup",
            # Codex sandboxes commands itself: read-only / auto (workspace) / full-access are its OS sandboxes.
            # Only read-only asks (before every patch; commands run in its read-only sandbox and ask to
            # escalate): the one preset that lets the operation decide.
            modes=_modes("read-only", "auto", "full-access", ask="read-only"),
            native_globs=("node_modules/@zed-industries/codex-acp-linux-*/bin/codex-acp",
                          "node_modules/@zed-industries/codex-acp-darwin-*/bin/codex-acp"),
            exits_on_eof=False,
            # Codex's warnings come as message text: "Model metadata for `x` not found. Defaulting to fallback ..."
            warning_chunks=re.compile(r"Model metadata for `[^`\n]*` not found\. [^\n]*"),
            launch=_codex_launch,
            handles=frozenset({"model"}),
            approval_kinds=_ASKS_BEFORE_FILE_CHANGES,
            # No project_config: Codex itself loads a project's .codex/config.toml only where the user's own
            # config.toml trusts the project (its `projects` table), and no flag of 0.16.0 narrows that.
        ),
        AgentProfile(
            name="gemini",
            genai_provider="gcp.gemini",
            title="Gemini CLI",
            cli="gemini",
            args=("--acp",),
            package="@google/gemini-cli",
            tested_version="0.61.0",
            min_version="0.61.0",
            # Not `session`: 0.61.0's session/load rewrites a session file created in the same minute (its name
            # is the minute and the id) before reading it: a resume within that minute finds no history
            # (docs/gemini.md).
            capabilities=BASE_CAPABILITIES | {Capability.MCP_HTTP, Capability.MCP_SSE, Capability.IMAGE_INPUT},
            mcp_object_results=True,  # 0.61.0 parses a text result as JSON and refuses `5` (docs/tools.md)
            description="Google's Gemini CLI over ACP (`gemini --acp`): approvals, plan mode for read-only, "
            "live sessions.",
            offline="harness_acp.offline_gemini:offline_setup",
            # default asks before edits and most commands; plan is its read-only mode; yolo asks nothing.
            modes=_modes("plan", "default", "default", full_never="yolo"),
            fix_env=_no_relaunch("GEMINI_CLI_NO_RELAUNCH"),
            reports_exit_codes=False,
            reports_command_output=False,
            launch=_model_flag,
            handles=frozenset({"model"}),
            project_config=(".gemini/settings.json", ".gemini/commands", ".gemini/extensions", ".env", ".gemini/.env"),
            untrusted_env=gemini_untrusted_env,
            mcp_needs_trust=True,
            approval_kinds=_ASKS_BEFORE_FILE_CHANGES,
            untrusted_modes={("danger-full-access", "never"): "default"},
        ),
        AgentProfile(
            name="claude-acp",
            genai_provider="anthropic",
            title="Claude Code (ACP adapter)",
            cli="claude-agent-acp",
            args=(),
            package="@zed-industries/claude-agent-acp",
            tested_version="0.23.1",
            min_version="0.23.1",
            capabilities=BASE_CAPABILITIES | {Capability.SESSION, Capability.COST, Capability.MCP_HTTP,
                                              Capability.MCP_SSE, Capability.IMAGE_INPUT},
            description="Claude Code through Zed's ACP adapter (the Claude Agent SDK): approvals, plan mode for "
            "read-only, cost, load sessions.",
            offline="harness_acp.offline_adapters:claude_acp_offline_setup",
            # default asks before edits (not before Bash); bypassPermissions asks nothing; read-only is the tools
            # offered (`_claude_meta`), fixed for the session.
            modes=_modes("default", "default", "default", full_never="bypassPermissions"),
            exits_on_eof=False,
            fix_env=_is_sandbox_one,
            reports_exit_codes=False,
            session_meta=_claude_meta,
            tool_filters=frozenset({*CLAUDE_KIND_TOOLS, "mcp:*"}),  # so no approval_kinds: all native
            set_model_first=True,
            handles=frozenset({"system_prompt"}),
            session_overrides=frozenset({"approval", "model"}),
            project_config=(".claude/settings.json", ".claude/settings.local.json", ".mcp.json", ".claude/commands"),
        ),
        AgentProfile(
            name="qwen",
            title="Qwen Code",
            cli="qwen",
            args=("--acp",),
            package="@qwen-code/qwen-code",
            tested_version="0.24.4",
            min_version="0.24.4",
            capabilities=BASE_CAPABILITIES | {Capability.SESSION, Capability.MCP_HTTP, Capability.MCP_SSE,
                                              Capability.IMAGE_INPUT},
            description="Qwen Code over ACP (`qwen --acp`): approvals, plan mode for read-only, load sessions.",
            offline="harness_acp.offline_qwen:offline_setup",
            # default asks before edits and most commands; plan is read-only; yolo asks nothing.
            modes=_modes("plan", "default", "default", full_never="yolo"),
            fix_env=_no_relaunch("QWEN_CODE_NO_RELAUNCH"),
            entry=_qwen_entry,
            launch=_qwen_launch,
            handles=frozenset({"model", "system_prompt"}),
            session_overrides=frozenset({"approval", "sandbox"}),
            project_config=(".qwen/settings.json", ".qwen/commands", ".qwen/extensions", ".env", ".qwen/.env"),
            untrusted_env=qwen_untrusted_env,
            mcp_needs_trust=True,
            approval_kinds=_ASKS_BEFORE_FILE_CHANGES,
            untrusted_modes={("danger-full-access", "never"): "default"},
        ),
    )
}
