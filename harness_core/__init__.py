"""Harness: run coding-agent CLIs behind one provider-neutral, typed event stream.

The façade for people who RUN agents: specs, events, results, errors and the run API. Everything is imported
lazily, so `import harness_core` (and the CLI's start-up) stays cheap. Provider authors also use
`harness_core.provider`; offline scenarios and scripted model APIs are in `harness_core.offline`.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from harness_core import _moved
from harness_core._facade import missing_name
from harness_core._version import __version__

_moved.install()  # old import paths of moved modules keep working for one release, with a warning

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
    "check_run": "harness_core._run.api",
    "open_run": "harness_core._run.api",
    "run": "harness_core._run.api",
    "run_sync": "harness_core._run.api",
    "Session": "harness_core._run.session.session",
    "open_session": "harness_core._run.session.session",
    "ConversationBudget": "harness_core._run.budget",
    "WireLog": "harness_core._run.replay.run",
    "load_wire": "harness_core._run.replay.run",
    "open_replay": "harness_core._run.replay.run",
    "replay": "harness_core._run.replay.run",
    "FileUndo": "harness_core._run.changes.undo",
    "UndoPlan": "harness_core._run.changes.undo",
    "apply_undo": "harness_core._run.changes.undo",
    "plan_undo": "harness_core._run.changes.undo",
    "Tool": "harness_core.tools.tool",
    "tool": "harness_core.tools.tool",
    "load_tools": "harness_core.tools.loader",
    "ToolsLoadError": "harness_core.tools.loader",
    "export_atif": "harness_core.trajectory",
    "export_messages": "harness_core.trajectory",
}

__all__ = ["__version__", *_EXPORTS]
"""The one name list: `_EXPORTS` (lazy, by module); the TYPE_CHECKING imports below repeat it for type checkers
(tests/test_facades.py keeps the two equal)."""

if TYPE_CHECKING:
    from harness_core._run.api import (
        check_run as check_run,
        open_run as open_run,
        run as run,
        run_sync as run_sync,
    )
    from harness_core._run.approvals import (
        Approver as Approver,
    )
    from harness_core._run.budget import (
        ConversationBudget as ConversationBudget,
    )
    from harness_core._run.changes.undo import (
        FileUndo as FileUndo,
        UndoPlan as UndoPlan,
        apply_undo as apply_undo,
        plan_undo as plan_undo,
    )
    from harness_core._run.live import (
        LiveRun as LiveRun,
    )
    from harness_core._run.pipe import (
        EventCallback as EventCallback,
    )
    from harness_core._run.replay.run import (
        WireLog as WireLog,
        load_wire as load_wire,
        open_replay as open_replay,
        replay as replay,
    )
    from harness_core._run.session.session import (
        Session as Session,
        open_session as open_session,
    )
    from harness_core.attachment import (
        Attachment as Attachment,
    )
    from harness_core.capabilities import (
        Capability as Capability,
        ProviderInfo as ProviderInfo,
    )
    from harness_core.errors import (
        EXIT_FAILED as EXIT_FAILED,
        EXIT_INTERRUPTED as EXIT_INTERRUPTED,
        EXIT_OK as EXIT_OK,
        EXIT_UNAVAILABLE as EXIT_UNAVAILABLE,
        EXIT_USAGE as EXIT_USAGE,
        AuthFailedError as AuthFailedError,
        BudgetExceededError as BudgetExceededError,
        CliNotFoundError as CliNotFoundError,
        CliVersionUnsupportedError as CliVersionUnsupportedError,
        HarnessError as HarnessError,
        IdleTimeoutError as IdleTimeoutError,
        InterruptedRunError as InterruptedRunError,
        InvalidSpecError as InvalidSpecError,
        LogWriteFailedError as LogWriteFailedError,
        MessageTooLargeError as MessageTooLargeError,
        ModelError as ModelError,
        ProcessExitedError as ProcessExitedError,
        ProtocolError as ProtocolError,
        ProviderCrashedError as ProviderCrashedError,
        ProviderNotFoundError as ProviderNotFoundError,
        RateLimitedError as RateLimitedError,
        SessionBusyError as SessionBusyError,
        SessionClosedError as SessionClosedError,
        SessionNotFoundError as SessionNotFoundError,
        SpawnFailedError as SpawnFailedError,
        StructuredOutputError as StructuredOutputError,
        UndoRefusedError as UndoRefusedError,
        UnsupportedFeatureError as UnsupportedFeatureError,
        exit_status_for_code as exit_status_for_code,
        truncate as truncate,
    )
    from harness_core.events import (
        CLI_WARNING as CLI_WARNING,
        EVENT_ADAPTER as EVENT_ADAPTER,
        ApprovalDecision as ApprovalDecision,
        ApprovalRequested as ApprovalRequested,
        ApprovalResolved as ApprovalResolved,
        ContextUsage as ContextUsage,
        Done as Done,
        ErrorEvent as ErrorEvent,
        ErrorInfo as ErrorInfo,
        FileChange as FileChange,
        FilesChanged as FilesChanged,
        HarnessEvent as HarnessEvent,
        HarnessResult as HarnessResult,
        HarnessToolDetails as HarnessToolDetails,
        Notice as Notice,
        ProviderRaw as ProviderRaw,
        ReasoningDelta as ReasoningDelta,
        RunStarted as RunStarted,
        RunStatus as RunStatus,
        SessionStarted as SessionStarted,
        SessionTurn as SessionTurn,
        TextDelta as TextDelta,
        ToolKind as ToolKind,
        ToolResult as ToolResult,
        ToolStatus as ToolStatus,
        ToolSummary as ToolSummary,
        ToolUse as ToolUse,
        Usage as Usage,
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
        ApprovalPolicy as ApprovalPolicy,
        SandboxMode as SandboxMode,
        SessionSpec as SessionSpec,
    )
    from harness_core.tools.loader import ToolsLoadError as ToolsLoadError, load_tools as load_tools
    from harness_core.tools.tool import Tool as Tool, tool as tool
    from harness_core.trajectory import export_atif as export_atif, export_messages as export_messages




def __dir__() -> list[str]:
    """The lazy names too, so completion (IPython, editors) offers them before they are first used."""
    return sorted({*globals(), *_EXPORTS})


if not TYPE_CHECKING:  # hidden from type checkers, which would otherwise accept any name as `Any`

    def __getattr__(name: str) -> Any:
        module = _EXPORTS.get(name)
        if module is None:
            raise missing_name(__name__, name)
        value = getattr(import_module(module), name)
        globals()[name] = value
        return value
