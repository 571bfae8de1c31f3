"""`harness replay`, the cases a review asked for: an interrupted run replays its interrupt instead of hanging;
a deadline ends a stuck replay; a recording with no child is refused unless live; no real child starts during a
replay; hidden options; a torn wire log; renamed golden pairs; one WireLog replayed twice; observers; formats.
The provider with a real child and the helpers are `tests/run/test_replay.py`'s."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

import anyio
import pytest

from harness_core import (
    AgentRunSpec,
    ApprovalDecision,
    HarnessEvent,
    HarnessResult,
    InvalidSpecError,
    RunStatus,
    TextDelta,
    load_wire,
    open_replay,
    open_run,
)
from harness_core.plugins import PluginHost
from harness_core.provider import Provider, ProviderInfo, ProviderOptions, RunContext, hookimpl
from harness_core.store import wire_path
from harness_core.testing.contract import without_wall_clock
from tests.run.test_replay import _harness, _record, _replayed, plugin, wired_host

_DEADLINE = 60.0


__all__ = ["wired_host"]  # the fixture, shared with tests.run.test_replay


async def _record_interrupted(host: PluginHost, runs_dir: Path) -> tuple[list[HarnessEvent], Path]:
    spec = AgentRunSpec(prompt="go", provider_options={"mode": "slow"})
    with anyio.fail_after(_DEADLINE):
        async with open_run(spec, "wired", host=host, runs_dir=runs_dir, record_wire=True) as live:
            events = []
            async for event in live:
                events.append(event)
                if event.type == "notice" and event.code == "working":
                    live.interrupt()
    return events, wire_path(runs_dir, live.run_id)


@pytest.mark.anyio
async def test_an_interrupted_run_replays_its_interrupt_instead_of_hanging(wired_host: PluginHost,
                                                                           runs_dir: Path) -> None:
    recorded, wire = await _record_interrupted(wired_host, runs_dir)
    assert recorded[-1].type == "done" and recorded[-1].result.status is RunStatus.INTERRUPTED
    working = next(e for e in recorded if e.type == "notice" and e.code == "working")
    records = [json.loads(line) for line in wire.read_text().splitlines()]
    assert [(r["how"], r["after_seq"]) for r in records if r["dir"] == "interrupt"] == [("interrupt", working.seq)]
    replayed, _ = await _replayed(wire, wired_host)
    assert without_wall_clock(replayed) == without_wall_clock(recorded)


@pytest.mark.anyio
async def test_a_replay_that_waits_for_what_the_recording_lacks_ends_at_its_deadline(wired_host: PluginHost,
                                                                                     runs_dir: Path) -> None:
    _, wire = await _record_interrupted(wired_host, runs_dir)
    kept = [line for line in wire.read_text().splitlines() if json.loads(line)["dir"] != "interrupt"]
    wire.write_text("\n".join(kept) + "\n")  # as recorded before interrupts were: the child waits for its line
    with anyio.fail_after(_DEADLINE):
        async with open_replay(load_wire(wire), host=wired_host, deadline=1.0) as run:
            events = [event async for event in run]
    assert run.timed_out and events[-1].type == "done" and events[-1].result.status is RunStatus.INTERRUPTED
    assert any("did not end within 1 s" in w for w in run.warnings)


def test_cli_replay_times_out_with_exit_1_and_says_so(tmp_path: Path) -> None:
    recorded = _harness(tmp_path, "run", "-p", "wired", "go", "-o", "mode=slow", "--record-wire", "--idle-timeout",
                        "1", "--json")
    assert recorded.returncode != 0, recorded.stderr  # the idle timeout ends it: no interrupt on the wire
    wire = next((tmp_path / "runs").glob("*.wire.jsonl"))
    lines = [json.loads(line) for line in wire.read_text().splitlines()]
    header = lines[0]
    header["spec"]["idle_timeout"] = None  # replayed without it, only the deadline ends it
    wire.write_text("".join(json.dumps(r) + "\n" for r in [header, *lines[1:]]))
    shown = _harness(tmp_path, "replay", str(wire), "--timeout", "1", "--json")
    assert shown.returncode == 1, shown.stderr
    assert "did not end within 1 s" in shown.stderr and "--timeout" in shown.stderr


class SilentProvider(Provider[ProviderOptions]):
    """Reaches its agent without `ctx.spawn` (as an HTTP provider does): nothing on the wire to play."""

    info: ClassVar[ProviderInfo] = ProviderInfo(name="silent", version="1.0")

    async def run(self, spec: AgentRunSpec, options: ProviderOptions, ctx: RunContext) -> HarnessResult:
        await ctx.emit(TextDelta(text="from the agent, for real"))
        return HarnessResult(status=RunStatus.SUCCESS, final_text="real")


class more_plugins:
    @hookimpl
    def harness_register_providers(self, register: Any) -> None:
        register(SilentProvider)


@pytest.mark.anyio
async def test_a_recording_without_a_child_is_refused_unless_live(runs_dir: Path) -> None:
    host = PluginHost.create(entry_points=False, plugins=[("silent", more_plugins())])
    with anyio.fail_after(_DEADLINE):
        async with open_run(AgentRunSpec(prompt="go"), "silent", host=host, runs_dir=runs_dir,
                            record_wire=True) as live:
            recorded = [event async for event in live]
    wire = wire_path(runs_dir, live.run_id)
    with pytest.raises(InvalidSpecError, match=r"has no agent process to replay.*without RunContext.spawn.*--live"):
        async with open_replay(wire, host=host):
            pass
    with anyio.fail_after(_DEADLINE):
        async with open_replay(wire, host=host, live=True) as run:
            replayed = [event async for event in run]
    assert without_wall_clock(replayed) == without_wall_clock(recorded)
    assert any("ran for real (--live)" in w for w in run.warnings)


@pytest.mark.anyio
async def test_a_real_child_cannot_start_during_a_replay(wired_host: PluginHost, runs_dir: Path) -> None:
    recorded, wire = await _record(wired_host, runs_dir, provider_options={"mode": "direct"})
    assert recorded[-1].result.status is RunStatus.SUCCESS  # recorded: the direct child ran
    replayed, _ = await _replayed(wire, wired_host)
    error = replayed[-1].result.error
    assert error is not None and error.code == "spawn_failed" and "is a replay of" in error.message
    from harness_core.transport.process import REPLAYING
    assert REPLAYING.get() is None  # only the replay's own tasks had it set


@pytest.mark.anyio
async def test_options_the_recording_hid_are_dropped_or_asked_for(wired_host: PluginHost, runs_dir: Path) -> None:
    recorded, wire = await _record(wired_host, runs_dir, provider_options={
        "api_token": "tok-abcdefghijklmnop", "flags": ["--api-key", "sk-abcdefghijklmnop1234", "--fast"]})
    header = json.loads(wire.read_text().splitlines()[0])
    assert header["spec"]["provider_options"]["api_token"] == "***"
    replayed, _ = await _replayed(wire, wired_host)  # hidden values dropped: their defaults apply
    assert without_wall_clock(replayed) == without_wall_clock(recorded)
    header["spec"]["provider_options"] = {"mode": ["not", "a", "mode"], "api_token": "***"}  # still refused
    lines = wire.read_text().splitlines()
    wire.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    with pytest.raises(InvalidSpecError) as refused:
        async with open_replay(wire, host=wired_host):
            pass
    message = str(refused.value)
    assert "the recording hid option(s) api_token" in message and "harness replay --option KEY=VALUE" in message
    assert "-o KEY=VALUE)" not in message


@pytest.mark.anyio
async def test_a_torn_wire_log_and_a_bad_run_log_line_still_replay(wired_host: PluginHost, runs_dir: Path) -> None:
    recorded, wire = await _record(wired_host, runs_dir)
    with wire.open("a") as fh:
        fh.write('{"dir": "in", "child": 0, "li')  # the worker was SIGKILLed mid-line
    log = wire.with_name(wire.name.replace(".wire", ""))
    lines = log.read_text().splitlines(keepends=True)
    log.write_text("".join([lines[0], "not an event\n", *lines[1:]]))
    replayed, recording = await _replayed(wire, wired_host)
    assert without_wall_clock(replayed) == without_wall_clock(recorded)
    assert any("torn last line" in w for w in recording.warnings)
    assert any("skipped 1 unreadable line(s) of the run log" in w for w in recording.warnings)


@pytest.mark.anyio
async def test_a_renamed_golden_pair_finds_its_run_log_by_the_wire_files_stem(wired_host: PluginHost,
                                                                             runs_dir: Path,
                                                                             tmp_path: Path) -> None:
    recorded, wire = await _record(wired_host, runs_dir, provider_options={"mode": "approve"},
                                   approval="on-request", approver=lambda _request: ApprovalDecision.APPROVE)
    golden = tmp_path / "golden"
    golden.mkdir()
    records = [line for line in wire.read_text().splitlines() if json.loads(line)["dir"] != "approval"]
    (golden / "run.wire.jsonl").write_text("\n".join(records) + "\n")  # only the run log can decide now
    wire.with_name(wire.name.replace(".wire", "")).rename(golden / "run.jsonl")
    replayed, recording = await _replayed(golden / "run.wire.jsonl", wired_host)
    assert without_wall_clock(replayed) == without_wall_clock(recorded) and recording.warnings == []


@pytest.mark.anyio
async def test_one_wire_log_replays_twice_alike(wired_host: PluginHost, runs_dir: Path, tmp_path: Path) -> None:
    side = tmp_path / "side.txt"
    side.write_text("read once, replayed twice")
    recorded, wire = await _record(wired_host, runs_dir, provider_options={"side_file": str(side), "mode": "approve"},
                                   approval="on-request", approver=lambda _request: ApprovalDecision.DENY)
    recording = load_wire(wire)
    results = []
    for _ in range(2):
        with anyio.fail_after(_DEADLINE):
            async with open_replay(recording, host=wired_host) as run:
                results.append(([event async for event in run], run.warnings))
    assert without_wall_clock(results[0][0]) == without_wall_clock(results[1][0]) == without_wall_clock(recorded)
    assert results[0][1] == results[1][1] == []


class observer:
    seen: ClassVar[list[str]] = []

    @hookimpl
    def harness_on_event(self, event: HarnessEvent) -> None:
        observer.seen.append(event.type)


@pytest.mark.anyio
async def test_a_replay_is_not_shown_to_event_observers(runs_dir: Path) -> None:
    host = PluginHost.create(entry_points=False, plugins=[("wired", plugin()), ("observer", observer())])
    observer.seen.clear()
    recorded, wire = await _record(host, runs_dir)
    assert observer.seen == [e.type for e in recorded]  # a real run: observed
    observer.seen.clear()
    replayed, _ = await _replayed(wire, host)
    assert replayed[-1].type == "done" and observer.seen == []


@pytest.mark.anyio
async def test_a_newer_format_is_refused_and_another_provider_version_warned(wired_host: PluginHost,
                                                                             runs_dir: Path) -> None:
    _, wire = await _record(wired_host, runs_dir)
    lines = wire.read_text().splitlines()
    header = json.loads(lines[0])
    wire.write_text("\n".join([json.dumps({**header, "format": 3}), *lines[1:]]) + "\n")
    with pytest.raises(InvalidSpecError, match=r"recorded by a newer Harness \(format 3\); upgrade harness-core"):
        load_wire(wire)
    wire.write_text("\n".join([json.dumps({**header, "provider_version": "0.9"}), *lines[1:]]) + "\n")
    with anyio.fail_after(_DEADLINE):
        async with open_replay(wire, host=wired_host) as run:
            [event async for event in run]
    assert run.warnings == ["recorded with wired 0.9; replaying with 1.0, so the events may differ"]
