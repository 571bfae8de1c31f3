"""A run's stream is in `seq` order even when several of the provider's tasks emit at once and the consumer is
slower (a reader and, say, a request handler, each held back by backpressure): nobody overtakes a waiting one."""

from __future__ import annotations

import sys
from typing import Any, ClassVar

import anyio
import anyio.lowlevel
import pytest

import harness_core.testing.scripted as scripted
from harness_core import AgentRunSpec, HarnessResult, Notice, RunStatus, TextDelta, hookimpl, open_run
from harness_core.plugins import PluginHost
from harness_core.provider import ProviderInfo


class TwoTasks(scripted.ScriptedProvider):
    info: ClassVar[ProviderInfo] = ProviderInfo(name="two-tasks", version="1",
                                                capabilities=scripted.ScriptedProvider.info.capabilities)

    async def run(self, spec: Any, options: Any, ctx: Any) -> HarnessResult:
        async def reader() -> None:
            for i in range(3000):
                await ctx.emit(TextDelta(text=f"d{i} "))
                if i % 7 == 0:
                    await anyio.lowlevel.checkpoint()

        async def side() -> None:
            for i in range(300):
                await anyio.lowlevel.checkpoint()
                await ctx.emit(Notice(level="info", code="side", message=str(i)))

        async with anyio.create_task_group() as tg:
            tg.start_soon(reader)
            tg.start_soon(side)
        return HarnessResult(status=RunStatus.SUCCESS, final_text="")


@hookimpl
def harness_register_providers(register: Any) -> None:
    register(TwoTasks)


@pytest.mark.parametrize("callback", [False, True], ids=["stream", "on_event"])
def test_events_of_two_emitting_tasks_reach_a_slow_consumer_in_seq_order(callback: bool) -> None:
    seen_by_callback: list[int] = []

    async def main() -> list[int]:
        host = PluginHost.create(entry_points=False, plugins=[("two-tasks", sys.modules[__name__])])
        seqs: list[int] = []
        on_event = (lambda event: seen_by_callback.append(event.seq)) if callback else None
        async with open_run(AgentRunSpec(prompt="x"), "two-tasks", host=host, run_log=False, buffer=16,
                            on_event=on_event) as live:
            async for event in live:
                seqs.append(event.seq)
                if len(seqs) % 5 == 0:
                    await anyio.lowlevel.checkpoint()  # a consumer that awaits something now and then
        assert live.result is not None and live.result.status is RunStatus.SUCCESS
        return seqs

    seqs = anyio.run(main)
    assert seqs == list(range(len(seqs))) and len(seqs) > 3300
    if callback:
        assert seen_by_callback == seqs
