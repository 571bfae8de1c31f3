"""An in-process provider that plays a `Scenario` with no child process: for tests of the core and of
operations built on Harness (deterministic, instant, no CLI needed).

Layer: testing. Uses only the public façades (`harness_core`, `harness_core.provider`, `harness_core.offline`), as
a third party would. What it simulates and how to register it: docs/testing.md.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, ClassVar

import anyio
from pydantic import field_validator

from harness_core import (
    AgentRunSpec,
    ApprovalDecision,
    ApprovalPolicy,
    ApprovalRequested,
    AuthFailedError,
    ContextUsage,
    FileChange,
    HarnessResult,
    HarnessToolDetails,
    ModelError,
    Notice,
    RateLimitedError,
    ReasoningDelta,
    RunStatus,
    SandboxMode,
    SessionNotFoundError,
    SessionSpec,
    SessionStarted,
    TextDelta,
    ToolKind,
    ToolResult,
    ToolStatus,
    ToolUse,
    Usage,
)
from harness_core.provider import (
    Capability,
    Provider,
    ProviderInfo,
    ProviderOptions,
    ProviderSession,
    RunContext,
    SessionContext,
    hookimpl,
)
from harness_core.scripted.inline import ScenarioSyntaxError, scenario_from_json
from harness_core.scripted.scenarios import (
    TOOL_RESULT,
    CallMcpTool,
    EditFile,
    Fail,
    ReadFile,
    ReportAttachments,
    RunCommand,
    Say,
    Scenario,
    Stall,
    Step,
    TakeLong,
    Think,
    WriteFile,
    apply_file_step,
    command_sleep,
)

__all__ = ["ScriptedOptions", "ScriptedProvider", "harness_register_providers", "tool_details"]


_PYTHON_TOOLS = "harness"
"""The MCP server Harness serves a run's Python tools from (`tools=`): the one an `mcp` step calls for real."""


class ScriptedOptions(ProviderOptions):
    scenario: str | dict[str, Any] = "say"
    """Name of a scenario in `harness_core.scripted.scenarios.SCENARIOS`, or one written inline
    (`harness_core.scripted.inline`)."""

    @field_validator("scenario", mode="before")
    @classmethod
    def _inline_text(cls, value: Any) -> Any:
        """On the command line an inline scenario is JSON text (`-o 'scenario={"steps": [...]}'`): parse it."""
        if isinstance(value, str) and value.lstrip().startswith("{"):
            try:
                return json.loads(value)
            except ValueError as exc:
                raise ValueError(f"the inline scenario is not JSON: {exc}") from None
        return value
    crash: bool = False
    """Raise an unexpected exception mid-run (to test the runner's safety net)."""
    ignore_interrupt: bool = False
    """Pretend to be a provider that cannot stop cleanly (the runner must stop it hard)."""
    state_dir: str | None = None
    """The agent's "home": sessions are remembered there, and resuming one it does not hold fails with
    `session_not_found` (as a real agent's would). Without it, any session id is accepted."""
    cost_usd: float | None = None
    """What each run reports it cost (none by default), for budget tests."""


def tool_details(step: Step, status: ToolStatus = ToolStatus.STARTED) -> tuple[str, HarnessToolDetails]:
    """The tool name and display a well-behaved provider would give for a scenario tool step."""
    if isinstance(step, RunCommand):
        return "shell", HarnessToolDetails(kind=ToolKind.SHELL, title="Running command", command=step.command,
                                           status=status)
    if isinstance(step, ReadFile):
        return "read", HarnessToolDetails(kind=ToolKind.READ, title="Reading file", path=step.path, status=status)
    if isinstance(step, WriteFile):
        added = "".join(f"+{line}\n" for line in step.content.splitlines())
        change = FileChange(path=step.path, kind="add", diff=f"--- /dev/null\n+++ b/{step.path}\n@@ @@\n{added}")
        return "write", HarnessToolDetails(kind=ToolKind.WRITE, title="Writing file", path=step.path,
                                           status=status, changes=(change,))
    if isinstance(step, EditFile):
        hunk = "".join(f"-{line}\n" for line in step.old.splitlines()) + "".join(
            f"+{line}\n" for line in step.new.splitlines())
        change = FileChange(path=step.path, kind="modify", diff=f"--- a/{step.path}\n+++ b/{step.path}\n@@ @@\n{hunk}")
        return "edit", HarnessToolDetails(kind=ToolKind.EDIT, title="Editing file", path=step.path, status=status,
                                          changes=(change,))
    if isinstance(step, CallMcpTool):
        return f"mcp__{step.server}__{step.tool}", HarnessToolDetails(
            kind=ToolKind.MCP, title=step.tool, status=status, raw={"server": step.server, "tool": step.tool,
                                                                     "arguments": dict(step.args)})
    raise TypeError(f"not a tool step: {step!r}")


class ScriptedProvider(Provider[ScriptedOptions]):
    info: ClassVar[ProviderInfo] = ProviderInfo(
        name="scripted",
        version="1.0",
        capabilities=frozenset(Capability),
        description="In-process scenario player for tests (no CLI); its `mcp` steps call Python tools.",
        tool_filters=frozenset({"mcp", "mcp:*", "web"}),
        tool_allow_lists=False,  # its shell, edit, write steps cannot be turned off
        approval_kinds=frozenset({"shell", "edit", "write", "read"}),
    )

    @asynccontextmanager
    async def open_session(self, spec: SessionSpec, options: ScriptedOptions,
                           ctx: SessionContext) -> AsyncIterator[ProviderSession]:
        """A live session with no process: each turn plays the scenario in the same session; a steer is echoed
        as an info `notice` (code `steered`) so tests can see it arrive."""
        yield _ScriptedSession(self, options, spec.resume_session)

    async def run(self, spec: AgentRunSpec, options: ScriptedOptions, ctx: RunContext) -> HarnessResult:
        try:
            scenario = scenario_from_json(options.scenario)
        except ScenarioSyntaxError as exc:
            raise ModelError(str(exc)) from None
        session = spec.resume_session or f"scripted-{ctx.run_id}"
        if options.state_dir is not None:
            _remember(Path(options.state_dir), session, spec.prompt, resumed=spec.resume_session is not None)
        await ctx.emit(SessionStarted(session_id=session, resumed=spec.resume_session is not None))
        with anyio.CancelScope() as scope:
            if not options.ignore_interrupt:
                async with anyio.create_task_group() as tg:
                    tg.start_soon(_cancel_on_interrupt, ctx, scope)
                    result = await self._play(scenario, spec, options, ctx, session)
                    tg.cancel_scope.cancel()
                    return result
            return await self._play(scenario, spec, options, ctx, session)
        return HarnessResult(status=RunStatus.INTERRUPTED, session_id=session)

    async def _play(self, scenario: Scenario, spec: AgentRunSpec, options: ScriptedOptions, ctx: RunContext,
                    session: str) -> HarnessResult:
        final_text = ""
        usage = Usage(input_tokens=100, output_tokens=20, cost_usd=options.cost_usd)
        results: list[str] = []  # the tool outputs the "model" saw, for `{tool_result}`
        for index, step in enumerate(scenario.steps):
            if options.crash and index == len(scenario.steps) - 1:
                raise RuntimeError("scripted crash")
            if isinstance(step, ReportAttachments):
                step = Say(_attachment_report(spec), chunks=step.chunks)
            if isinstance(step, Say) and TOOL_RESULT in step.text:
                step = Say(step.text.replace(TOOL_RESULT, results[-1] if results else "(no tool result)"),
                           step.chunks, step.delay)
            if isinstance(step, Say):
                size = max(1, -(-len(step.text) // max(1, step.chunks)))
                for start in range(0, len(step.text), size):
                    if step.delay:
                        await anyio.sleep(step.delay)
                    await ctx.emit(TextDelta(text=step.text[start:start + size]))
                final_text = step.text
            elif isinstance(step, Think):
                await ctx.emit(ReasoningDelta(text=step.text))
            elif isinstance(step, CallMcpTool):
                results.append(await self._mcp(step, index, spec, ctx))
            elif isinstance(step, (RunCommand, ReadFile, WriteFile, EditFile)):
                outcome = await self._tool(step, index, spec, ctx)
                if outcome is ApprovalDecision.ABORT:
                    return HarnessResult(status=RunStatus.INTERRUPTED, session_id=session, final_text=final_text)
            elif isinstance(step, Fail):
                raise _classified(step)
            elif isinstance(step, (Stall, TakeLong)):
                await anyio.sleep(step.seconds)
        await ctx.emit(ContextUsage(usage=usage, context_window=200_000))
        return HarnessResult(status=RunStatus.SUCCESS, final_text=final_text, session_id=session, usage=usage)

    async def _tool(self, step: RunCommand | ReadFile | WriteFile | EditFile, index: int, spec: AgentRunSpec,
                    ctx: RunContext) -> ApprovalDecision:
        name, display = tool_details(step)
        tool_id = f"call_{index}"
        await ctx.emit(ToolUse(tool_id=tool_id, name=name, display=display))
        asks = spec.approval is ApprovalPolicy.UNTRUSTED or (
            spec.approval is ApprovalPolicy.ON_REQUEST and not isinstance(step, ReadFile)
        )
        decision = ApprovalDecision.APPROVE
        if asks:
            decision = await ctx.request_approval(
                ApprovalRequested(request_id=f"approval_{index}", tool_id=tool_id, display=display)
            )
        if decision is not ApprovalDecision.APPROVE:
            done = display.model_copy(update={"status": ToolStatus.DECLINED})
            await ctx.emit(ToolResult(tool_id=tool_id, name=name, display=done, is_error=True))
            return decision
        if isinstance(step, RunCommand) and command_sleep(step.command):
            await anyio.sleep(command_sleep(step.command))  # simulate a long-running command
        output = step.output if isinstance(step, RunCommand) else _apply(step, spec)
        failed = isinstance(step, RunCommand) and step.exit_code != 0
        done = display.model_copy(update={
            "status": ToolStatus.FAILED if failed else ToolStatus.COMPLETED,
            "exit_code": step.exit_code if isinstance(step, RunCommand) else None,
            "duration_ms": 1,
            "summary": output[:200] or None,
        })
        await ctx.emit(ToolResult(tool_id=tool_id, name=name, display=done, output=output, is_error=failed))
        return decision


    async def _mcp(self, step: CallMcpTool, index: int, spec: AgentRunSpec, ctx: RunContext) -> str:
        """An MCP tool call as an agent makes it: refused when the spec has no such server or filters it out (its
        `tool_filters` are native); a call of the run's Python tools (the server `harness` Harness serves) is made
        for real, through the official `mcp` client; any other server's is the step's `output` (the scripted
        provider starts no program of its own)."""
        name, display = tool_details(step)
        tool_id = f"call_{index}"
        await ctx.emit(ToolUse(tool_id=tool_id, name=name, display=display, input=dict(step.args)))
        servers = {server.name for server in spec.mcp_servers}
        names = ("mcp", f"mcp:{step.server}", f"mcp:{step.server}.{step.tool}")
        if step.server not in servers:
            error = f"no MCP server {step.server!r} (the run has: {', '.join(sorted(servers)) or 'none'})"
        elif any(n in spec.disallowed_tools for n in names) or (
                spec.allowed_tools is not None and not any(n in spec.allowed_tools for n in names)):
            error = f"tool {name} is not allowed"
        else:
            error = None
        output = error or step.output
        if error is None and step.server == _PYTHON_TOOLS:
            server = next(s for s in spec.mcp_servers if s.name == step.server)
            from harness_core.testing.mcp_client import McpCallFailed, call_mcp_tool  # the mcp SDK: see LAZY_ALLOWED

            try:
                output, failed = await call_mcp_tool(server, step.tool, step.args, cwd=str(spec.cwd))
            except McpCallFailed as exc:
                output, failed = str(exc), True
            if failed:
                error = output
        done = display.model_copy(update={"status": ToolStatus.FAILED if error else ToolStatus.COMPLETED,
                                          "duration_ms": 1, "summary": output[:200] or None})
        await ctx.emit(ToolResult(tool_id=tool_id, name=name, display=done, output=output, is_error=error is not None))
        return output


def _attachment_report(spec: AgentRunSpec) -> str:
    """What a model API would see of the spec's attachments (`ReportAttachments`): type and size of each."""
    lines = [f"{a.mime_type} {len(a.read())} bytes" for a in spec.attachments]
    return "\n".join(lines) if lines else "no attachments"


class _ScriptedSession(ProviderSession):
    def __init__(self, provider: ScriptedProvider, options: ScriptedOptions, session: str | None) -> None:
        self._provider = provider
        self._options = options
        self._session = session

    async def turn(self, spec: AgentRunSpec, ctx: RunContext) -> HarnessResult:
        if self._session is not None:
            spec = spec.model_copy(update={"resume_session": self._session})
        result = await self._provider.run(spec, self._options, ctx)
        self._session = result.session_id or self._session
        return result

    async def steer(self, text: str, ctx: RunContext) -> bool:
        await ctx.emit(Notice(level="info", code="steered", message=text))
        return True


def _apply(step: ReadFile | WriteFile | EditFile, spec: AgentRunSpec) -> str:
    """File steps really happen, inside the run's cwd only (so approvals and sandboxes can be checked)."""
    try:
        return apply_file_step(step, spec.cwd, read_only=spec.sandbox is SandboxMode.READ_ONLY)
    except ValueError as exc:
        raise ModelError(str(exc)) from None


def _remember(state_dir: Path, session: str, prompt: str, *, resumed: bool) -> None:
    """Add `prompt` to the session's transcript in `state_dir` (a resumed session must be there already).

    Raises:
        SessionNotFoundError: a resumed session this directory does not hold.
    """
    sessions = state_dir / "scripted-sessions"
    transcript = sessions / f"{session}.txt"
    if resumed and (not re.fullmatch(r"[\w.-]+", session) or not transcript.is_file()):
        raise SessionNotFoundError(session, f"no such session in {sessions}")
    sessions.mkdir(parents=True, exist_ok=True)
    with transcript.open("a") as out:
        out.write(prompt + "\n")


def _classified(step: Fail) -> Exception:
    if step.status in (401, 403):
        return AuthFailedError(f"the model API refused the credentials (HTTP {step.status}: {step.message}); "
                               "check the API key", status=step.status)
    if step.status == 429:
        return RateLimitedError(f"rate limited (HTTP 429: {step.message}); retry later", status=429)
    error = ModelError(f"the model API failed (HTTP {step.status}: {step.message})", status=step.status)
    error.retryable = step.status >= 500  # as a real provider's classification says
    return error


async def _cancel_on_interrupt(ctx: RunContext, scope: anyio.CancelScope) -> None:
    await ctx.interrupt_requested.wait()
    scope.cancel()


@hookimpl
def harness_register_providers(register: Callable[[type[Provider[Any]]], None]) -> None:
    register(ScriptedProvider)
