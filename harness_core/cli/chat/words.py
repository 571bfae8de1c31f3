"""What `harness chat` says: its `/help`, and a budget error in command-line words (the `--resume ID --max-... N` to
type, or offline that the budget cannot be raised), with the whole chat's figures.

Layer: CLI, loaded when `harness chat` runs; knows the error and event models and the budget details
`BudgetExceededError` carries; nothing of sessions, providers or the terminal.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from harness_core import ErrorEvent, ErrorInfo, HarnessEvent, Usage

__all__ = ["HELP", "ChatBudget"]

HELP = """\
/model NAME       the next turns use model NAME (/model alone: the current one; /model default: the session's)
/approval POLICY  the next turns ask before acting: never, on-request or untrusted (/approval alone: the current)
/undo             put back the files the last turn changed (as `harness undo`; the agent is not told)
/help             this list
/exit             leave (so do /quit, Ctrl-D, and Ctrl-C twice in a row at the prompt)
//TEXT            send /TEXT as a prompt
A line ending in \\ goes on at the next (so does Alt-Enter); a paste of many lines is one prompt, sent by Enter.
Ctrl-C during a turn interrupts it (the chat goes on); press it again to stop the turn at once (the chat goes \
on in a new agent process, resuming the conversation). Ctrl-C with text typed at the prompt clears the line.
(A provider whose live process keeps its model or approval refuses /model or /approval: use --model, --approval.)"""
"""`/help`: the commands, and what Ctrl-C does."""

_UNITS = {"max_cost_usd": "USD", "max_output_tokens": "output tokens", "max_turns": "agent steps"}
_METAVARS = {"max_cost_usd": "USD", "max_output_tokens": "N", "max_turns": "N"}


@dataclass(frozen=True)
class ChatBudget:
    """The chat's own limits (as typed) and what the agent processes it left behind used of them."""

    provider: str
    max_cost_usd: float | None = None
    max_output_tokens: int | None = None
    offline: bool = False
    past: Usage = field(default_factory=Usage)
    """The usage of the chat's earlier sessions (those it continued from in a new agent process)."""

    def left(self) -> dict[str, float | int] | None:
        """The session-wide limits a new session of this chat gets (each reduced by what the earlier sessions
        used: the budget covers the whole chat); None when one is used up already."""
        update: dict[str, float | int] = {}
        if self.max_cost_usd is not None:
            cost = self.max_cost_usd - (self.past.cost_usd or 0.0)
            if cost <= 0:
                return None
            update["max_cost_usd"] = cost
        if self.max_output_tokens is not None:
            tokens = self.max_output_tokens - self.past.output_tokens
            if tokens <= 0:
                return None
            update["max_output_tokens"] = tokens
        return update

    def event(self, event: HarnessEvent, agent: str | None) -> HarnessEvent:
        """`event` as the chat shows it: a `budget_exceeded` error reworded (`message`), the others unchanged."""
        if not isinstance(event, ErrorEvent) or event.error.code != "budget_exceeded":
            return event
        return event.model_copy(update={"error": self.info(event.error, agent)})

    def info(self, error: ErrorInfo, agent: str | None, *, before_turn: bool = False) -> ErrorInfo:
        """A `budget_exceeded` error with the chat's figures and the command line's advice."""
        budget, used = error.details.get("budget"), error.details.get("used")
        if not isinstance(budget, str):
            return error
        limit = getattr(self, budget, None) if budget != "max_turns" else error.details.get("limit")
        if not isinstance(limit, (int, float)):
            return error
        if isinstance(used, (int, float)) and budget == "max_cost_usd":
            used = round(used + (self.past.cost_usd or 0.0), 6)
        elif isinstance(used, (int, float)) and budget == "max_output_tokens":
            used = used + self.past.output_tokens
        details = {**error.details, "limit": limit, "used": used}
        return error.model_copy(update={"message": self.message(budget, limit, used, agent, before_turn=before_turn),
                                        "details": details})

    def message(self, budget: str, limit: float, used: object, agent: str | None, *, before_turn: bool) -> str:
        flag = "--" + budget.replace("_", "-")
        figures = f"{budget} = {limit:g} {_UNITS.get(budget, '')}".rstrip()
        if isinstance(used, (int, float)):
            figures += f", used {used:g}"
        if budget == "max_turns":
            said = f"the turn went over {flag} ({figures}) and was stopped; the chat goes on with the same limit"
            more = f"for more steps a turn: `harness chat -p {self.provider}{_resume(agent)} {flag} N`"
            if self.offline:
                more = f"for more steps a turn, start a new chat with a higher {flag}"
            return f"{said} ({more})"
        if before_turn:
            said = f"the chat has used its whole budget ({figures}); the prompt was not sent"
        else:
            said = f"the chat went over its budget ({figures}) and this turn was stopped"
        if self.offline:
            return (f"{said}. The budget cannot be raised for this conversation: an offline chat's agent state is "
                    f"temporary (`harness chat --offline {flag} {_METAVARS[budget]}` starts a new one)")
        return (f"{said}. To go on with this conversation, continue it with a higher budget: `harness chat -p "
                f"{self.provider}{_resume(agent)} {flag} {_METAVARS[budget]}`")


def _resume(agent: str | None) -> str:
    return f" --resume {agent}" if agent else " --resume SESSION_ID"
