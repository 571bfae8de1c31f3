"""Harness: run coding-agent CLIs behind one provider-neutral, typed event stream.

The public API, imported lazily so `import harness_core` (and the CLI's start-up) stays cheap:

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
    "Provider": "harness_core._provider",
    "ProviderOptions": "harness_core._provider",
    "RunContext": "harness_core._provider",
    "CliInfo": "harness_core._provider",
    "HarnessError": "harness_core.errors",
    "HarnessResult": "harness_core.events",
    "HarnessEvent": "harness_core.events",
    "HarnessToolDetails": "harness_core.events",
    "ApprovalDecision": "harness_core.events",
    "RunStatus": "harness_core.events",
    "Usage": "harness_core.events",
    "hookimpl": "harness_core.hookspecs",
    "open_run": "harness_core.runner",
    "run": "harness_core.runner",
    "run_sync": "harness_core.runner",
    "LiveRun": "harness_core.runner",
}

__all__ = ["__version__", *_EXPORTS]

if TYPE_CHECKING:
    from harness_core.capabilities import (
        Capability as Capability,
    )
    from harness_core.capabilities import (
        ProviderInfo as ProviderInfo,
    )
    from harness_core.errors import (
        HarnessError as HarnessError,
    )
    from harness_core.events import (
        ApprovalDecision as ApprovalDecision,
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
        RunStatus as RunStatus,
    )
    from harness_core.events import (
        Usage as Usage,
    )
    from harness_core.hookspecs import (
        hookimpl as hookimpl,
    )
    from harness_core._provider import (
        CliInfo as CliInfo,
    )
    from harness_core._provider import (
        Provider as Provider,
    )
    from harness_core._provider import (
        ProviderOptions as ProviderOptions,
    )
    from harness_core._provider import (
        RunContext as RunContext,
    )
    from harness_core.runner import (
        LiveRun as LiveRun,
    )
    from harness_core.runner import (
        open_run as open_run,
    )
    from harness_core.runner import (
        run as run,
    )
    from harness_core.runner import (
        run_sync as run_sync,
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


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'harness_core' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value
