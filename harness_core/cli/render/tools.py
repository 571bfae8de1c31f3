"""The live view's memory of tool actions and approval requests in flight, and the text of their lines: which tools
run, which approvals were asked for which tool, which actions ended without running (docs/sessions.md).

Layer: CLI rendering, a part of `Renderer` (no output of its own). Knows the tool and approval event models only:
nothing of providers, the runner, the click commands or the terminal.
"""

from __future__ import annotations

from collections.abc import Mapping

from harness_core import (
    ApprovalDecision,
    ApprovalRequested,
    ApprovalResolved,
    HarnessToolDetails,
    ToolKind as _Kind,
    ToolResult,
    ToolStatus as _Status,
)
from harness_core.cli.render.format import one_line, tool_label

__all__ = ["TERMINAL_REASON", "ToolBook", "approval_text", "decided_by_you", "label_for", "summary_lines"]

TERMINAL_REASON = "answered on the terminal"
"""The `ApprovalResolved.reason` of a decision typed at the terminal approver's question
(`foreground.terminal_approvals`)."""
_BY_YOU = (TERMINAL_REASON, "answered with harness ")  # the terminal; `harness attach` or `harness approve`
_SUMMARY_WIDTH = 160
_DECIDED = {ApprovalDecision.APPROVE: "approved", ApprovalDecision.DENY: "denied", ApprovalDecision.ABORT: "aborted"}


def decided_by_you(event: ApprovalResolved) -> bool:
    """Whether a person answered the request (at a terminal approver's question, in `harness attach` or with
    `harness approve`), as opposed to a program's callback, a policy plugin, the default or the runner."""
    reason = event.reason or ""
    return event.decided_by == "callback" and reason.startswith(_BY_YOU)


def approval_text(event: ApprovalResolved, what: str, dash: str, reasons_shown: set[str],
                  interrupted: bool = False) -> str:
    """``[approval] Running command rm -rf build — denied by you``: the decision, who took it, and why when that
    says something (a denial's reason, given once: later ones say "same reason as above"; where a person answered
    from, ``(with harness approve)``, each time). A question the runner settled for nobody was withdrawn:
    ``— withdrawn: interrupted`` once an interrupt was asked for (Ctrl-C at the question)."""
    if event.decided_by == "runner" and event.decision is ApprovalDecision.ABORT and interrupted:
        return f"[approval] {what} {dash} withdrawn: interrupted"
    approved = event.decision is ApprovalDecision.APPROVE
    by = "you" if decided_by_you(event) else event.decided_by
    reason = ""
    why = event.reason
    if why == TERMINAL_REASON:
        why = None  # "by you" says it
    if why and by == "you" and why.startswith(_BY_YOU[1]):
        reason = f" ({why.removeprefix('answered ')})"  # where you answered: short, and said every time
    elif why and (not approved or why.startswith(("answered ", "decided "))):
        reason = " (same reason as above)" if why in reasons_shown else f" ({why})"
        reasons_shown.add(why)
    return f"[approval] {what} {dash} {_DECIDED[event.decision]} by {by}{reason}"


class ToolBook:
    """Tools running, approvals open, and why a tool did not run (fed by the renderer, in event order)."""

    def __init__(self) -> None:
        self.pending: dict[str, tuple[HarnessToolDetails, float, bool]] = {}
        """tool id → (display, when it started, whether its start line was printed)."""
        self.summarized: set[str] = set()
        """Tools whose output summary was printed already (by a `tool_summary`)."""
        self._open: dict[str, ApprovalRequested] = {}
        self._refused: dict[str, str] = {}  # tool id → why it will not run (its approval was not given)
        self._said: set[str] = set()  # tools whose refusal an approval line showed: their not-run line is not added
        self._not_run: set[str] = set()  # tools shown as not run while their approval was still open
        self.interrupted = False
        """Set by the renderer once an interrupt was asked for: a tool cut short at its question says so."""
        self._start_printed = False  # whether the tool `finished` last had its start line printed

    @property
    def waiting_approval(self) -> bool:
        return bool(self._open)

    def started(self, tool_id: str, display: HarnessToolDetails, now: float) -> None:
        self.pending[tool_id] = (display, now, False)

    def phase(self) -> str:
        """What the run waits for, by its tools: ``waiting for approval``, ``running command pytest -q``…"""
        if self._open:
            return "waiting for approval"
        if self.pending:
            label = tool_label(next(reversed(self.pending.values()))[0])
            return label[:1].lower() + label[1:]
        return "waiting for model"

    def asked(self, event: ApprovalRequested) -> None:
        if event.tool_id is None and (tool := self._asking_tool(event.display)) is not None:
            event = event.model_copy(update={"tool_id": tool})  # a Python tool's own question: its call's
        self._open[event.request_id] = event

    def _asking_tool(self, display: HarnessToolDetails) -> str | None:
        """The MCP call in progress a request without a tool id is about (the `harness` server asks about a call
        of its Python tools, not knowing the agent's id for it): the latest one of that server and tool not asked
        about already."""
        server = (display.raw or {}).get("server")
        if display.kind is not _Kind.MCP or server is None:
            return None
        asked = {r.tool_id for r in self._open.values()}
        for tool_id, (shown, _, _) in reversed(self.pending.items()):
            if (shown.kind is _Kind.MCP and shown.title == display.title and tool_id not in asked
                    and (shown.raw or {}).get("server") == server):
                return tool_id
        return None

    def resolved(self, event: ApprovalResolved) -> tuple[HarnessToolDetails | None, bool]:
        """Record a decision: the display of the request it settles (None for a request not seen), and whether its
        line is shown (False when the action's own line says it all: a request settled for nobody; or when the
        runner approved it, a question nobody wanted asked: the agent's under `never` raised to enforce a filter,
        or its own before a Python tool that asks itself)."""
        request = self._open.pop(event.request_id, None)
        if request is None:
            return None, True
        if event.decided_by == "runner" and event.decision is ApprovalDecision.APPROVE:
            return request.display, False
        tool = request.tool_id
        if tool is None or event.decision is ApprovalDecision.APPROVE:
            return request.display, True
        if event.decided_by == "runner" and (tool in self.pending or tool in self._not_run):
            self._not_run.discard(tool)
            self._refused[tool] = self._why(event)
            return request.display, False  # its tool's "not run" line (to come, or shown) is the one line
        self._refused[tool] = self._why(event)
        self._said.add(tool)
        return request.display, True

    def shown(self, event: ToolResult, not_run: str | None) -> bool:
        """Whether a finished tool gets its line: not when an approval line already said it would not run, unless
        its start line was printed (`finished` says), which then gets its end."""
        if event.tool_id not in self._said:
            return True
        self._said.discard(event.tool_id)
        started = self._start_printed
        return started or (not_run is None and event.display.status not in (_Status.DECLINED, _Status.INTERRUPTED))

    def finished(self, event: ToolResult) -> str | None:
        """Forget a finished tool; why it never ran ("" when that is not known; None when it may have run)."""
        self._start_printed = bool(self.pending.pop(event.tool_id, (None, 0.0, False))[2])
        refused = self._refused.pop(event.tool_id, None)
        cut = event.display.status is _Status.INTERRUPTED  # the run's interrupt came before its result
        if any(r.tool_id == event.tool_id for r in self._open.values()):  # still asking: it cannot have run
            self._not_run.add(event.tool_id)
            return "interrupted" if self.interrupted or cut else ""
        if refused == "denied" and event.display.status is _Status.DECLINED:
            return None  # the usual "(declined)"
        if refused == "" and cut:
            return "interrupted"
        return refused

    def _why(self, event: ApprovalResolved) -> str:
        if event.decision is ApprovalDecision.DENY:
            return "denied"
        if event.decided_by == "runner":  # settled for nobody: the run or the agent moved on without an answer
            return "interrupted" if self.interrupted else ""
        return "aborted"


def label_for(display: HarnessToolDetails | None, request_id: str, marks: Mapping[str, str], cwd: str | None) -> str:
    """What an approval line names: the action, else the request's id."""
    return tool_label(display, marks["more"], cwd) if display is not None else f"request {request_id}"


def summary_lines(text: str, most: int, more: str) -> list[str]:
    """A tool's output summary, indented: its first `most` non-blank lines, each cut to one line, then how many
    more there were."""
    lines = [line for line in text.splitlines() if line.strip()]
    shown = [f"    {one_line(line, _SUMMARY_WIDTH, more)}" for line in lines[:most]]
    if len(lines) > most:
        shown.append(f"    {more} {len(lines) - most} more lines")
    return shown
