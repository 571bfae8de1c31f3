"""The permission plan: sandbox and approval → Claude Code flags (pure; the real CLI check is in
test_real_cli.py::test_read_only_offers_only_the_allow_list)."""

from __future__ import annotations

import pytest
from harness_core import ApprovalPolicy, SandboxMode

from harness_claude.permissions import READ_ONLY_TOOLS, auto_answer, plan_permissions

# system/init.tools of 2.1.328 (default permission mode): everything that runs commands, writes, schedules
# or drives other agents must stay out of the read-only set
RUNS_OR_WRITES = (
    "Task", "Bash", "CronCreate", "CronDelete", "CronList", "Edit", "EnterWorktree", "ExitWorktree",
    "ListAgents", "Monitor", "NotebookEdit", "ReportFindings", "ScheduleWakeup", "SendMessage", "Skill",
    "TaskStop", "Workflow", "Write", "MultiEdit",
)  # fmt: skip


def _tools_flag(argv: list[str]) -> list[str] | None:
    return argv[argv.index("--tools") + 1].split(",") if "--tools" in argv else None


@pytest.mark.parametrize("approval", list(ApprovalPolicy))
def test_read_only_is_an_allow_list(approval: ApprovalPolicy) -> None:
    argv = plan_permissions(SandboxMode.READ_ONLY, approval, is_root=False).argv()
    tools = _tools_flag(argv)
    assert tools is not None, f"read-only must pass --tools (an allow-list): {argv}"
    assert tools == list(READ_ONLY_TOOLS)
    assert not set(tools) & set(RUNS_OR_WRITES)


def test_user_lists_do_not_widen_read_only() -> None:
    plan = plan_permissions(SandboxMode.READ_ONLY, ApprovalPolicy.NEVER, is_root=False, allowed=("Bash",))
    assert _tools_flag(plan.argv()) == list(READ_ONLY_TOOLS)


@pytest.mark.parametrize("sandbox", [SandboxMode.WORKSPACE_WRITE, SandboxMode.DANGER_FULL_ACCESS])
def test_other_sandboxes_keep_the_default_tool_set(sandbox: SandboxMode) -> None:
    assert _tools_flag(plan_permissions(sandbox, ApprovalPolicy.NEVER, is_root=False).argv()) is None


@pytest.mark.parametrize("sandbox", list(SandboxMode))
def test_approval_never_means_nobody_answers_prompts(sandbox: SandboxMode) -> None:
    argv = plan_permissions(sandbox, ApprovalPolicy.NEVER, is_root=False).argv()
    assert argv[argv.index("--permission-prompts") + 1] == "none"
    assert "--permission-prompt-tool" not in argv


@pytest.mark.parametrize("approval", [ApprovalPolicy.ON_REQUEST, ApprovalPolicy.UNTRUSTED])
def test_approval_asks_through_the_prompt_tool(approval: ApprovalPolicy) -> None:
    argv = plan_permissions(SandboxMode.WORKSPACE_WRITE, approval, is_root=False).argv()
    assert "--permission-prompts" not in argv and argv[argv.index("--permission-prompt-tool") + 1] == "stdio"


def test_a_live_never_turn_under_full_access_denies_what_still_asks() -> None:
    """bypassPermissions still asks for AskUserQuestion and ExitPlanMode; the one-shot run's `--permission-prompts
    none` denies them, so a live turn answering itself must too (not allow every request)."""
    live = plan_permissions(SandboxMode.DANGER_FULL_ACCESS, ApprovalPolicy.NEVER, is_root=False, live=True)
    assert live.mode == "bypassPermissions" and not live.asks
    assert not auto_answer(live, "AskUserQuestion") and not auto_answer(live, "ExitPlanMode")
    write = plan_permissions(SandboxMode.WORKSPACE_WRITE, ApprovalPolicy.NEVER, is_root=False, live=True)
    assert auto_answer(write, "Bash") and not auto_answer(write, "Write")
