"""The `claude -p` command line and environment for a spec, and the command line fit for a log line.

Layer: provider (claude), pure. Knows Claude Code 2.1.328's flags and environment variables, `AgentRunSpec` and
`ClaudeOptions` (the permission flags come from `permissions`); knows nothing of processes, the wire or events.
Whether we run as root and the base environment are passed in. The command line: providers/claude/README.md.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace

from harness_core import AgentRunSpec, ApprovalPolicy, InvalidSpecError, SandboxMode, SessionSpec
from harness_core.provider import redact_argv

from harness_claude.options import ClaudeOptions
from harness_claude.permissions import READ_ONLY_TOOLS, plan_permissions
from harness_claude.toolconfig import tool_config

__all__ = ["BASE_ARGS", "EFFORTS", "PROJECT_CONFIG", "SECRET_FLAGS", "UNTRUSTED_SOURCES", "build_argv", "build_env",
           "redacted_argv"]

EFFORTS = ("low", "medium", "high", "xhigh", "max")
"""`--effort` values of 2.1.328 (it warns about any other value and uses its default: refused here instead)."""

BASE_ARGS = (
    "-p",
    "--output-format",
    "stream-json",
    "--verbose",
    "--include-partial-messages",
    "--input-format",
    "stream-json",
)

PROJECT_CONFIG = (".claude/settings.json", ".claude/settings.local.json", ".mcp.json", ".claude/commands")
"""What Claude Code 2.1.328 loads from a project that can run programs: hooks (settings), MCP servers (`.mcp.json`,
started even without `enableAllProjectMcpServers` under `-p`), custom commands. `--setting-sources user` skips all
four (checked with the real CLI: `tests/test_claude_project_trust_real.py`)."""

UNTRUSTED_SOURCES = "user"
"""`--setting-sources` of a run whose project is not trusted (`spec.trust_project` False), unless the options choose
their own (`setting_sources`, `bare`): the user's settings only, none of the project's."""

SECRET_FLAGS = frozenset({"--settings", "--system-prompt", "--append-system-prompt", "--mcp-config"})
"""Flags whose value may hold secrets or private text (settings JSON with keys, prompts): never logged. (`-c` is
`--continue` in Claude Code and takes no value.)"""


def build_argv(
    binary: str, spec: AgentRunSpec | SessionSpec, opts: ClaudeOptions, *, is_root: bool, live: bool = False,
    mcp_config_file: str | None = None,
) -> list[str]:
    """The command line of one turn of `spec`, or of a live session's process (its shape: providers/claude/README.md,
    "Command line"). `mcp_config_file`: the private file holding `tool_config(spec).mcp_config`, needed when the
    run has MCP servers (`mcpfile.mcp_config_file`).

    Raises:
        InvalidSpecError: `spec.effort` is not one of `EFFORTS`.
        ValueError: the run has MCP servers and no `mcp_config_file`.
    """
    read_only = READ_ONLY_TOOLS if spec.sandbox is SandboxMode.READ_ONLY else None
    tools = tool_config(spec, keep_user_servers=opts.keep_user_mcp_servers, read_only_tools=read_only)
    consent = tools.servers if spec.approval is ApprovalPolicy.NEVER and not live else ()  # a live process asks:
    # each turn's plan answers for its own policy (`permissions.auto_answer`)
    plan = plan_permissions(
        spec.sandbox,
        spec.approval,
        is_root=is_root,
        mode_override=opts.permission_mode,
        allowed=(*opts.allowed_tools, *tools.allowed, *consent),
        disallowed=(*opts.disallowed_tools, *tools.disallowed),
        live=live,
    )
    if tools.tools is not None:
        plan = replace(plan, tools=tools.tools)
    argv = [binary, *BASE_ARGS]
    if tools.mcp_config is not None:
        if mcp_config_file is None:
            raise ValueError("the run has MCP servers: write tool_config(spec).mcp_config to a private file "
                             "(mcpfile.mcp_config_file) and pass its path")
        argv += ["--mcp-config", mcp_config_file]
    argv += tools.argv
    if opts.bare:
        argv.append("--bare")
    if opts.setting_sources is not None:
        argv += ["--setting-sources", opts.setting_sources]
    elif not spec.trust_project and not opts.bare:
        argv += ["--setting-sources", UNTRUSTED_SOURCES]
    if spec.model:
        argv += ["--model", spec.model]
    if spec.system_prompt:
        flag = "--system-prompt" if opts.replace_system_prompt else "--append-system-prompt"
        argv += [flag, spec.system_prompt]
    if spec.resume_session:
        argv += ["--resume", spec.resume_session]
    if spec.effort is not None:
        if spec.effort not in EFFORTS:
            raise InvalidSpecError(f"Claude Code takes effort {', '.join(EFFORTS)}, not {spec.effort!r}")
        argv += ["--effort", spec.effort]
    if spec.output_schema is not None:
        argv += ["--json-schema", json.dumps(spec.output_schema, separators=(",", ":"))]
    max_turns = spec.max_turns if spec.max_turns is not None else opts.max_turns
    if max_turns is not None:
        argv += ["--max-turns", str(max_turns)]
    if spec.max_cost_usd is not None:
        argv += ["--max-budget-usd", repr(spec.max_cost_usd)]
    return [*argv, *plan.argv(), *opts.extra_args]


def redacted_argv(argv: list[str], known: tuple[str, ...] = ()) -> list[str]:
    """`argv` for a log line: the value after each flag in `SECRET_FLAGS` (or of `--flag=value`) redacted, the
    rest scrubbed of credential shapes and of the `known` secrets (the core's `redact_argv`)."""
    return redact_argv(argv, SECRET_FLAGS, known)


def build_env(
    spec: AgentRunSpec | SessionSpec,
    opts: ClaudeOptions,
    *,
    is_root: bool,
    base: Mapping[str, str],
    live: bool = False,
) -> dict[str, str]:
    """The child's environment: `base`, our defaults, `spec.env` (the caller's values beat our defaults, e.g.
    their own CLAUDE_BYTE_STREAM_IDLE_TIMEOUT_MS), options the caller set explicitly, and what the permission
    plan needs (IS_SANDBOX). No MCP server's secret: those are in the `--mcp-config` file only."""
    plan = plan_permissions(
        spec.sandbox, spec.approval, is_root=is_root, mode_override=opts.permission_mode, live=live
    )
    idle = {"CLAUDE_BYTE_STREAM_IDLE_TIMEOUT_MS": str(opts.stream_idle_timeout_ms)}
    explicit = idle if "stream_idle_timeout_ms" in opts.model_fields_set else {}
    if opts.max_retries is not None:
        explicit = {**explicit, "CLAUDE_CODE_MAX_RETRIES": str(opts.max_retries)}
    return {**base, **idle, **spec.env, **explicit, **plan.env}
