"""Harness: run coding-agent CLIs behind one provider-neutral, typed event stream.

The façade for people who RUN agents: specs, events, results, errors and the run API. Everything is imported
lazily, so `import harness_core` (and the CLI's start-up) stays cheap. Provider authors also use
`harness_core.provider`; offline scenarios and scripted model APIs are in `harness_core.offline`.

    from harness_core import AgentRunSpec, run_sync
    result = run_sync(AgentRunSpec(prompt="fix the failing test", cwd="repo"))
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from harness_core._facade import missing_name

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    "AgentRunSpec": "harness_core.spec",
    "ApprovalPolicy": "harness_core.spec",
    "SandboxMode": "harness_core.spec",
    "SessionSpec": "harness_core.spec",
    "Attachment": "harness_core.attachment",
    "McpServer": "harness_core.mcp",
    "Capability": "harness_core.capabilities",
    "ProviderInfo": "harness_core.capabilities",
    "ApprovalDecision": "harness_core.events",
    "ApprovalRequested": "harness_core.events",
    "ApprovalResolved": "harness_core.events",
    "ContextUsage": "harness_core.events",
    "Done": "harness_core.events",
    "ErrorEvent": "harness_core.events",
    "Notice": "harness_core.events",
    "ErrorInfo": "harness_core.events",
    "CLI_WARNING": "harness_core.events",
    "FileChange": "harness_core.events",
    "FilesChanged": "harness_core.events",
    "EVENT_ADAPTER": "harness_core.events",
    "HarnessEvent": "harness_core.events",
    "HarnessResult": "harness_core.events",
    "HarnessToolDetails": "harness_core.events",
    "ProviderRaw": "harness_core.events",
    "ReasoningDelta": "harness_core.events",
    "RunStarted": "harness_core.events",
    "RunStatus": "harness_core.events",
    "SessionStarted": "harness_core.events",
    "SessionTurn": "harness_core.events",
    "TextDelta": "harness_core.events",
    "ToolKind": "harness_core.events",
    "ToolResult": "harness_core.events",
    "ToolStatus": "harness_core.events",
    "ToolSummary": "harness_core.events",
    "ToolUse": "harness_core.events",
    "Usage": "harness_core.events",
    "parse_event": "harness_core.events",
    "AuthFailedError": "harness_core.errors",
    "CliNotFoundError": "harness_core.errors",
    "CliVersionUnsupportedError": "harness_core.errors",
    "HarnessError": "harness_core.errors",
    "IdleTimeoutError": "harness_core.errors",
    "InterruptedRunError": "harness_core.errors",
    "InvalidSpecError": "harness_core.errors",
    "LogWriteFailedError": "harness_core.errors",
    "MessageTooLargeError": "harness_core.errors",
    "ModelError": "harness_core.errors",
    "ProcessExitedError": "harness_core.errors",
    "ProtocolError": "harness_core.errors",
    "ProviderCrashedError": "harness_core.errors",
    "ProviderNotFoundError": "harness_core.errors",
    "RateLimitedError": "harness_core.errors",
    "SessionNotFoundError": "harness_core.errors",
    "BudgetExceededError": "harness_core.errors",
    "SessionBusyError": "harness_core.errors",
    "SessionClosedError": "harness_core.errors",
    "StructuredOutputError": "harness_core.errors",
    "UndoRefusedError": "harness_core.errors",
    "SpawnFailedError": "harness_core.errors",
    "UnsupportedFeatureError": "harness_core.errors",
    "EXIT_FAILED": "harness_core.errors",
    "EXIT_INTERRUPTED": "harness_core.errors",
    "EXIT_OK": "harness_core.errors",
    "EXIT_UNAVAILABLE": "harness_core.errors",
    "EXIT_USAGE": "harness_core.errors",
    "exit_status_for_code": "harness_core.errors",
    "truncate": "harness_core.errors",
    "hookimpl": "harness_core.hookspecs",
    "Approver": "harness_core._run.approvals",
    "EventCallback": "harness_core._run.pipe",
    "LiveRun": "harness_core._run.live",
    "open_run": "harness_core._run.api",
    "run": "harness_core._run.api",
    "run_sync": "harness_core._run.api",
    "Session": "harness_core._run.session",
    "open_session": "harness_core._run.session",
    "WireLog": "harness_core._run.replay",
    "load_wire": "harness_core._run.replay",
    "open_replay": "harness_core._run.replay",
    "replay": "harness_core._run.replay",
    "UndoPlan": "harness_core._run.undo",
    "apply_undo": "harness_core._run.undo",
    "plan_undo": "harness_core._run.undo",
    "Tool": "harness_core.tools.tool",
    "tool": "harness_core.tools.tool",
    "load_tools": "harness_core.tools.loader",
    "ToolsLoadError": "harness_core.tools.loader",
}

__all__ = ["__version__", *_EXPORTS]

if TYPE_CHECKING:
    from harness_core._run.api import (
        open_run as open_run,
    )
    from harness_core._run.api import (
        run as run,
    )
    from harness_core._run.api import (
        run_sync as run_sync,
    )
    from harness_core._run.approvals import (
        Approver as Approver,
    )
    from harness_core._run.live import (
        LiveRun as LiveRun,
    )
    from harness_core._run.pipe import (
        EventCallback as EventCallback,
    )
    from harness_core._run.replay import (
        WireLog as WireLog,
    )
    from harness_core._run.replay import (
        load_wire as load_wire,
    )
    from harness_core._run.replay import (
        open_replay as open_replay,
    )
    from harness_core._run.replay import (
        replay as replay,
    )
    from harness_core._run.session import (
        Session as Session,
    )
    from harness_core._run.session import (
        open_session as open_session,
    )
    from harness_core._run.undo import (
        UndoPlan as UndoPlan,
    )
    from harness_core._run.undo import (
        apply_undo as apply_undo,
    )
    from harness_core._run.undo import (
        plan_undo as plan_undo,
    )
    from harness_core.attachment import (
        Attachment as Attachment,
    )
    from harness_core.capabilities import (
        Capability as Capability,
    )
    from harness_core.capabilities import (
        ProviderInfo as ProviderInfo,
    )
    from harness_core.errors import (
        EXIT_FAILED as EXIT_FAILED,
    )
    from harness_core.errors import (
        EXIT_INTERRUPTED as EXIT_INTERRUPTED,
    )
    from harness_core.errors import (
        EXIT_OK as EXIT_OK,
    )
    from harness_core.errors import (
        EXIT_UNAVAILABLE as EXIT_UNAVAILABLE,
    )
    from harness_core.errors import (
        EXIT_USAGE as EXIT_USAGE,
    )
    from harness_core.errors import (
        AuthFailedError as AuthFailedError,
    )
    from harness_core.errors import (
        BudgetExceededError as BudgetExceededError,
    )
    from harness_core.errors import (
        CliNotFoundError as CliNotFoundError,
    )
    from harness_core.errors import (
        CliVersionUnsupportedError as CliVersionUnsupportedError,
    )
    from harness_core.errors import (
        HarnessError as HarnessError,
    )
    from harness_core.errors import (
        IdleTimeoutError as IdleTimeoutError,
    )
    from harness_core.errors import (
        InterruptedRunError as InterruptedRunError,
    )
    from harness_core.errors import (
        InvalidSpecError as InvalidSpecError,
    )
    from harness_core.errors import (
        MessageTooLargeError as MessageTooLargeError,
    )
    from harness_core.errors import (
        ModelError as ModelError,
    )
    from harness_core.errors import (
        ProcessExitedError as ProcessExitedError,
    )
    from harness_core.errors import (
        ProtocolError as ProtocolError,
    )
    from harness_core.errors import (
        ProviderCrashedError as ProviderCrashedError,
    )
    from harness_core.errors import (
        ProviderNotFoundError as ProviderNotFoundError,
    )
    from harness_core.errors import (
        RateLimitedError as RateLimitedError,
    )
    from harness_core.errors import (
        SessionBusyError as SessionBusyError,
    )
    from harness_core.errors import (
        SessionClosedError as SessionClosedError,
    )
    from harness_core.errors import (
        SessionNotFoundError as SessionNotFoundError,
    )
    from harness_core.errors import (
        SpawnFailedError as SpawnFailedError,
    )
    from harness_core.errors import (
        StructuredOutputError as StructuredOutputError,
    )
    from harness_core.errors import (
        UndoRefusedError as UndoRefusedError,
    )
    from harness_core.errors import (
        UnsupportedFeatureError as UnsupportedFeatureError,
    )
    from harness_core.errors import (
        exit_status_for_code as exit_status_for_code,
    )
    from harness_core.errors import (
        truncate as truncate,
    )
    from harness_core.events import (
        CLI_WARNING as CLI_WARNING,
    )
    from harness_core.events import (
        EVENT_ADAPTER as EVENT_ADAPTER,
    )
    from harness_core.events import (
        ApprovalDecision as ApprovalDecision,
    )
    from harness_core.events import (
        ApprovalRequested as ApprovalRequested,
    )
    from harness_core.events import (
        ApprovalResolved as ApprovalResolved,
    )
    from harness_core.events import (
        ContextUsage as ContextUsage,
    )
    from harness_core.events import (
        Done as Done,
    )
    from harness_core.events import (
        ErrorEvent as ErrorEvent,
    )
    from harness_core.events import (
        ErrorInfo as ErrorInfo,
    )
    from harness_core.events import (
        FileChange as FileChange,
    )
    from harness_core.events import (
        FilesChanged as FilesChanged,
    )
    from harness_core.events import (
        HarnessEvent as HarnessEvent,
    )
    from harness_core.events import (
        HarnessResult as HarnessResult,
    )
    from harness_core.events import (
        HarnessToolDetails as HarnessToolDetails,
    )
    from harness_core.events import (
        Notice as Notice,
    )
    from harness_core.events import (
        ProviderRaw as ProviderRaw,
    )
    from harness_core.events import (
        ReasoningDelta as ReasoningDelta,
    )
    from harness_core.events import (
        RunStarted as RunStarted,
    )
    from harness_core.events import (
        RunStatus as RunStatus,
    )
    from harness_core.events import (
        SessionStarted as SessionStarted,
    )
    from harness_core.events import (
        SessionTurn as SessionTurn,
    )
    from harness_core.events import (
        TextDelta as TextDelta,
    )
    from harness_core.events import (
        ToolKind as ToolKind,
    )
    from harness_core.events import (
        ToolResult as ToolResult,
    )
    from harness_core.events import (
        ToolStatus as ToolStatus,
    )
    from harness_core.events import (
        ToolSummary as ToolSummary,
    )
    from harness_core.events import (
        ToolUse as ToolUse,
    )
    from harness_core.events import (
        Usage as Usage,
    )
    from harness_core.events import (
        parse_event as parse_event,
    )
    from harness_core.hookspecs import (
        hookimpl as hookimpl,
    )
    from harness_core.mcp import (
        McpServer as McpServer,
    )
    from harness_core.spec import (
        AgentRunSpec as AgentRunSpec,
    )
    from harness_core.spec import (
        ApprovalPolicy as ApprovalPolicy,
    )
    from harness_core.spec import (
        SandboxMode as SandboxMode,
    )
    from harness_core.spec import (
        SessionSpec as SessionSpec,
    )
    from harness_core.tools.loader import ToolsLoadError as ToolsLoadError
    from harness_core.tools.loader import load_tools as load_tools
    from harness_core.tools.tool import Tool as Tool
    from harness_core.tools.tool import tool as tool


if not TYPE_CHECKING:  # hidden from type checkers, which would otherwise accept any name as `Any`

    def __getattr__(name: str) -> Any:
        module = _EXPORTS.get(name)
        if module is None:
            raise missing_name(__name__, name)
        value = getattr(import_module(module), name)
        globals()[name] = value
        return value
