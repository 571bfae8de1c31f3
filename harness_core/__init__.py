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

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    "AgentRunSpec": "harness_core.spec",
    "ApprovalPolicy": "harness_core.spec",
    "SandboxMode": "harness_core.spec",
    "Capability": "harness_core.capabilities",
    "ProviderInfo": "harness_core.capabilities",
    "ApprovalDecision": "harness_core.events",
    "ApprovalRequested": "harness_core.events",
    "ApprovalResolved": "harness_core.events",
    "ContextUsage": "harness_core.events",
    "Done": "harness_core.events",
    "ErrorEvent": "harness_core.events",
    "ErrorInfo": "harness_core.events",
    "EVENT_ADAPTER": "harness_core.events",
    "HarnessEvent": "harness_core.events",
    "HarnessResult": "harness_core.events",
    "HarnessToolDetails": "harness_core.events",
    "ProviderRaw": "harness_core.events",
    "ReasoningDelta": "harness_core.events",
    "RunStarted": "harness_core.events",
    "RunStatus": "harness_core.events",
    "SessionStarted": "harness_core.events",
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
    "MessageTooLargeError": "harness_core.errors",
    "ModelError": "harness_core.errors",
    "ProcessExitedError": "harness_core.errors",
    "ProtocolError": "harness_core.errors",
    "ProviderCrashedError": "harness_core.errors",
    "ProviderNotFoundError": "harness_core.errors",
    "RateLimitedError": "harness_core.errors",
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
    "Approver": "harness_core.runner",
    "EventCallback": "harness_core.runner",
    "LiveRun": "harness_core.runner",
    "open_run": "harness_core.runner",
    "run": "harness_core.runner",
    "run_sync": "harness_core.runner",
}

__all__ = ["__version__", *_EXPORTS]

if TYPE_CHECKING:
    from harness_core.capabilities import (
        Capability as Capability,
        ProviderInfo as ProviderInfo,
    )
    from harness_core.errors import (
        AuthFailedError as AuthFailedError,
        CliNotFoundError as CliNotFoundError,
        CliVersionUnsupportedError as CliVersionUnsupportedError,
        EXIT_FAILED as EXIT_FAILED,
        EXIT_INTERRUPTED as EXIT_INTERRUPTED,
        EXIT_OK as EXIT_OK,
        EXIT_UNAVAILABLE as EXIT_UNAVAILABLE,
        EXIT_USAGE as EXIT_USAGE,
        HarnessError as HarnessError,
        IdleTimeoutError as IdleTimeoutError,
        InterruptedRunError as InterruptedRunError,
        InvalidSpecError as InvalidSpecError,
        MessageTooLargeError as MessageTooLargeError,
        ModelError as ModelError,
        ProcessExitedError as ProcessExitedError,
        ProtocolError as ProtocolError,
        ProviderCrashedError as ProviderCrashedError,
        ProviderNotFoundError as ProviderNotFoundError,
        RateLimitedError as RateLimitedError,
        SpawnFailedError as SpawnFailedError,
        UnsupportedFeatureError as UnsupportedFeatureError,
        exit_status_for_code as exit_status_for_code,
        truncate as truncate,
    )
    from harness_core.events import (
        ApprovalDecision as ApprovalDecision,
        ApprovalRequested as ApprovalRequested,
        ApprovalResolved as ApprovalResolved,
        ContextUsage as ContextUsage,
        Done as Done,
        EVENT_ADAPTER as EVENT_ADAPTER,
        ErrorEvent as ErrorEvent,
        ErrorInfo as ErrorInfo,
        HarnessEvent as HarnessEvent,
        HarnessResult as HarnessResult,
        HarnessToolDetails as HarnessToolDetails,
        ProviderRaw as ProviderRaw,
        ReasoningDelta as ReasoningDelta,
        RunStarted as RunStarted,
        RunStatus as RunStatus,
        SessionStarted as SessionStarted,
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
    from harness_core.runner import (
        Approver as Approver,
        EventCallback as EventCallback,
        LiveRun as LiveRun,
        open_run as open_run,
        run as run,
        run_sync as run_sync,
    )
    from harness_core.spec import (
        AgentRunSpec as AgentRunSpec,
        ApprovalPolicy as ApprovalPolicy,
        SandboxMode as SandboxMode,
    )


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'harness_core' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value
