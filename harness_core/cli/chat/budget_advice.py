"""A budget error as `harness chat` says it: in command-line words (the `--resume ID --max-... N` to type, or
offline that the budget cannot be raised), with the whole chat's figures (`ConversationBudget` adds them up).

Layer: CLI, loaded when `harness chat` runs; knows the error and event models and the budget details
`BudgetExceededError` carries; nothing of sessions, providers or the terminal.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from harness_core import ConversationBudget, ErrorEvent, ErrorInfo, HarnessEvent

__all__ = ["BudgetAdvice"]

_UNITS = {"max_cost_usd": "USD", "max_output_tokens": "output tokens", "max_turns": "agent steps"}
_METAVARS = {"max_cost_usd": "USD", "max_output_tokens": "N", "max_turns": "N"}


@dataclass(frozen=True)
class BudgetAdvice:
    """What the chat says of its budget: the limits as typed (and what its earlier sessions used of them), the
    provider and whether it plays offline, for the command line to type to go on."""

    provider: str
    limits: ConversationBudget = field(default_factory=ConversationBudget)
    offline: bool = False

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
        limit = getattr(self.limits, budget, None) if budget != "max_turns" else error.details.get("limit")
        if not isinstance(limit, (int, float)):
            return error
        if isinstance(used, (int, float)):
            used = self.limits.total(budget, used)
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
