"""The recording side of the wire log (`ProviderContext`, `ChildProcess(on_record=...)`): what a run writes to its
`<run_id>.wire.jsonl` so a replay can play it back — interrupts, stderr a line at a time, scrubbed side inputs,
child indexes and approval resolutions.

Real processes throughout: the `rec` provider below, written on `harness_core.provider` as a third party would,
spawns real Python children through `ctx.spawn`; every assertion reads the wire file the run wrote.
"""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from typing import Any, ClassVar

import anyio
import pytest

from harness_core import (
    AgentRunSpec,
    ApprovalDecision,
    ApprovalRequested,
    HarnessEvent,
    HarnessResult,
    HarnessToolDetails,
    Notice,
    RunStatus,
    TextDelta,
    ToolKind,
    open_run,
)
from harness_core._run.wirelog import RECORDS, WIRE_FORMAT
from harness_core.plugins import PluginHost
from harness_core.provider import Capability, Provider, ProviderInfo, ProviderOptions, RunContext, hookimpl
from harness_core.store import wire_path

_DEADLINE = 60.0
SECRET = 'pa"ss\\word-0123456789'  # JSON-special characters: escaped once in a line, twice inside a record

WAIT_CHILD = textwrap.dedent("""
    import sys
    print("ready", flush=True)
    sys.stdin.read()  # until the provider closes our input (or we are stopped)
""")


class RecOptions(ProviderOptions):
    mode: str = "child"
    code: str = "pass"
    side_file: str | None = None


class RecProvider(Provider[RecOptions]):
    """Spawns real children (`code`) and reports their stdout; or waits for an interrupt, reads a side input or asks
    for an approval (`mode`)."""

    info: ClassVar[ProviderInfo] = ProviderInfo(name="rec", version="1.0",
                                                capabilities=frozenset({Capability.APPROVALS}))

    async def run(self, spec: AgentRunSpec, options: RecOptions, ctx: RunContext) -> HarnessResult:
        if options.mode in ("interrupt", "ignore"):
            return await self._until_interrupted(options.mode, ctx)
        if options.mode == "side":
            assert options.side_file is not None
            side = Path(options.side_file)
            data = await ctx.read_side_input("side", side.read_bytes)
            return HarnessResult(status=RunStatus.SUCCESS, final_text=str(len(data or b"")))
        if options.mode == "approve":
            display = HarnessToolDetails(kind=ToolKind.SHELL, title="Running command", command="touch x")
            decision = await ctx.request_approval(ApprovalRequested(request_id="ask-1", display=display))
            return HarnessResult(status=RunStatus.SUCCESS, final_text=decision.value)
        count = 2 if options.mode == "pair" else 1
        async with anyio.create_task_group() as tg:
            for _ in range(count):
                tg.start_soon(self._child, options.code, ctx)
        return HarnessResult(status=RunStatus.SUCCESS, final_text="done")

    async def _child(self, code: str, ctx: RunContext) -> None:
        async with ctx.spawn([sys.executable, "-c", code]) as child:
            async for raw in child.lines():
                assert isinstance(raw, bytes)
                await ctx.emit(TextDelta(text=raw.decode()))
            await child.wait()

    async def _until_interrupted(self, mode: str, ctx: RunContext) -> HarnessResult:
        async with ctx.spawn([sys.executable, "-c", WAIT_CHILD]) as child:
            lines = child.lines()
            await ctx.emit(TextDelta(text=bytes(await lines.__anext__()).decode()))  # type: ignore[arg-type]
            await ctx.interrupt_requested.wait()
            if mode == "ignore":  # a provider that does not honour the interrupt: the runner stops it
                await ctx.emit(Notice(level="info", code="ignoring", message="still going"))
                await anyio.sleep_forever()
            await child.close_stdin()
            await child.wait()
        return HarnessResult(status=RunStatus.INTERRUPTED)


class plugin:
    @hookimpl
    def harness_register_providers(self, register: Any) -> None:
        register(RecProvider)


@pytest.fixture
def rec_host() -> PluginHost:
    return PluginHost.create(entry_points=False, plugins=[("rec", plugin())])


async def _record(host: PluginHost, runs_dir: Path, *, on_event: Any = None, approver: Any = None,
                  **options: Any) -> tuple[list[HarnessEvent], list[dict[str, Any]], str]:
    """Run `rec` with `options`, recording its wire; its events, the wire's records and the wire file's text.
    `on_event(live, event)` sees each event as the consumer gets it."""
    spec = AgentRunSpec(prompt="go", env={"REC_PASSWORD": SECRET}, approval="on-request",
                        provider_options=options)
    events: list[HarnessEvent] = []
    with anyio.fail_after(_DEADLINE):
        async with open_run(spec, "rec", host=host, runs_dir=runs_dir, record_wire=True, approver=approver) as live:
            async for event in live:
                events.append(event)
                if on_event is not None:
                    on_event(live, event)
    text = wire_path(runs_dir, live.run_id).read_text(encoding="utf-8")
    records = [json.loads(line) for line in text.splitlines()]
    assert records[0]["dir"] == "header" and records[0]["format"] == WIRE_FORMAT
    unlisted = {r["dir"] for r in records} - RECORDS.keys()
    assert not unlisted, f"record kinds written but not in wirelog.RECORDS: {unlisted}"
    return events, records, text


def _of(records: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [r for r in records if r["dir"] == kind]


@pytest.mark.anyio
async def test_an_interrupt_is_recorded_after_the_last_event_published(rec_host: PluginHost, runs_dir: Path) -> None:
    def interrupt_once_ready(live: Any, event: HarnessEvent) -> None:
        if isinstance(event, TextDelta):
            live.interrupt()

    events, records, _ = await _record(rec_host, runs_dir, on_event=interrupt_once_ready, mode="interrupt")
    ready = next(e for e in events if isinstance(e, TextDelta))
    assert events[-1].type == "done" and events[-1].result.status == RunStatus.INTERRUPTED  # type: ignore[attr-defined]
    interrupts = _of(records, "interrupt")
    assert [(r["how"], r["after_seq"]) for r in interrupts] == [("interrupt", ready.seq)]
    assert isinstance(interrupts[0]["t"], float)
    # in the wire's order: after the line that produced the event, before the child's input was closed
    kinds = [r["dir"] for r in records]
    assert kinds.index("in") < kinds.index("interrupt") < kinds.index("close")


@pytest.mark.anyio
async def test_a_stop_is_recorded_once_with_its_own_after_seq(rec_host: PluginHost, runs_dir: Path) -> None:
    def interrupt_then_stop(live: Any, event: HarnessEvent) -> None:
        if isinstance(event, TextDelta):
            live.interrupt()
        elif isinstance(event, Notice) and event.code == "ignoring":
            live.stop()
            live.stop()  # a second call writes nothing more
            live.interrupt()

    events, records, _ = await _record(rec_host, runs_dir, on_event=interrupt_then_stop, mode="ignore")
    ready = next(e for e in events if isinstance(e, TextDelta))
    ignoring = next(e for e in events if isinstance(e, Notice) and e.code == "ignoring")
    assert [(r["how"], r["after_seq"]) for r in _of(records, "interrupt")] == [
        ("interrupt", ready.seq), ("stop", ignoring.seq)]
    assert events[-1].result.error.details["stopped_by"] == "runner"  # type: ignore[attr-defined]


@pytest.mark.anyio
async def test_a_secret_written_to_stderr_in_two_pieces_is_scrubbed_whole(rec_host: PluginHost,
                                                                          runs_dir: Path) -> None:
    code = textwrap.dedent("""
        import os, sys, time
        secret = os.environ["REC_PASSWORD"]  # the spec's env: a secret of the run
        sys.stderr.write("auth failed for " + secret[:9]); sys.stderr.flush()
        time.sleep(0.3)
        sys.stderr.write(secret[9:] + " (retrying)\\n"); sys.stderr.flush()
        print("out", flush=True)
    """)
    _, records, text = await _record(rec_host, runs_dir, code=code)
    assert "0123456789" not in text and SECRET[:9] not in text and "ss\\\\wo" not in text
    assert [(r["line"], r["nl"]) for r in _of(records, "err")] == [("auth failed for *** (retrying)", True)]


@pytest.mark.anyio
async def test_stderr_is_recorded_a_line_at_a_time_with_characters_split_across_reads(rec_host: PluginHost,
                                                                                       runs_dir: Path) -> None:
    code = textwrap.dedent("""
        import sys, time
        err = sys.stderr.buffer
        err.write("first line\\ncaf".encode() + b"\\xc3"); err.flush()  # \u00e9 is c3 a9: split between two reads
        time.sleep(0.3)
        err.write(b"\\xa9 ok\\nno newline at the end"); err.flush()
    """)
    _, records, _ = await _record(rec_host, runs_dir, code=code)
    errs = _of(records, "err")
    assert [(r["line"], r["nl"]) for r in errs] == [
        ("first line", True), ("caf\u00e9 ok", True), ("no newline at the end", False)]
    kinds = [r["dir"] for r in records]
    assert kinds.index("exit") > max(i for i, kind in enumerate(kinds) if kind == "err")  # stderr whole before exit


@pytest.mark.anyio
async def test_a_side_input_is_scrubbed_before_its_record_is_serialised(rec_host: PluginHost, runs_dir: Path,
                                                                        tmp_path: Path) -> None:
    lines = [
        json.dumps({"type": "session", "password": SECRET}),  # a JSON line: the secret escaped once in it
        "export PASSWORD=" + SECRET,  # a text line: the secret as it is
        '{"url":"s3://bucket","owner":"me@example.com"}',  # JSON: the URL rule must not run across its fields
        "",
    ]
    side = tmp_path / "rollout.jsonl"
    side.write_text("\n".join(lines), encoding="utf-8")
    _, records, text = await _record(rec_host, runs_dir, mode="side", side_file=str(side))
    assert "0123456789" not in text
    (record,) = _of(records, "file")
    assert record["name"] == "side"
    data = record["data"].split("\n")
    assert json.loads(data[0]) == {"type": "session", "password": "***"}
    assert data[1:] == ["export PASSWORD=***", lines[2], ""]


@pytest.mark.anyio
async def test_concurrent_children_get_distinct_indexes_on_every_record(rec_host: PluginHost,
                                                                        runs_dir: Path) -> None:
    code = textwrap.dedent("""
        import os, sys
        print(f"hello from {os.getpid()}", flush=True)
        print("err from child", file=sys.stderr, flush=True)
    """)
    events, records, _ = await _record(rec_host, runs_dir, mode="pair", code=code)
    assert events[-1].result.status == RunStatus.SUCCESS  # type: ignore[attr-defined]
    child_records = [r for r in records if r["dir"] in {"spawn", "in", "out", "err", "close", "eof", "exit"}]
    assert all(isinstance(r["child"], int) for r in child_records)
    assert [r["child"] for r in _of(records, "spawn")] == [0, 1]
    for kind in ("in", "err", "eof", "exit"):
        assert sorted(r["child"] for r in _of(records, kind)) == [0, 1], kind
    greetings = {r["child"]: r["line"] for r in _of(records, "in")}
    assert len(set(greetings.values())) == 2  # each child's own line, under its own index


@pytest.mark.anyio
@pytest.mark.parametrize(("approver", "decision", "decided_by", "reason"), [
    (lambda _request: ApprovalDecision.APPROVE, "approve", "callback", None),
    (None, "deny", "default", "no one could answer"),
])
async def test_an_approval_record_says_who_decided_and_why(rec_host: PluginHost, runs_dir: Path, approver: Any,
                                                           decision: str, decided_by: str,
                                                           reason: str | None) -> None:
    events, records, _ = await _record(rec_host, runs_dir, approver=approver, mode="approve")
    (record,) = _of(records, "approval")
    assert (record["request_id"], record["decision"], record["decided_by"]) == ("ask-1", decision, decided_by)
    resolved = next(e for e in events if e.type == "approval_resolved")
    assert record["reason"] == resolved.reason  # type: ignore[attr-defined]
    if reason is None:
        assert record["reason"] is None
    else:
        assert record["reason"].startswith(reason)
