"""A run object driven by an owner other than `open_run` (as a session will: one probed provider, one run per
turn), and the owner's side of a run: `drive` once, `aclose` when the consumer is done."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, ClassVar

import anyio
import pytest

import harness_core.testing.scripted as scripted
from harness_core import AgentRunSpec, Done, LiveRun, RunStarted, RunStatus, open_run
from harness_core._run import api
from harness_core._run.api import prepare
from harness_core._run.run_files import RunLogs
from harness_core.hookspecs import hookimpl
from harness_core.plugins import PluginHost
from harness_core.store import read_events

pytestmark = pytest.mark.anyio


class _Counted(scripted.ScriptedProvider):
    """Counts what the owner did with one instance: probed it once, ran it once per turn."""

    probes: ClassVar[int] = 0
    runs: ClassVar[list[int]] = []

    async def probe(self, options: Any) -> Any:
        type(self).probes += 1
        return await super().probe(options)

    async def run(self, spec: AgentRunSpec, options: Any, ctx: Any) -> Any:
        type(self).runs.append(id(self))
        return await super().run(spec, options, ctx)


class _Plugin:
    @hookimpl
    def harness_register_providers(self, register: Any) -> None:
        register(_Counted)


def _spec(scenario: str) -> AgentRunSpec:
    return AgentRunSpec(prompt="turn", provider_options={"scenario": scenario})


async def test_an_owner_plays_several_runs_with_one_probed_provider(runs_dir: Path) -> None:
    host = PluginHost.create(entry_points=False, plugins=[("counted", _Plugin())])
    _Counted.probes, _Counted.runs = 0, []
    probed = await prepare(_spec("say"), "scripted", host)
    played: list[tuple[LiveRun, list[Any]]] = []
    with anyio.fail_after(20):
        async with anyio.create_task_group() as tg:
            for turn in range(3):
                run_id = f"turn-{turn}"
                live = LiveRun(_spec("say"), probed, host=host, run_id=run_id, logs=RunLogs.open(runs_dir, run_id))
                tg.start_soon(live.drive)
                played.append((live, [event async for event in live]))
                await live.aclose()
    assert _Counted.probes == 1 and _Counted.runs == [id(probed.instance)] * 3
    for turn, (live, events) in enumerate(played):
        assert live.run_id == f"turn-{turn}" and live.result is not None and live.result.status is RunStatus.SUCCESS
        assert isinstance(events[0], RunStarted) and isinstance(events[-1], Done)
        assert {e.run_id for e in events} == {live.run_id}
        assert [e.seq for e in events] == list(range(len(events)))
        assert live.log_path == runs_dir / f"{live.run_id}.jsonl"
        assert list(read_events(live.log_path)) == events
    with pytest.raises(RuntimeError, match="already driven"):
        await played[0][0].drive()


async def test_an_owner_closing_a_run_early_interrupts_it_and_completes_its_log(host: PluginHost,
                                                                               runs_dir: Path) -> None:
    probed = await prepare(_spec("slow_text"), "scripted", host)
    live = LiveRun(_spec("slow_text"), probed, host=host, run_id="early", logs=RunLogs.open(runs_dir, "early"),
                   interrupt_grace=5.0)
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(live.drive)
            async for event in live:
                if event.type == "text_delta":
                    break
            await live.aclose()
            assert live.finished.is_set()  # aclose returns once the run is done, not before
    assert live.result is not None and live.result.status is RunStatus.INTERRUPTED
    error = live.result.error  # the provider saw the interrupt and stopped cleanly, within the grace
    assert error is not None and error.code == "interrupted" and error.details["stopped_by"] == "provider"
    logged = list(read_events(live.log_path))  # type: ignore[arg-type]
    assert isinstance(logged[-1], Done) and [e.seq for e in logged] == list(range(len(logged)))


@pytest.mark.parametrize("record_wire", [False, True])
async def test_a_run_stopped_before_its_first_event_leaves_no_log(host: PluginHost, runs_dir: Path,
                                                                 monkeypatch: pytest.MonkeyPatch,
                                                                 record_wire: bool) -> None:
    """Ctrl-C while the Python tools' server starts (seconds, after the log was created): no empty log listed
    as a lost run of provider `?` (trial 27, problem 4), nor an empty wire log."""

    @asynccontextmanager
    async def starting_forever(server: Any, spec: AgentRunSpec, transport: Any) -> AsyncIterator[AgentRunSpec]:
        await anyio.sleep_forever()
        yield spec

    monkeypatch.setattr(api, "served", starting_forever)
    with anyio.move_on_after(0.2) as scope:
        async with open_run(_spec("say"), "scripted", host=host, runs_dir=runs_dir, record_wire=record_wire):
            pytest.fail("the run should not have started")
    assert scope.cancelled_caught
    assert sorted(p.name for p in runs_dir.iterdir()) == []  # noqa: ASYNC240 - a one-off check


async def test_a_log_given_a_line_is_kept_even_if_the_run_never_ends_it(runs_dir: Path) -> None:
    logs = RunLogs.open(runs_dir, "begun")
    assert logs.events is not None
    logs.events.write_line(b'{"type": "run_started"}')
    logs.close()
    assert (runs_dir / "begun.jsonl").read_bytes() == b'{"type": "run_started"}\n'
