"""Budgets: `max_cost_usd` and `max_output_tokens`, enforced by the runner for every provider (`Budget`), and a
conversation's across the sessions that play it in turn (`ConversationBudget`: what each new one has left).

Layer: core runtime (the runner's bookkeeping). Knows usage figures and the budget error; nothing of providers, the
stream or cancel scopes. `max_turns` is not here: only a provider can bound agent steps (docs/sessions.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from harness_core.errors import BudgetExceededError
from harness_core.events import Usage
from harness_core.spec import AgentRunSpec

__all__ = ["Budget", "ConversationBudget"]


class Budget:
    """The cost and output-token limits of one run, with what earlier turns of its session already used."""

    __slots__ = ("_max_cost", "_max_output", "_scope", "_used")

    def __init__(self, max_cost_usd: float | None, max_output_tokens: int | None, *, used: Usage | None = None,
                 scope: str = "run") -> None:
        self._max_cost = max_cost_usd
        self._max_output = max_output_tokens
        self._used = used or Usage()
        self._scope = scope

    @classmethod
    def of(cls, spec: AgentRunSpec, *, used: Usage | None = None, scope: str = "run") -> Budget | None:
        """The spec's budget, or None when it sets no limit (the runner then checks nothing)."""
        if spec.max_cost_usd is None and spec.max_output_tokens is None:
            return None
        return cls(spec.max_cost_usd, spec.max_output_tokens, used=used, scope=scope)

    def over(self, usage: Usage) -> BudgetExceededError | None:
        """The error for the first limit `usage` (this run's figures so far) takes the total past, or None."""
        if self._max_output is not None:
            output = self._used.output_tokens + usage.output_tokens
            if output > self._max_output:
                return BudgetExceededError("max_output_tokens", self._max_output, output, scope=self._scope)
        if self._max_cost is not None and usage.cost_usd is not None:
            cost = (self._used.cost_usd or 0.0) + usage.cost_usd
            if cost > self._max_cost:
                return BudgetExceededError("max_cost_usd", self._max_cost, round(cost, 6), scope=self._scope)
        return None

    def spent(self) -> BudgetExceededError | None:
        """Before a turn starts: the error when the earlier turns already reached a limit (nothing is left: a
        turn could not write a single token, or spend a cent, without going over)."""
        if self._max_output is not None and self._used.output_tokens >= self._max_output:
            return BudgetExceededError("max_output_tokens", self._max_output, self._used.output_tokens,
                                       scope=self._scope, before_turn=True)
        cost = self._used.cost_usd
        if self._max_cost is not None and cost is not None and cost >= self._max_cost:
            return BudgetExceededError("max_cost_usd", self._max_cost, round(cost, 6), scope=self._scope,
                                       before_turn=True)
        return None


@dataclass(frozen=True)
class ConversationBudget:
    """The cost and output-token limits of a conversation played by several sessions one after another (a chat
    going on in a new agent process after its process was stopped), with what the earlier sessions used: the
    budget covers the whole conversation, each new session gets what is left."""

    max_cost_usd: float | None = None
    max_output_tokens: int | None = None
    past: Usage = field(default_factory=Usage)
    """The usage of the conversation's earlier sessions."""

    def after(self, usage: Usage) -> ConversationBudget:
        """This budget once a session that used `usage` is left behind."""
        return replace(self, past=self.past + usage)

    def left(self) -> dict[str, float | int] | None:
        """The session-wide limits a new session of the conversation gets (each reduced by what the earlier
        sessions used), as spec fields; None when one is used up already."""
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

    def total(self, budget: str, used: float) -> float:
        """A session's figure for `budget` (`max_cost_usd`, `max_output_tokens`; any other as it is) as the whole
        conversation's."""
        if budget == "max_cost_usd":
            return round(used + (self.past.cost_usd or 0.0), 6)
        if budget == "max_output_tokens":
            return used + self.past.output_tokens
        return used
