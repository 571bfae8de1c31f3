"""The approval broker of one run: who decides a provider's approval request, and its one resolution.

Layer: core runtime. Knows approval events, the `harness_approve` hook and the event pipe; knows nothing of
providers, their wire protocols or the consumer. Who decides, and the one `approval_resolved` per request
whoever settles it first: docs/runs.md (approvals).
"""

from __future__ import annotations

import inspect
import secrets
from collections.abc import Awaitable, Callable
from typing import Literal

import anyio

from harness_core._logging import BoundLogger
from harness_core._run.pipe import EventPipe
from harness_core._run.state import RunState
from harness_core.events import ApprovalDecision, ApprovalRequested, ApprovalResolved
from harness_core.plugins import PluginHost
from harness_core.spec import AgentRunSpec, ApprovalPolicy

__all__ = ["ApprovalBroker", "Approver"]

Approver = Callable[
    [ApprovalRequested],
    "ApprovalDecision | tuple[ApprovalDecision, str] | Awaitable[ApprovalDecision | tuple[ApprovalDecision, str]]",
]
"""`approver`: decides one approval request (may be async): a decision, or (decision, reason) to say who or why
(logged as the resolution's `reason`); what it raises denies the request."""

DecidedBy = Literal["callback", "hook", "default", "runner"]

_NO_APPROVER = (
    "no one could answer: run it on a terminal to be asked, or start it with `harness run --background` and "
    "answer with `harness approve`, or install a harness_approve plugin{never}; from Python, pass approver= to run()"
)
_SETTLE_DEADLINE = 5.0


def _no_approver(policy: ApprovalPolicy, harness_own: bool) -> str:
    """Why a request nobody decided is denied, and what a command-line user can do (Python's `approver=` last);
    `--approval never` only for the agent's own requests under another policy (a `requires_approval` tool asks
    under every policy)."""
    never = "" if harness_own or policy is ApprovalPolicy.NEVER else ", or use --approval never"
    return _NO_APPROVER.format(never=never)


class ApprovalBroker:
    """Decides and resolves the approval requests of one run (`RunContext.request_approval`)."""

    def __init__(self, *, spec: AgentRunSpec, host: PluginHost, approver: Approver | None, pipe: EventPipe,
                 state: RunState, log: BoundLogger,
                 runner_decides: Callable[[ApprovalRequested], tuple[ApprovalDecision, str] | None] | None = None,
                 ) -> None:
        self._spec = spec
        self._runner_decides = runner_decides
        self._host = host
        self._approver = approver
        self._pipe = pipe
        self._state = state
        self._log = log
        self._resolved: set[str] = set()
        self._shown: dict[str, str] = {}  # the provider's request id -> the id the run shows
        self._provider_ids: dict[str, str] = {}  # and back

    def shown_id(self, provider_id: str) -> str:
        """The id a request of the provider is shown, logged and answered by: random (`new_id`), so nobody can
        answer a request before it is asked, as a provider's own ids (0, 1, 2, ...) would let them."""
        shown = self._shown.get(provider_id)
        if shown is None:
            shown = self._shown[provider_id] = self.new_id(provider_id)
            self._provider_ids[shown] = provider_id
        return shown

    def provider_id(self, shown_id: str) -> str:
        """The provider's own id of the request shown as `shown_id` (itself when unknown)."""
        return self._provider_ids.get(shown_id, shown_id)

    def new_id(self, provider_id: str) -> str:
        """A fresh id for the provider's request `provider_id` (a replay gives the recorded one)."""
        return f"apr-{secrets.token_hex(8)}"

    def provider_resolution(self, event: ApprovalResolved) -> ApprovalResolved | None:
        """A resolution the provider emitted itself (a request its CLI withdrew), under the id the run shows; None
        when the request was resolved already."""
        if event.request_id in self._shown:
            event = event.model_copy(update={"request_id": self._shown[event.request_id]})
        return event if self.first_resolution(event) else None

    async def withdraw(self, provider_id: str, reason: str) -> None:
        """Settle the provider's request `provider_id` now, `abort` by the runner with `reason`, before the provider
        stops waiting for it: the one `approval_resolved` (nothing when it is settled already, or was never asked)."""
        shown = self._shown.get(provider_id)
        if shown is None or shown in self._resolved:
            return
        await self._settle(ApprovalResolved(request_id=shown, decision=ApprovalDecision.ABORT, decided_by="runner",
                                            reason=reason))

    async def request(self, request: ApprovalRequested, *, harness_own: bool = False) -> ApprovalResolved:
        """Emit `request`, decide it, emit its resolution and return that resolution (the decision, who decided
        and why; returned even when the provider settled the request first). The idle clock is paused meanwhile.
        Cancelled at any point after the request was logged, it is settled `abort` by the runner (unless already
        settled), shielded and bounded, and the cancellation goes on. `harness_own`: Harness asks it itself (a
        Python tool's `requires_approval`), so the runner may deny it but never approves it: the operation's
        approver decides."""
        with self._state.approval_wait():
            try:  # a copy under the id the run shows (never stamp a provider's object, perhaps queued, twice)
                request = request.model_copy(update={"request_id": self.shown_id(request.request_id)})
                await self._pipe.publish(request)  # logged before it may wait for room: settled even if cut short
                self._pipe.flush()  # a human may take a while: the request must be in the log meanwhile
                decision, by, reason = await self._decide(request, harness_own)
            except BaseException:  # cancelled (interrupt, the CLI withdrew it, the run ended): settle it anyway
                if request.request_id in self._resolved:  # withdrawn: settled already
                    raise
                with anyio.CancelScope(shield=True), anyio.move_on_after(_SETTLE_DEADLINE):
                    await self._settle(ApprovalResolved(request_id=request.request_id, decision=ApprovalDecision.ABORT,
                                                        decided_by="runner", reason="the run ended before a decision"))
                raise
            resolved = ApprovalResolved(request_id=request.request_id, decision=decision, decided_by=by, reason=reason)
            await self._settle(resolved)
            return resolved

    def first_resolution(self, event: ApprovalResolved) -> bool:
        """Whether `event` is the first resolution of its request (a later one is dropped, and logged)."""
        if event.request_id in self._resolved:
            self._log.debug("duplicate approval_resolved dropped", request_id=event.request_id)
            return False
        self._resolved.add(event.request_id)
        return True

    async def _settle(self, resolved: ApprovalResolved) -> None:
        if self.first_resolution(resolved):
            await self._pipe.publish(resolved)

    async def _decide(self, request: ApprovalRequested,
                      harness_own: bool = False) -> tuple[ApprovalDecision, DecidedBy, str | None]:
        ruled = self._runner_decides(request) if self._runner_decides is not None else None
        if ruled is not None and harness_own and ruled[0] is ApprovalDecision.APPROVE:
            ruled = None  # the runner's approving is for the agent's requests its raised policy caused, not these
        if ruled is not None:  # a tool filter Harness enforces (`tool_policy`): before anyone is asked
            return ruled[0], "runner", ruled[1]
        if self._approver is not None:
            try:
                outcome = self._approver(request)
                answer = await outcome if inspect.isawaitable(outcome) else outcome
                if isinstance(answer, tuple):
                    decision, why = answer
                    return ApprovalDecision(decision), "callback", str(why)
                return ApprovalDecision(answer), "callback", None
            except Exception as exc:  # noqa: BLE001 - a broken approver denies, it does not crash the run
                self._log.exception("approver raised; denying", request_id=request.request_id)
                return ApprovalDecision.DENY, "callback", f"the approver raised {type(exc).__name__}: {exc}"
        try:
            hooked = self._host.pm.hook.harness_approve(request=request, spec=self._spec)
            if hooked is not None:
                return ApprovalDecision(hooked), "hook", None
        except Exception as exc:  # noqa: BLE001 - a broken policy plugin denies; it is not the provider's fault
            self._log.exception("harness_approve plugin failed; denying", request_id=request.request_id)
            return ApprovalDecision.DENY, "hook", f"a harness_approve plugin failed: {type(exc).__name__}: {exc}"
        return ApprovalDecision.DENY, "default", _no_approver(self._spec.approval, harness_own)
