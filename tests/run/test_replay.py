"""`harness replay` and `harness_core.open_replay`: a run recorded with `record_wire` and fed back through its
provider gives back its run log's events (timestamps and the run's duration aside), with no CLI run.

Real processes throughout: the `wired` provider below spawns a real Python child through `ctx.spawn` (a line
protocol with a request, an approval, stderr and an exit status), reads a side file through `read_side_input`,
and `harness` runs as a subprocess. Each provider's own replays (its fake and its real CLI) are in
`providers/*/tests/test_*replay*.py` and the shipped contract (`test_replay_reproduces_the_run`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any, ClassVar

import anyio
import pytest
from pydantic import Field

from harness_core import (
    AgentRunSpec,
    ApprovalDecision,
    ApprovalRequested,
    HarnessEvent,
    HarnessResult,
    HarnessToolDetails,
    InvalidSpecError,
    Notice,
    RunStatus,
    TextDelta,
    ToolKind,
    load_wire,
    open_replay,
    open_run,
)
from harness_core._run.replay.run import ReplayProcess
from harness_core._run.wirelog import ChildScript, ScriptItem
from harness_core.plugins import PluginHost
from harness_core.provider import Capability, Provider, ProviderInfo, ProviderOptions, RunContext, hookimpl
from harness_core.store import read_events, wire_path
from harness_core.testing.contract import without_wall_clock
from harness_core.transport import ChildProcess

_DEADLINE = 60.0
_ROOT = Path(__file__).resolve().parents[2]

CHILD = textwrap.dedent("""
    import json, os, sys
    print(json.dumps({"event": "ready"}), flush=True)
    request = json.loads(sys.stdin.readline())
    mode = request["params"]["mode"]
    print("child: working", file=sys.stderr, flush=True)
    if mode == "crash":
        print("fatal: the model API refused the key", file=sys.stderr, flush=True)
        sys.exit(3)
    if mode == "slow":
        print(json.dumps({"event": "working"}), flush=True)
        stop = json.loads(sys.stdin.readline())  # only an interrupt ends the turn
        print(json.dumps({"id": stop["id"], "event": "interrupted"}), flush=True)
        sys.stdin.readline()
        sys.exit(0)
    if mode == "split":  # a secret of the run's environment, said in two pieces (as a model streams it)
        secret = os.environ["WIRED_TOKEN"]
        for piece in (secret[:9], secret[9:]):
            print(json.dumps({"event": "delta", "text": piece}), flush=True)
    if mode == "approve":
        print(json.dumps({"id": "ask-1", "method": "approve", "params": {"command": "touch x"}}), flush=True)
        answer = json.loads(sys.stdin.readline())
        print(json.dumps({"event": "decided", "decision": answer["result"]}), flush=True)
    print(json.dumps({"id": request["id"], "result": {"text": "hello from pid-free child"}}), flush=True)
    sys.stdin.readline()  # until the provider closes our input
    sys.exit(0)
""")


class WiredOptions(ProviderOptions):
    mode: str = "ok"
    side_file: str | None = None
    api_token: str | None = None  # secret-looking: `run_started` (and the wire header) show it as "***"
    flags: list[str] = Field(default_factory=list)


class WiredProvider(Provider[WiredOptions]):
    """A provider with a real child, as a third party would write it on `harness_core.provider`."""

    info: ClassVar[ProviderInfo] = ProviderInfo(name="wired", version="1.0",
                                                capabilities=frozenset({Capability.APPROVALS}))

    async def run(self, spec: AgentRunSpec, options: WiredOptions, ctx: RunContext) -> HarnessResult:
        if options.mode == "direct":  # a second process started past `ctx.spawn`
            async with ChildProcess([sys.executable, "-c", "print('direct')"]) as direct:
                await direct.wait()
        async with ctx.spawn([sys.executable, "-c", CHILD]) as child, anyio.create_task_group() as tg:
            async def interrupt_on_request() -> None:
                await ctx.interrupt_requested.wait()
                await child.send_line(json.dumps({"id": 2, "method": "interrupt"}))

            tg.start_soon(interrupt_on_request)
            said: list[str] = []
            async for raw in child.lines():
                assert isinstance(raw, bytes)
                msg = json.loads(raw)
                if msg.get("event") == "working":
                    await ctx.emit(Notice(level="info", code="working", message="busy"))
                elif msg.get("event") == "delta":
                    said.append(msg["text"])
                    await ctx.emit(TextDelta(text=msg["text"]))
                elif msg.get("event") == "interrupted":
                    await child.close_stdin()
                    await child.wait()
                    tg.cancel_scope.cancel()
                    return HarnessResult(status=RunStatus.INTERRUPTED, final_text="interrupted")
                elif msg.get("event") == "ready":
                    await child.send_line(json.dumps({"id": 1, "method": "go", "params": {"mode": options.mode}}))
                elif msg.get("method") == "approve":
                    display = HarnessToolDetails(kind=ToolKind.SHELL, title="Running command",
                                                 command=msg["params"]["command"])
                    decision = await ctx.request_approval(ApprovalRequested(request_id=msg["id"], display=display))
                    await child.send_line(json.dumps({"id": msg["id"], "result": decision.value}))
                elif msg.get("event") == "decided":
                    await ctx.emit(Notice(level="info", code="decided", message=msg["decision"]))
                elif msg.get("id") == 1:
                    await ctx.emit(TextDelta(text=msg["result"]["text"]))
                    data = await _read_side(ctx, options.side_file)
                    await ctx.emit(Notice(level="info", code="side", message=repr(data)))
                    await child.close_stdin()
                    code = await child.wait()
                    tg.cancel_scope.cancel()
                    text = f"{msg['result']['text']} ({code})"
                    final = f"{''.join(said)} {text}" if said else text
                    return HarnessResult(status=RunStatus.SUCCESS, final_text=final)
            tg.cancel_scope.cancel()
        with anyio.move_on_after(5):
            await child.wait()
        raise child.exit_error("the wired child ended before answering")


async def _read_side(ctx: RunContext, side: str | None) -> bytes | None:
    return await ctx.read_side_input("side", lambda: Path(side).read_bytes()) if side else None


class plugin:  # registered as a module would be
    @hookimpl
    def harness_register_providers(self, register: Any) -> None:
        register(WiredProvider)


WRAPPER = textwrap.dedent(f"""
    import sys
    sys.path.insert(0, {str(_ROOT)!r})
    from harness_core.plugins import PluginHost, reset_host
    from tests.run.test_replay import plugin
    reset_host(PluginHost.create(entry_points=False, plugins=[("wired", plugin())]))
    from harness_core.cli import main
    main()
""")


@pytest.fixture
def wired_host() -> PluginHost:
    return PluginHost.create(entry_points=False, plugins=[("wired", plugin())])


async def _record(host: PluginHost, runs_dir: Path, **fields: Any) -> tuple[list[HarnessEvent], Path]:
    approver = fields.pop("approver", None)
    spec = AgentRunSpec(prompt="go", env={"WIRED_TOKEN": "s3cr3t-value-for-the-run"}, **fields)
    with anyio.fail_after(_DEADLINE):
        async with open_run(spec, "wired", host=host, runs_dir=runs_dir, record_wire=True, approver=approver) as live:
            events = [event async for event in live]
    assert live.log_path is not None
    return events, wire_path(runs_dir, live.run_id)


async def _replayed(wire: Path, host: PluginHost, provider: str | None = None) -> tuple[list[HarnessEvent], Any]:
    recording = load_wire(wire, provider)
    with anyio.fail_after(_DEADLINE):
        async with open_replay(recording, host=host) as live:
            events = [event async for event in live]
    return events, recording


@pytest.mark.anyio
async def test_replay_reproduces_a_run_and_its_side_input(wired_host: PluginHost, runs_dir: Path,
                                                          tmp_path: Path) -> None:
    side = tmp_path / "side.txt"
    side.write_text("what the CLI wrote beside its pipe")
    recorded, wire = await _record(wired_host, runs_dir, provider_options={"side_file": str(side)})
    side.unlink()  # as an offline run's state dir: gone when the bug report is replayed elsewhere
    replayed, recording = await _replayed(wire, wired_host)
    logged = list(read_events(wire.with_name(wire.name.replace(".wire", ""))))
    assert without_wall_clock(replayed) == without_wall_clock(logged) == without_wall_clock(recorded)
    assert any(isinstance(e, Notice) and "beside its pipe" in e.message for e in replayed)
    assert replayed[-1].type == "done" and recording.warnings == []
    assert "s3cr3t-value-for-the-run" not in wire.read_text()
    kinds = [json.loads(line)["dir"] for line in wire.read_text().splitlines()]
    assert kinds[0] == "header" and {"out", "in", "err", "close", "exit", "file"} <= set(kinds)


@pytest.mark.anyio
async def test_replay_reproduces_a_crash_with_its_exit_status_and_stderr(wired_host: PluginHost,
                                                                         runs_dir: Path) -> None:
    recorded, wire = await _record(wired_host, runs_dir, provider_options={"mode": "crash"})
    done = recorded[-1]
    assert done.type == "done" and done.result.error is not None
    assert done.result.error.details["exit_code"] == 3 and "refused the key" in done.result.error.details["stderr_tail"]
    replayed, _ = await _replayed(wire, wired_host)
    assert without_wall_clock(replayed) == without_wall_clock(recorded)


@pytest.mark.anyio
@pytest.mark.parametrize("decision", [ApprovalDecision.APPROVE, ApprovalDecision.DENY])
async def test_replay_decides_approvals_as_recorded(decision: ApprovalDecision, wired_host: PluginHost,
                                                    runs_dir: Path) -> None:
    recorded, wire = await _record(wired_host, runs_dir, provider_options={"mode": "approve"},
                                   approval="on-request", approver=lambda _request: decision)
    assert [e.decision for e in recorded if e.type == "approval_resolved"] == [decision]
    replayed, _ = await _replayed(wire, wired_host)
    assert without_wall_clock(replayed) == without_wall_clock(recorded)
    # without the run log beside it, the wire's own `approval` record decides (by "callback", as recorded here)
    wire.with_name(wire.name.replace(".wire", "")).unlink()
    alone, recording = await _replayed(wire, wired_host)
    assert without_wall_clock(alone) == without_wall_clock(recorded) and recording.warnings == []


@pytest.mark.anyio
async def test_an_answer_never_overtakes_its_question() -> None:
    script = ChildScript(items=[ScriptItem("in", 0, line=b"ready"), ScriptItem("in", 1, line=b"answer"),
                                ScriptItem("eof", 1), ScriptItem("exit", 1, code=0)],
                         outs=[("go", 1)])
    warnings: list[str] = []
    async with ReplayProcess(script, ["wired"], warnings, lambda: None) as child:
        lines = child.lines()
        assert await lines.__anext__() == b"ready"
        with anyio.move_on_after(0.2) as early:
            await lines.__anext__()
        assert early.cancelled_caught, "the answer came before the question was sent"
        assert child.returncode is None
        await child.send_line(json.dumps({"method": "stop", "id": 7}))
        assert await lines.__anext__() == b"answer"
        assert child.returncode == 0
    assert warnings == ["line 1 sent to the child differs from the recording: method/id ('stop', 7) instead of "
                        "('go', 1)"]


def _harness(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "harness_wired.py"
    script.write_text(WRAPPER)
    env = {**os.environ, "HARNESS_RUNS_DIR": str(tmp_path / "runs"), "NO_COLOR": "1"}
    return subprocess.run([sys.executable, str(script), *args], env=env, capture_output=True, text=True,
                          timeout=_DEADLINE, cwd=tmp_path)


def _run_log_lines(wire: Path) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in wire.with_name(wire.name.replace(".wire", "")).read_text().splitlines()]
    for line in lines:
        line.pop("ts")
        if line["type"] == "done":
            line["result"].pop("duration_ms")
    return lines


def test_cli_replay_json_equals_the_run_log_and_the_live_view_renders(tmp_path: Path) -> None:
    recorded = _harness(tmp_path, "run", "-p", "wired", "go", "-o", "mode=crash", "--record-wire", "--json")
    assert recorded.returncode == 1, recorded.stderr
    wire = next((tmp_path / "runs").glob("*.wire.jsonl"))
    shown = _harness(tmp_path, "replay", str(wire), "--json")
    assert shown.returncode == 1, shown.stderr
    replayed = [json.loads(line) for line in shown.stdout.splitlines()]
    for line in replayed:
        line.pop("ts")
        if line["type"] == "done":
            line["result"].pop("duration_ms")
    assert replayed == _run_log_lines(wire)
    live = _harness(tmp_path, "replay", str(wire))
    assert live.returncode == 1 and "refused the key" in live.stdout + live.stderr, live.stdout


def test_cli_replay_of_a_missing_or_garbled_file_says_what_to_pass(tmp_path: Path) -> None:
    missing = _harness(tmp_path, "replay", str(tmp_path / "nope.wire.jsonl"))
    assert missing.returncode == 2
    assert "cannot read wire log" in missing.stderr and "--record-wire" in missing.stderr
    garbled = tmp_path / "garbled.wire.jsonl"
    garbled.write_text('{"dir": "header", "run_id": "x"}\nnot json\n')
    bad = _harness(tmp_path, "replay", str(garbled))
    assert bad.returncode == 2 and f"{garbled}:2 is not a wire log record" in bad.stderr


def test_cli_replay_of_an_old_file_without_a_header_needs_the_provider(tmp_path: Path) -> None:
    assert _harness(tmp_path, "run", "-p", "wired", "go", "--record-wire").returncode == 0
    wire = next((tmp_path / "runs").glob("*.wire.jsonl"))
    old = [json.loads(line) for line in wire.read_text().splitlines()]
    wire.write_text("".join(json.dumps(r) + "\n" for r in old if r["dir"] in ("in", "out")))  # as recorded before
    refused = _harness(tmp_path, "replay", str(wire), "--json")
    assert refused.returncode == 2 and "pass --provider NAME" in refused.stderr
    shown = _harness(tmp_path, "replay", str(wire), "--provider", "wired", "--json")
    assert shown.returncode == 0, shown.stderr
    replayed = [json.loads(line) for line in shown.stdout.splitlines()]
    assert [e["type"] for e in replayed] == [e["type"] for e in _run_log_lines(wire)]
    assert replayed[-1]["result"]["final_text"] == "hello from pid-free child (0)"


def test_load_wire_names_an_old_file_without_its_run_log(tmp_path: Path) -> None:
    old = tmp_path / "20261201T000000-abc.wire.jsonl"
    old.write_text('{"dir": "in", "t": 1.0, "line": "{}"}\n')
    with pytest.raises(InvalidSpecError, match="put the run log next to the wire log"):
        load_wire(old, "wired")


def test_cli_replay_takes_a_run_id_a_prefix_or_last_and_record_wire_says_where_it_wrote(tmp_path: Path) -> None:
    recorded = _harness(tmp_path, "run", "-p", "wired", "go", "--record-wire")
    assert recorded.returncode == 0, recorded.stderr
    wire = next((tmp_path / "runs").glob("*.wire.jsonl"))
    run_id = wire.name.removesuffix(".wire.jsonl")
    assert f"harness: wire log {wire} (`harness replay {run_id}` plays it back)" in recorded.stderr
    for ref in (run_id, run_id[:17], "last"):
        shown = _harness(tmp_path, "replay", ref, "--json")
        assert shown.returncode == 0, (ref, shown.stderr)
        assert json.loads(shown.stdout.splitlines()[-1])["result"]["final_text"] == "hello from pid-free child (0)"
    assert _harness(tmp_path, "replay").returncode == 0, "`last` is the default"
    assert _harness(tmp_path, "run", "-p", "wired", "again").returncode == 0  # no --record-wire: no wire log
    unrecorded = _harness(tmp_path, "replay", "last")
    assert unrecorded.returncode == 2 and "has no wire log to replay" in unrecorded.stderr
    assert "--record-wire" in unrecorded.stderr
    unknown = _harness(tmp_path, "replay", "20990101")
    assert unknown.returncode == 2 and "no run '20990101'" in unknown.stderr


@pytest.mark.anyio
async def test_cli_replay_json_hides_a_secret_the_recording_holds_in_pieces(wired_host: PluginHost, runs_dir: Path,
                                                                           tmp_path: Path) -> None:
    """The agent says a `spec.env` value in two pieces: each wire line holds a piece only (a known limit of the wire
    log), the run log masks the value across its deltas (the first piece held back until the second completed it),
    and the run log's `done` hides the answer's whole value. The replay joins the pieces again into its
    answer: `harness replay --json` hides it there as the run log did (learned from the log beside the wire log),
    so its stdout never holds the value whole."""
    secret = "s3cr3t-value-for-the-run"
    recorded, wire = await _record(wired_host, runs_dir, provider_options={"mode": "split"})
    assert recorded[-1].result.final_text == f"{secret} hello from pid-free child (0)"  # type: ignore[union-attr]
    assert secret not in wire.read_text() and secret[:9] in wire.read_text()  # pieces only, each scrubbed alone
    logged = _run_log_lines(wire)
    deltas = [line["text"] for line in logged if line["type"] == "text_delta"]
    assert "".join(deltas).startswith("***") and secret[:9] not in "".join(deltas)  # the run log: masked across
    assert not any(piece and secret.startswith(piece) for piece in deltas) and len(deltas) == 3  # a line per delta
    assert logged[-1]["result"]["final_text"] == "*** hello from pid-free child (0)"
    shown = _harness(tmp_path, "replay", str(wire), "--json")
    assert shown.returncode == 0, shown.stderr
    assert secret not in shown.stdout
    replayed = [json.loads(line) for line in shown.stdout.splitlines()]
    for line in replayed:
        line.pop("ts")
        if line["type"] == "done":
            line["result"].pop("duration_ms")
    assert replayed == logged
