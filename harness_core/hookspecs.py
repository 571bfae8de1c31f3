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
    from harness_core.spec import AgentRunSpec, SessionSpec

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


@hookspec
def harness_run_starting(run_id: str, spec: AgentRunSpec, provider: str, session_id: str | None,
                         secrets: tuple[str, ...]) -> None:
    """A run is about to start: called once per run, before its `run_started` is published and before the provider
    spawns anything, so an observer can open what the run's events will fill (a trace span) and answer
    `harness_trace_context` for it from the agent's first spawn on. Must be quick and must not raise; an exception
    here is logged and ignored.

    :param run_id: the run's id (every event of the run carries it).
    :param spec: the spec as played, secrets in it (hold what you need; never write it anywhere as it is).
        `spec.trace_context` is the W3C trace context the starter had, when it was carried here (background runs,
        batches, Ray workers).
    :param provider: the name of the provider playing the run.
    :param session_id: the Harness session the run is a turn of (`harness_session_opened` came first), or None.
    :param secrets: the run's secret values, the very set its log is scrubbed with (the spec's env values but the
        provider's public ones, secret-bearing options and flag values, MCP servers' env and headers, the process's
        credentials): scrub with it whatever of the run you export (`harness_core.redaction.scrub`). Events handed
        to `harness_on_event` are not scrubbed.
    """


@hookspec
def harness_session_opened(session_id: str, spec: SessionSpec, provider: str, ts: float, secrets: tuple[str, ...],
                           genai_provider: str | None) -> None:
    """A session opened (`open_session`): called before its live process, if any, is spawned; its turns are runs
    whose `harness_run_starting` names it. Must be quick and must not raise.

    :param session_id: the Harness session's id.
    :param spec: the session's settings as played, secrets in them (as for `harness_run_starting`).
    :param provider: the name of the provider playing the session.
    :param ts: when it opened (seconds since the epoch, as an event's `ts`).
    :param secrets: the session's secret values, as its turns' logs are scrubbed with (see `harness_run_starting`).
    :param genai_provider: the provider's `ProviderInfo.genai_provider` (`gen_ai.provider.name`), or None.
    """


@hookspec
def harness_session_closed(session_id: str, reason: str, ts: float) -> None:
    """A session closed: its last turn has ended and its process, if any, is gone. Must be quick, must not raise.

    :param session_id: the Harness session's id.
    :param reason: why, for a person ("closed by its owner", "its agent process exited (or was killed)", ...).
    :param ts: when it closed (seconds since the epoch).
    """


@hookspec
def harness_batch_started(batch_id: str, name: str, cells: int, ts: float) -> None:
    """A batch starts playing (`Batch.results()`): called once, before any of its cells' runs starts, so an observer
    can open what the runs will be children of (a trace's `invoke_workflow` span) and answer
    `harness_trace_context(batch_id)` for it: the batch driver puts that context on each cell's spec
    (`AgentRunSpec.trace_context`), which carries it to where the cell plays (this process, a Ray worker). Not
    called when no plugin implements it. Must be quick and must not raise; an exception is logged and ignored.

    :param batch_id: the batch's id for this play (`Batch.batch_id`; a resumed batch gets a new one).
    :param name: the batch's name: its results file's (``tasks`` for ``tasks.results.jsonl``), else ``batch``.
    :param cells: how many cells it plays now (those the results file holds as finished are not counted).
    :param ts: when it started (seconds since the epoch, as an event's `ts`).
    """


@hookspec
def harness_batch_ended(batch_id: str, status: str, counts: dict[str, float], ts: float) -> None:
    """A batch `harness_batch_started` was called for has ended (every cell played, or the batch interrupted or
    stopped). Must be quick and must not raise.

    :param batch_id: the batch's id.
    :param status: ``success`` (every cell played succeeded), ``failed`` (one failed, or was not started: the cost
        limit), ``interrupted``.
    :param counts: the batch's figures: ``cells``, ``succeeded``, ``failed``, ``interrupted``, ``not_started``,
        ``skipped``, ``retries``, ``passed``, ``not_passed`` (verified cells), ``cost_usd``.
    :param ts: when it ended (seconds since the epoch).
    """


@hookspec(firstresult=True)
def harness_trace_context(run_id: str | None) -> dict[str, str] | None:
    """The W3C trace context to hand on, as a carrier: ``{"traceparent": ..., "tracestate": ...}`` (tracestate
    only when there is one). First non-None result wins. Providers ask for it through `RunContext.trace_context()`
    (and `SessionContext.trace_context()`) each time they spawn an agent or start a turn; launchers ask with None to
    carry the starter's context to where a run plays (`AgentRunSpec.trace_context`).

    :param run_id: a run's id: the context of that run's span (a turn's, in a session); a session's id: the
        session's span; a batch's id: the batch's span; None: the caller's current context (what a run started
        now would be a child of).
    :return: the carrier, or None when the plugin has no context for it.
    """
