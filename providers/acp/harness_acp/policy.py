"""Sandbox and approval policy → an ACP agent's session mode, and who answers each `session/request_permission`.

Layer: provider (pure policy, no I/O). Knows the ACP permission options (`allow_once`, `allow_always`,
`reject_once`, `reject_always`) and tool kinds; knows nothing of processes, JSON-RPC or the runner.
The table and each agent's mode: providers/acp/README.md, "Sandbox and approvals".
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from harness_core import ApprovalDecision, ApprovalPolicy, SandboxMode

__all__ = ["Answer", "auto_answer", "outcome_for", "outcome_of_decision", "refuses", "refused_by"]

Answer = Literal["allow", "reject", "ask"]

_HARMLESS = frozenset({"read", "search", "think"})
# not `switch_mode`: leaving the mode the spec chose (claude's ExitPlanMode offers bypassPermissions) is a decision
_FILES = frozenset({"edit", "delete", "move"})


def _inside(path: str, cwd: str) -> bool:
    full = posixpath.normpath(posixpath.join(cwd, path))
    root = posixpath.normpath(cwd)
    return full == root or full.startswith(root.rstrip("/") + "/")


def _paths(call: Mapping[str, Any]) -> list[str]:
    paths = [loc.get("path") for loc in call.get("locations") or () if isinstance(loc, Mapping)]
    paths += [c.get("path") for c in call.get("content") or () if isinstance(c, Mapping) and c.get("type") == "diff"]
    return [p for p in paths if isinstance(p, str) and p]


def auto_answer(call: Mapping[str, Any], *, sandbox: SandboxMode, approval: ApprovalPolicy, cwd: str) -> Answer:
    """Who answers this permission request: "allow"/"reject" at once, or "ask" the operation (see the table)."""
    kind = str(call.get("kind") or "other")
    if kind in _HARMLESS:
        return "allow"
    if sandbox is SandboxMode.READ_ONLY:
        return "reject"
    if kind in _FILES and sandbox is SandboxMode.WORKSPACE_WRITE and not all(_inside(p, cwd) for p in _paths(call)):
        return "reject"
    return "allow" if approval is ApprovalPolicy.NEVER else "ask"


@dataclass(frozen=True)
class Outcome:
    """The answer to one `session/request_permission`: the chosen option, or cancelled (None)."""

    option_id: str | None

    def to_wire(self) -> dict[str, Any]:
        if self.option_id is None:
            return {"outcome": {"outcome": "cancelled"}}
        return {"outcome": {"outcome": "selected", "optionId": self.option_id}}


_PREFERENCE: dict[str, tuple[str, ...]] = {
    "allow": ("allow_once", "allow_always"),
    "reject": ("reject_once", "reject_always"),
}


def outcome_for(options: Sequence[Any], answer: Literal["allow", "reject"]) -> Outcome:
    """The offered option for `answer`: a one-time choice first (Harness decides each request; an "always" option
    would decide later ones without asking), the "always" one when it is all there is. No such option: allow
    becomes cancelled (nothing to select), reject becomes cancelled too — the agent then stops the tool."""
    kinds = {str(o.get("kind")): str(o.get("optionId")) for o in reversed(options) if isinstance(o, Mapping)
             and o.get("optionId") is not None}
    for kind in _PREFERENCE[answer]:
        if kind in kinds:
            return Outcome(kinds[kind])
    return Outcome(None)


def outcome_of_decision(options: Sequence[Any], decision: ApprovalDecision) -> Outcome:
    """The operation's decision → the option: approve → allow, deny → reject, abort → cancelled (the provider then
    cancels the turn, as abort means)."""
    if decision is ApprovalDecision.APPROVE:
        return outcome_for(options, "allow")
    if decision is ApprovalDecision.DENY:
        return outcome_for(options, "reject")
    return Outcome(None)


def refuses(decision: ApprovalDecision) -> bool:
    """Whether the operation's decision refuses the tool call (deny, abort): its result shows `declined`."""
    return decision is not ApprovalDecision.APPROVE


def refused_by(outcome: Any, options: Sequence[Any]) -> bool:
    """Whether a `session/request_permission` answer (its `outcome` object) refused the call: a reject option, or
    cancelled (what Harness answers for an abort). For reading recorded transcripts the way `PromptTurn` answers."""
    if not isinstance(outcome, Mapping) or outcome.get("outcome") != "selected":
        return True
    kinds = {str(o.get("optionId")): str(o.get("kind")) for o in options if isinstance(o, Mapping)}
    return kinds.get(str(outcome.get("optionId")), "").startswith("reject")
