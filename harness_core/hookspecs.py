"""Every pluggy hook a Harness plugin may implement. Names all start with `harness_`.

Layer: plugin contract. Knows nothing of concrete providers; documented here and in docs/providers.md
(a test checks that every hook is documented there).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    from harness_core._provider_interface import Provider
    from harness_core.events import ApprovalDecision, ApprovalRequested, HarnessEvent
    from harness_core.executor import Executor
    from harness_core.spec import AgentRunSpec

__all__ = ["PROJECT_NAME", "hookimpl", "hookspec"]

PROJECT_NAME = "harness"
hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)


@hookspec
def harness_register_providers(register: Callable[[type[Provider[Any]]], None]) -> None:
    """Register provider classes by calling ``register(ProviderClass)`` once per class.

    :param register: the host's registration callback; it validates the class and rejects name clashes.
    """


@hookspec
def harness_register_executors(register: Callable[[type[Executor]], None]) -> None:
    """Register batch executor classes (engines `harness batch --engine NAME` runs tasks on) by calling
    ``register(ExecutorClass)`` once per class. The `local` executor is registered so by a default plugin.

    :param register: the host's registration callback; it validates the class and rejects name clashes.
    """


@hookspec(firstresult=True)
def harness_approve(request: ApprovalRequested, spec: AgentRunSpec) -> ApprovalDecision | None:
    """Decide an approval the operation gave no callback for. First non-None result wins.

    :param request: the pending `approval_requested` event (what the agent wants to do).
    :param spec: the run's spec.
    :return: a decision, or None to let another plugin (or the default: deny) decide.
    """


@hookspec
def harness_on_event(event: HarnessEvent) -> None:
    """Observe every event of every run, after stamping and logging. Must be quick and must not raise;
    an exception here is logged and ignored.

    :param event: the stamped event.
    """
