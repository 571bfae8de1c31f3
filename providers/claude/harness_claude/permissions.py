"""Sandbox and approval → Claude Code permission mode, prompt tool and tool allow/deny lists.

Layer: provider (pure policy). Knows Claude Code's permission flags and tool names; knows nothing of
processes or the stream-json protocol. No I/O: whether we run as root is passed in.

sandbox              approval never                         approval on-request             approval untrusted
read-only            default, deny writers + Bash           default + prompt, deny writers + Bash (both)
workspace-write      acceptEdits, allow Bash                acceptEdits + prompt            default + prompt
danger-full-access   bypassPermissions (IS_SANDBOX=1 root)  default + prompt                default + prompt

"writers" = Write, Edit, MultiEdit, NotebookEdit. "prompt" = `--permission-prompt-tool stdio`: every
permission question becomes a `can_use_tool` control request. Without a prompt tool, `claude -p` denies
anything it would have asked about (a `permission_denied` line), so approval `never` can never hang.
Bash is denied outright in read-only: a shell cannot be limited to reading.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from harness_core.spec import ApprovalPolicy, SandboxMode

__all__ = ["WRITE_TOOLS", "PermissionPlan", "plan_permissions"]

WRITE_TOOLS = ("Write", "Edit", "MultiEdit", "NotebookEdit")


@dataclass(frozen=True)
class PermissionPlan:
    mode: str
    prompt_tool: bool
    allowed: tuple[str, ...] = ()
    disallowed: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)

    def argv(self) -> list[str]:
        args = ["--permission-mode", self.mode]
        if self.prompt_tool:
            args += ["--permission-prompt-tool", "stdio"]
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
) -> PermissionPlan:
    """The permission flags for a run (see the module table)."""
    ask = approval is not ApprovalPolicy.NEVER
    extra_allowed: tuple[str, ...] = ()
    extra_denied: tuple[str, ...] = ()
    if sandbox is SandboxMode.READ_ONLY:
        mode = "default"
        extra_denied = (*WRITE_TOOLS, "Bash")
    elif sandbox is SandboxMode.WORKSPACE_WRITE:
        if not ask:
            mode, extra_allowed = "acceptEdits", ("Bash",)
        else:
            mode = "acceptEdits" if approval is ApprovalPolicy.ON_REQUEST else "default"
    else:
        mode = "default" if ask else "bypassPermissions"
    if mode_override:
        mode = mode_override
    env = {"IS_SANDBOX": "1"} if mode == "bypassPermissions" and is_root else {}
    denied = tuple(dict.fromkeys((*extra_denied, *disallowed)))
    allow = tuple(t for t in dict.fromkeys((*extra_allowed, *allowed)) if t not in denied)
    return PermissionPlan(mode=mode, prompt_tool=ask, allowed=allow, disallowed=denied, env=env)
