"""What the runner adds to a turn (and to a plain run) whatever the provider: structured output parsed and
validated, budgets enforced across a session's turns, steering into a live turn.

Layer: tests. Knows the public run and session APIs; the providers are `test_session`'s.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

import anyio
import pytest

from harness_core import AgentRunSpec, ConversationBudget, Usage, open_run, open_session, run
from harness_core.capabilities import ProviderInfo
from harness_core.errors import BudgetExceededError, UnsupportedFeatureError
from harness_core.events import HarnessResult, Notice, RunStatus
from harness_core.plugins import PluginHost
from harness_core.provider import RunContext
from harness_core.testing.scripted import ScriptedOptions
from tests.run.test_session import Echo, Limited, NotLive, host_with, play_turn, settings

pytestmark = pytest.mark.anyio

_DEADLINE = 20.0
_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"answer": {"type": "string"}, "count": {"type": "integer"}},
    "required": ["answer", "count"],
    "additionalProperties": False,
}


# --- structured output -------------------------------------------------------------------------------------

@pytest.mark.parametrize("answer", ['{"answer": "yes", "count": 3}', '```json\n{"answer": "yes", "count": 3}\n```'])
async def test_a_valid_answer_is_the_structured_output(answer: str, runs_dir: Path) -> None:
    result = await run(AgentRunSpec(prompt=answer, output_schema=_SCHEMA), "echo", host=host_with(Echo),
                       runs_dir=runs_dir)
    assert result.status is RunStatus.SUCCESS, result.error
    assert result.structured_output == {"answer": "yes", "count": 3}
    assert result.final_text == answer, "the text stays as the agent wrote it"


@pytest.mark.parametrize(("answer", "problem"), [
    ("Sure! The answer is yes.", "not JSON"),
    ('{"answer": "yes"}', "'count' is a required property"),
    ('{"answer": "yes", "count": "three"}', "'three' is not of type 'integer' at count"),
])
async def test_an_answer_that_does_not_validate_fails_keeping_its_text(answer: str, problem: str,
                                                                        runs_dir: Path) -> None:
    result = await run(AgentRunSpec(prompt=answer, output_schema=_SCHEMA), "echo", host=host_with(Echo),
                       runs_dir=runs_dir)
    assert result.status is RunStatus.FAILED
    error = result.error
    assert error is not None and error.code == "invalid_structured_output"
    assert problem in error.details["problem"], error.details
    assert error.details["text"] == answer, "the answer's text is kept in the error"
    assert result.final_text == answer and result.structured_output is None
    assert "loosen the schema" in error.message, "the error says what to do next"


class Parsed(Echo):
    """Gets the value from its CLI already parsed (the prompt's JSON), with no final text."""

    info: ClassVar[ProviderInfo] = Echo.info.model_copy(update={"name": "parsed"})

    async def run(self, spec: AgentRunSpec, options: ScriptedOptions, ctx: RunContext) -> HarnessResult:
        return HarnessResult(status=RunStatus.SUCCESS, structured_output=json.loads(spec.prompt))


@pytest.mark.parametrize(("value", "problem"), [
    ('{"answer": "yes", "count": 3}', None),
    ('{"answer": 1, "count": 3}', "1 is not of type 'string' at answer"),
    ("null", "the answer is empty"),
])
async def test_a_value_the_provider_parsed_is_validated_too(value: str, problem: str | None, runs_dir: Path) -> None:
    result = await run(AgentRunSpec(prompt=value, output_schema=_SCHEMA), "parsed", host=host_with(Parsed),
                       runs_dir=runs_dir)
    if problem is None:
        assert result.status is RunStatus.SUCCESS and result.structured_output == json.loads(value)
    else:
        assert result.status is RunStatus.FAILED and result.error is not None
        assert result.error.code == "invalid_structured_output" and problem in result.error.details["problem"]


async def test_an_output_schema_override_applies_to_its_turn_only(runs_dir: Path) -> None:
    async with open_session(settings(), "echo", host=host_with(Echo), runs_dir=runs_dir) as session:
        shaped = await session.run('{"answer": "yes", "count": 1}', output_schema=_SCHEMA)
        free = await session.run("no schema now: any text will do")
    assert shaped.status is RunStatus.SUCCESS and shaped.structured_output == {"answer": "yes", "count": 1}
    assert free.status is RunStatus.SUCCESS and free.structured_output is None


async def test_a_failed_run_is_not_parsed(host: PluginHost, runs_dir: Path) -> None:
    spec = AgentRunSpec(prompt="x", output_schema=_SCHEMA, provider_options={"scenario": "fail_500"})
    result = await run(spec, "scripted", host=host, runs_dir=runs_dir)
    assert result.error is not None and result.error.code == "model_error", "the run's own error is kept"


# --- budgets -----------------------------------------------------------------------------------------------

async def test_max_output_tokens_exceeded_fails_the_run_naming_limit_and_use(host: PluginHost, runs_dir: Path) -> None:
    spec = AgentRunSpec(prompt="x", max_output_tokens=10, provider_options={"scenario": "say"})
    with anyio.fail_after(_DEADLINE):
        async with open_run(spec, "scripted", host=host, runs_dir=runs_dir) as live:
            events = [event async for event in live]
    result = live.result
    assert result is not None and result.status is RunStatus.FAILED
    error = result.error
    assert error is not None and error.code == "budget_exceeded"
    assert (error.details["budget"], error.details["limit"], error.details["used"]) == ("max_output_tokens", 10, 20)
    assert "max_output_tokens = 10" in error.message and "used 20" in error.message
    assert "--max-output-tokens" in error.message, "the error says how to allow more"
    assert result.final_text == "Hello from the scripted model.", "what the agent answered is kept"
    assert [e.error.code for e in events if e.type == "error"] == ["budget_exceeded"]


async def test_max_output_tokens_covers_a_sessions_turns(host: PluginHost, runs_dir: Path) -> None:
    async with open_session(settings(max_output_tokens=50), "scripted", host=host, runs_dir=runs_dir) as session:
        first, second, third = [await session.run(f"turn {i}") for i in range(3)]  # 20 output tokens a turn
        with pytest.raises(BudgetExceededError, match="max_output_tokens"):
            await session.run("nothing is left")
        assert session.turns == 3
    assert first.status is second.status is RunStatus.SUCCESS
    assert third.status is RunStatus.FAILED and third.error is not None
    assert (third.error.details["used"], third.error.details["scope"]) == (60, "session")


async def test_max_cost_usd_covers_a_sessions_turns(host: PluginHost, runs_dir: Path) -> None:
    spec = settings(max_cost_usd=0.5, options={"cost_usd": 0.3})
    async with open_session(spec, "scripted", host=host, runs_dir=runs_dir) as session:
        _, under = await play_turn(session, "one")
        _, over = await play_turn(session, "two")
        with pytest.raises(BudgetExceededError) as refused:
            await session.run("three")
        assert session.turns == 2, "the third turn never started"
        assert session.usage.cost_usd == pytest.approx(0.6)
    assert under.result.status is RunStatus.SUCCESS and under.result.usage.cost_usd == pytest.approx(0.3)
    assert over.result.status is RunStatus.FAILED and over.result.error is not None
    details = over.result.error.details
    assert (details["budget"], details["limit"], details["used"]) == ("max_cost_usd", 0.5, 0.6)
    assert over.result.usage.cost_usd == pytest.approx(0.3), "the turn's own usage is kept"
    assert refused.value.details["used"] == pytest.approx(0.6) and "USD" in str(refused.value)


async def test_a_cost_budget_needs_a_provider_that_reports_cost(runs_dir: Path) -> None:
    host = host_with(Limited)
    with pytest.raises(UnsupportedFeatureError, match="'cost'"):
        async with open_session(settings(max_cost_usd=1.0), "limited", host=host, runs_dir=runs_dir):
            pytest.fail("a session with a cost budget opened on a provider that reports no cost")


# --- steering ----------------------------------------------------------------------------------------------

async def test_steer_reaches_the_live_turn(host: PluginHost, runs_dir: Path) -> None:
    async with open_session(settings("slow_text"), "scripted", host=host, runs_dir=runs_dir) as session:
        with anyio.fail_after(_DEADLINE):
            async with session.turn("slow") as live:
                steered = []
                notices = []
                async for event in live:
                    if event.type == "text_delta" and not steered:
                        steered.append(await live.steer("focus on the tests"))
                    elif isinstance(event, Notice):
                        notices.append(event)
                        live.interrupt()
        assert await live.steer("too late") is False, "nothing is sent once the turn is over"
    assert steered == [True]
    assert [(n.code, n.message) for n in notices] == [("steered", "focus on the tests")]


async def test_steer_is_refused_where_there_is_no_live_turn(host: PluginHost, runs_dir: Path) -> None:
    spec = AgentRunSpec(prompt="x", provider_options={"scenario": "say"})
    async with open_run(spec, "scripted", host=host, runs_dir=runs_dir) as live:
        with pytest.raises(UnsupportedFeatureError) as caught:
            await live.steer("more")
        await live.wait()
    assert "'steer'" in str(caught.value) and "open_session" in str(caught.value)
    host = host_with(NotLive)
    async with open_session(settings(), "not-live", host=host, runs_dir=runs_dir) as session, session.turn("x") as turn:
        with pytest.raises(UnsupportedFeatureError, match="'steer'"):
            await turn.steer("more")
        await turn.wait()


def test_a_conversation_budget_gives_each_new_session_what_is_left() -> None:
    """A conversation played by several sessions in turn (a chat going on in a new agent process): each new
    session's limits are the conversation's minus what the earlier ones used, and a spent limit leaves nothing."""
    budget = ConversationBudget(max_cost_usd=1.0, max_output_tokens=50)
    assert budget.left() == {"max_cost_usd": 1.0, "max_output_tokens": 50}
    later = budget.after(Usage(output_tokens=20, cost_usd=0.25)).after(Usage(output_tokens=10, cost_usd=0.5))
    assert later.left() == {"max_cost_usd": 0.25, "max_output_tokens": 20}
    assert later.total("max_output_tokens", 15) == 45 and later.total("max_cost_usd", 0.1) == 0.85
    assert later.total("max_turns", 3) == 3
    assert later.after(Usage(output_tokens=20)).left() is None
    assert ConversationBudget(max_output_tokens=5).after(Usage(cost_usd=9.0)).left() == {"max_output_tokens": 5}
