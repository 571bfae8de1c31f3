"""Sandbox and approval → Claude Code permission mode, prompt tool and tool allow/deny lists.

Layer: provider (pure policy). Knows Claude Code's permission flags and tool names; knows nothing of processes or
the stream-json protocol. No I/O: whether we run as root is passed in. The table, the read-only allow-list and
a live session's plan: providers/claude/README.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from harness_core import ApprovalPolicy, SandboxMode

__all__ = ["READ_ONLY_TOOLS", "WRITE_TOOLS", "PermissionPlan", "auto_answer", "plan_permissions"]

WRITE_TOOLS = ("Write", "Edit", "MultiEdit", "NotebookEdit")

READ_ONLY_TOOLS = (
    "Read",  # reads a file (or image/PDF); writes nothing
    "Grep",  # ripgrep over files, read only
    "Glob",  # lists paths matching a pattern
    "WebFetch",  # HTTP GET of a URL into the context; no local effect
    "WebSearch",  # a search query; no local effect
    "ToolSearch",  # loads the schemas of deferred tools (WebFetch/WebSearch are deferred in 2.1.328); runs
    # nothing itself and cannot reach a built-in tool that --tools left out
    "TaskCreate",  # the session's own task (todo) list, kept in Claude Code's state dir, never the workspace;
    "TaskGet",  # the equivalent of Codex's update_plan, which Codex allows in read-only
    "TaskList",
    "TaskUpdate",
)
"""Built-in tools offered under `read-only`. Left out on purpose (2.1.328): Bash and Monitor (run commands),
Write Edit NotebookEdit (write), EnterWorktree ExitWorktree (create/remove git worktrees), CronCreate
CronDelete CronList ScheduleWakeup (schedule later prompts, which then run with tools), Task SendMessage
ListAgents Workflow (start or drive other agents), Skill (skills may run scripts), TaskStop (kills background
tasks), ReportFindings (undocumented for `-p`; unreviewed). A tool added by a later release stays out until it is
reviewed and listed here."""


@dataclass(frozen=True)
class PermissionPlan:
    mode: str
    prompt_tool: bool
    tools: tuple[str, ...] | None = None
    """`--tools`: the only built-in tools that exist (None: Claude Code's default set)."""
    allowed: tuple[str, ...] = ()
    disallowed: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    asks: bool = True
    """The operation is asked (approval is not `never`); a live session's turn answers itself when False."""
    auto_allowed: tuple[str, ...] = ()
    """What a turn that asks nobody allows (the one-shot plan's `--allowedTools`)."""
    bypass_later: bool = False
    """A live session that may switch to bypassPermissions: launch with `--allow-dangerously-skip-permissions`."""

    def argv(self) -> list[str]:
        args = ["--permission-mode", self.mode]
        if self.bypass_later:
            args.append("--allow-dangerously-skip-permissions")
        if self.prompt_tool:
            args += ["--permission-prompt-tool", "stdio"]
        else:
            args += ["--permission-prompts", "none"]
        if self.tools is not None:
            args += ["--tools", ",".join(self.tools)]
        if self.allowed:
            args += ["--allowedTools", ",".join(self.allowed)]
        if self.disallowed:
            args += ["--disallowedTools", ",".join(self.disallowed)]
        return args


def plan_permissions(
    sandbox: SandboxMode,
    approval: ApprovalPolicy,
    *,
    is_root: bool,
    mode_override: str | None = None,
    allowed: tuple[str, ...] = (),
    disallowed: tuple[str, ...] = (),
    live: bool = False,
) -> PermissionPlan:
    """The permission flags for a run, or for a live session's process and turns (`live`; see the module
    docstring)."""
    ask = approval is not ApprovalPolicy.NEVER
    extra_allowed: tuple[str, ...] = ()
    tools: tuple[str, ...] | None = None
    if sandbox is SandboxMode.READ_ONLY:
        mode, tools = "default", READ_ONLY_TOOLS
    elif sandbox is SandboxMode.WORKSPACE_WRITE:
        if not ask:
            mode, extra_allowed = "acceptEdits", ("Bash",)
        else:
            mode = "acceptEdits" if approval is ApprovalPolicy.ON_REQUEST else "default"
    else:
        mode = "default" if ask else "bypassPermissions"
    if mode_override:
        mode = mode_override
    bypass_later = live and sandbox is SandboxMode.DANGER_FULL_ACCESS and mode_override is None
    bypass = mode == "bypassPermissions" or bypass_later
    env = {"IS_SANDBOX": "1"} if bypass and is_root else {}
    denied = tuple(dict.fromkeys(disallowed))
    allow = tuple(t for t in dict.fromkeys((*extra_allowed, *allowed)) if t not in denied)
    process_allow = tuple(t for t in dict.fromkeys(allowed) if t not in denied) if live else allow
    return PermissionPlan(mode=mode, prompt_tool=ask or live, tools=tools, allowed=process_allow, disallowed=denied,
                          env=env, asks=ask, auto_allowed=allow, bypass_later=bypass_later)


def auto_answer(plan: PermissionPlan, tool_name: str) -> bool:
    """In a live session's turn that asks nobody (`plan.asks` False): allow `tool_name` (True) or deny it, as
    the one-shot run's `--permission-prompts none` would. What still asks under bypassPermissions
    (AskUserQuestion, ExitPlanMode) is denied. A tool-name match stands in for the one-shot plan's
    `--allowedTools Bash` rules: the name allows whatever call Claude Code asks about, while a rule could be
    narrower (`Bash(git:*)`) — a remaining gap between a live `never` turn and a one-shot one. An `mcp__SERVER`
    rule allows each of that server's tools (`mcp__SERVER__TOOL`), as Claude Code's own rule does."""
    if tool_name in plan.auto_allowed:
        return True
    return tool_name.startswith("mcp__") and any(
        rule.startswith("mcp__") and tool_name.startswith(rule + "__") for rule in plan.auto_allowed)
