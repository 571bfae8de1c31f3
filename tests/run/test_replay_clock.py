"""A provider that times its agent's tools itself (a stream-json agent whose wire has no durations) replays to the
same events: `RunContext.clock()` is recorded in the wire log and a replay answers it from there, so durations
computed with it come back exactly; the replay never depends on how fast it runs.

Real processes: the `timed` provider spawns a Python child through `ctx.spawn` that prints stream-json lines (a tool
call, a pause, its result, the answer).
"""

from __future__ import annotations

import json
import sys
import textwrap
import time
from pathlib import Path
from typing import ClassVar

import anyio
import pytest

from harness_core import (
    AgentRunSpec,
    HarnessResult,
    HarnessToolDetails,
    RunStatus,
    TextDelta,
    ToolKind,
    ToolResult,
    ToolStatus,
    ToolUse,
    load_wire,
    open_replay,
    open_run,
)
from harness_core.plugins import PluginHost
from harness_core.provider import Provider, ProviderInfo, ProviderOptions, RunContext, hookimpl
from harness_core.store import read_events
from harness_core.testing.contract import without_wall_clock

_DEADLINE = 60.0

AGENT = textwrap.dedent("""
    import json, time
    def say(**line):
        print(json.dumps(line), flush=True)
    say(type="tool_use", id="t1", name="shell", input={"command": "sleep 0.2"})
    time.sleep(0.2)
    say(type="tool_result", id="t1", output="")
    say(type="text", text="done")
""")


class TimedOptions(ProviderOptions):
    own_clock: bool = False
    """Time tools with `time.monotonic()` instead of `ctx.clock()` (what a replay cannot reproduce)."""


class TimedProvider(Provider[TimedOptions]):
    """Maps a stream-json agent's lines; its wire has no durations, so it measures each tool itself."""

    info: ClassVar[ProviderInfo] = ProviderInfo(name="timed", version="1.0", capabilities=frozenset())

    async def run(self, spec: AgentRunSpec, options: TimedOptions, ctx: RunContext) -> HarnessResult:
        clock = time.monotonic if options.own_clock else ctx.clock
        started: dict[str, float] = {}
        text = ""
        async with ctx.spawn([sys.executable, "-c", AGENT], stdin=False) as child:
            async for raw in child.lines():
                line = json.loads(raw)
                if line["type"] == "tool_use":
                    started[line["id"]] = clock()
                    display = HarnessToolDetails(kind=ToolKind.SHELL, title="Running command",
                                                 command=line["input"]["command"])
                    await ctx.emit(ToolUse(tool_id=line["id"], name=line["name"], display=display))
                elif line["type"] == "tool_result":
                    took = round((clock() - started.pop(line["id"])) * 1000)
                    display = HarnessToolDetails(kind=ToolKind.SHELL, title="Running command",
                                                 status=ToolStatus.COMPLETED, duration_ms=took)
                    await ctx.emit(ToolResult(tool_id=line["id"], name="shell", output=line["output"],
                                              display=display))
                elif line["type"] == "text":
                    text += line["text"]
                    await ctx.emit(TextDelta(text=line["text"]))
            await child.wait()
        return HarnessResult(status=RunStatus.SUCCESS, final_text=text)


@hookimpl
def harness_register_providers(register):  # type: ignore[no-untyped-def]
    register(TimedProvider)


@pytest.fixture
def host() -> PluginHost:
    return PluginHost.create(plugins=[("timed", sys.modules[__name__])])


async def _record(tmp_path: Path, host: PluginHost, *, own_clock: bool) -> Path:
    spec = AgentRunSpec(prompt="time a tool", cwd=tmp_path, provider_options={"own_clock": own_clock})
    with anyio.fail_after(_DEADLINE):
        async with open_run(spec, "timed", host=host, runs_dir=tmp_path / "runs", record_wire=True) as live:
            result = await live.wait()
    assert result.status is RunStatus.SUCCESS, result.error
    assert live.log_path is not None
    return live.log_path


async def _replayed(log: Path, host: PluginHost) -> list[object]:
    wire = load_wire(log.with_name(log.name.removesuffix(".jsonl") + ".wire.jsonl"))
    with anyio.fail_after(_DEADLINE):
        async with open_replay(wire, host=host) as live:
            events = [event async for event in live]
    assert not live.warnings, live.warnings
    return events


@pytest.mark.anyio
async def test_durations_timed_with_the_run_clock_replay_exactly(tmp_path: Path, host: PluginHost) -> None:
    log = await _record(tmp_path, host, own_clock=False)
    recorded = list(read_events(log))
    took = [e.display.duration_ms for e in recorded if isinstance(e, ToolResult)]
    assert took and took[0] is not None and took[0] >= 150, took  # the agent's pause, as the run timed it
    replayed = await _replayed(log, host)
    assert without_wall_clock(replayed) == without_wall_clock(recorded)  # type: ignore[arg-type]


@pytest.mark.anyio
async def test_durations_timed_with_the_providers_own_clock_differ_on_replay(tmp_path: Path,
                                                                            host: PluginHost) -> None:
    """What `ctx.clock()` is for: a replay does not wait the recorded pauses, so a duration the provider measured
    with its own clock comes out near 0 — the recorded run's 200 ms is lost."""
    log = await _record(tmp_path, host, own_clock=True)
    recorded = [e for e in read_events(log) if isinstance(e, ToolResult)]
    replayed = [e for e in await _replayed(log, host) if isinstance(e, ToolResult)]
    assert recorded[0].display.duration_ms is not None and recorded[0].display.duration_ms >= 150
    assert replayed[0].display.duration_ms is not None and replayed[0].display.duration_ms < 150
