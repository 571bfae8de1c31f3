"""The foreground renderer: snapshot tests of the plain text (events from the scripted provider), and the
terminal behaviour (colour, live status line and its erasure, NO_COLOR / TERM=dumb)."""

from __future__ import annotations

import io
import os
import re
from pathlib import Path

import anyio
import pytest

import harness_core.testing.scripted as scripted
from harness_core import run
from harness_core.cli.render import START_LINE_AFTER, Renderer, format_duration, use_plain
from harness_core.events import (
    ApprovalDecision,
    ApprovalRequested,
    ApprovalResolved,
    Done,
    HarnessEvent,
    HarnessResult,
    HarnessToolDetails,
    RunStatus,
    TextDelta,
    ToolKind,
    ToolResult,
    ToolStatus,
    ToolSummary,
    ToolUse,
    Usage,
)
from harness_core.plugins import PluginHost
from harness_core.spec import AgentRunSpec

SNAPSHOTS = Path(__file__).parent / "snapshots"
_DURATION = re.compile(r"\b\d+(?:\.\d)? (?:ms|s)\b")


@pytest.fixture(autouse=True)
def in_tmp_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # the scripted provider really applies file steps in the run's cwd


class FakeTTY(io.StringIO):
    def isatty(self) -> bool:
        return True


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def scripted_events(scenario: str, **spec_fields: object) -> list[HarnessEvent]:
    """The events of one scripted run, with a fixed run id (so session ids are stable too)."""
    host = PluginHost.create(entry_points=False, plugins=[("scripted", scripted)])
    events: list[HarnessEvent] = []
    spec = AgentRunSpec(prompt="snapshot", provider_options={"scenario": scenario}, **spec_fields)  # type: ignore[arg-type]

    async def main() -> None:
        await run(spec, "scripted", host=host, run_log=False, run_id="snap-run", on_event=events.append)

    anyio.run(main)
    return events


def render(events: list[HarnessEvent], **kwargs: object) -> str:
    out = io.StringIO()
    renderer = Renderer(out, **kwargs)  # type: ignore[arg-type]
    for event in events:
        renderer.feed(event)
    renderer.close()
    return out.getvalue()


def normalized(text: str) -> str:
    """Durations vary from run to run: tool durations are scripted (1 ms), the run's own is not."""
    return _DURATION.sub("<dur>", text)


def check_snapshot(name: str, text: str) -> None:
    path = SNAPSHOTS / f"{name}.txt"
    if os.environ.get("UPDATE_SNAPSHOTS") or not path.exists():
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8"), f"snapshot {path} differs (UPDATE_SNAPSHOTS=1 to accept)"


@pytest.mark.parametrize(
    ("name", "scenario", "spec", "verbose"),
    [
        ("tools", "tools", {}, False),
        ("tools_verbose", "tools", {}, True),
        ("approvals_denied", "tools", {"approval": "on-request"}, False),
        ("fail_401", "fail_401", {}, False),
        ("think_verbose", "think", {}, True),
    ],
)
def test_plain_snapshot(name: str, scenario: str, spec: dict[str, object], verbose: bool) -> None:
    text = render(scripted_events(scenario, **spec), verbose=verbose)
    assert "\x1b" not in text and "\r" not in text
    check_snapshot(name, normalized(text))


def test_plain_snapshot_of_a_slow_tool_and_interleaved_text() -> None:
    clock = FakeClock()
    out = io.StringIO()
    r = Renderer(out, clock=clock, verbose=True)
    shell = HarnessToolDetails(kind=ToolKind.SHELL, title="Running command", command="pytest -q")
    r.feed(TextDelta(text="Let me run "))
    r.feed(TextDelta(text="the tests."))
    r.feed(ToolUse(tool_id="t1", name="shell", display=shell))
    r.tick()  # not slow yet: nothing printed
    clock.now += START_LINE_AFTER
    r.tick()  # slow now: the start line appears
    r.feed(ToolSummary(tool_id="t1", text="\n".join(f"line {i}" for i in range(10))))
    done = shell.model_copy(update={"status": ToolStatus.COMPLETED, "exit_code": 0, "duration_ms": 1234,
                                    "summary": "never shown: a tool_summary came first"})
    r.feed(ToolResult(tool_id="t1", name="shell", display=done))
    r.feed(TextDelta(text="All green.\n"))
    failed = shell.model_copy(update={"command": "make", "status": ToolStatus.FAILED, "exit_code": 2,
                                      "duration_ms": 42_000})
    r.feed(ToolUse(tool_id="t2", name="shell", display=shell.model_copy(update={"command": "make"})))
    r.feed(ToolResult(tool_id="t2", name="shell", display=failed, is_error=True))
    r.feed(Done(result=HarnessResult(status=RunStatus.SUCCESS, duration_ms=3400, session_id="abc",
                                     usage=Usage(input_tokens=1234, output_tokens=56))))
    r.close()
    check_snapshot("slow_tool", out.getvalue())
    assert out.getvalue().endswith("✓ success in 3.4 s · 1,234 tokens in / 56 out · session abc\n")


def test_text_line_is_ended_before_any_other_line() -> None:
    shell = HarnessToolDetails(kind=ToolKind.SHELL, title="Running command", command="ls")
    declined = shell.model_copy(update={"status": ToolStatus.DECLINED})
    text = render([
        TextDelta(text="partial"),
        ToolUse(tool_id="t", name="shell", display=shell),
        ToolResult(tool_id="t", name="shell", display=declined),
    ])
    assert text == "partial\n[tool] ⊘ Running command ls (declined)\n"


def test_an_approval_names_the_action_and_who_decided() -> None:
    rm = HarnessToolDetails(kind=ToolKind.SHELL, title="Running command", command="rm -rf build")
    text = render([
        ToolUse(tool_id="t", name="shell", display=rm),
        ApprovalRequested(request_id="a1", tool_id="t", display=rm),
        ApprovalResolved(request_id="a1", decision=ApprovalDecision.APPROVE, decided_by="callback"),
    ])
    assert text == "[approval] Running command rm -rf build — approved by callback\n"


def test_terminal_gets_colour_and_a_status_line_erased_before_each_line() -> None:
    out = FakeTTY()
    clock = FakeClock()
    r = Renderer.for_stream(out, environ={"TERM": "xterm"}, clock=clock)
    assert r.color and r.live
    events = scripted_events("tools")
    r.feed(events[0])
    clock.now += 2.5
    r.tick()
    assert out.getvalue().endswith("\x1b[0m") and "2.5 s · waiting for model" in out.getvalue()
    before = len(out.getvalue())
    r.feed(events[1])  # session_started: prints nothing
    r.feed(events[2])  # tool_use: still nothing (the result may be immediate)
    r.tick()
    assert "running command echo harness-ok" in out.getvalue()[before:]
    for event in events[3:]:
        r.feed(event)
    r.close()
    text = out.getvalue()
    assert "\r\x1b[2K\x1b[2m[tool]\x1b[0m" in text.replace("\x1b[32m\x1b[2m", "\x1b[2m")  # erased, then tag
    assert "\x1b[32m" in text and "\x1b[1m" in text  # green marks, bold final line
    assert not text.endswith("\x1b[0m\r\x1b[2K\x1b[36m")  # no status line left behind


def test_no_status_line_while_text_is_mid_line() -> None:
    out = FakeTTY()
    r = Renderer.for_stream(out, environ={})
    r.feed(TextDelta(text="streaming"))
    r.tick()
    assert out.getvalue() == "streaming"


@pytest.mark.parametrize("environ", [{"NO_COLOR": "1"}, {"TERM": "dumb"}])
def test_no_color_or_dumb_terminal_gets_plain_text(environ: dict[str, str]) -> None:
    out = FakeTTY()
    clock = FakeClock()
    r = Renderer.for_stream(out, environ=environ, clock=clock)
    for event in scripted_events("tools"):
        r.feed(event)
        clock.now += 5
        r.tick()
    r.close()
    assert "\x1b" not in out.getvalue() and "\r" not in out.getvalue()
    assert use_plain(out, environ)


def test_ascii_marks_when_the_stream_cannot_encode_unicode() -> None:
    raw = io.BytesIO()
    out = io.TextIOWrapper(raw, encoding="ascii")
    r = Renderer.for_stream(out, environ={})
    for event in scripted_events("say"):
        r.feed(event)
    r.close()
    out.flush()
    assert raw.getvalue().decode("ascii").splitlines()[-1].startswith("ok success in ")


def test_hold_stops_the_status_line_until_release() -> None:
    out = FakeTTY()
    r = Renderer.for_stream(out, environ={})
    r.tick()
    r.hold()
    held = out.getvalue()
    assert held.endswith("\r\x1b[2K")
    r.tick()
    assert out.getvalue() == held
    r.release()
    r.tick()
    assert len(out.getvalue()) > len(held)


@pytest.mark.parametrize(("ms", "text"), [(1, "1 ms"), (999, "999 ms"), (1234, "1.2 s"), (42_000, "42 s"),
                                          (125_000, "2 m 05 s"), (None, "?")])
def test_format_duration(ms: int | None, text: str) -> None:
    assert format_duration(ms) == text


def test_untrusted_control_characters_never_reach_the_terminal() -> None:
    import io

    from harness_core.cli.render import Renderer
    from harness_core.events import HarnessToolDetails, TextDelta, ToolKind, ToolResult, ToolStatus

    out = io.StringIO()
    renderer = Renderer(out, color=True)
    renderer.feed(TextDelta(text="hi\x1b]52;c;ZXZpbA==\x07 there\x1b[2J\r\n"))
    display = HarnessToolDetails(kind=ToolKind.SHELL, title="Running command", command="echo \x1b]0;pwned\x07x",
                                 status=ToolStatus.COMPLETED, exit_code=0)
    renderer.feed(ToolResult(tool_id="t", name="shell", display=display))
    text = out.getvalue()
    assert "\x07" not in text and "\x1b[2J" not in text and "\x1b]" not in text and "\r" not in text
    assert "hi]52;c;ZXZpbA== there[2J\n" in text


def test_attached_later_the_clock_counts_from_the_run_start() -> None:
    """`harness attach` to a run that started two minutes ago shows its age, not the time since attaching."""
    import time

    out = FakeTTY()
    r = Renderer.for_stream(out, environ={"TERM": "xterm"})
    r.feed(scripted_events("tools")[0].model_copy(update={"ts": time.time() - 125}))
    r.tick()
    assert "2 m 0" in out.getvalue()  # 2 m 05 s (or 06 s on a slow machine)


def test_the_agent_clis_own_warnings_show_with_verbose_only() -> None:
    from harness_core import Notice

    warning = Notice(run_id="r", seq=1, code="cli_warning", message="the agent could not find bubblewrap on PATH")
    reconnecting = Notice(run_id="r", seq=2, code="reconnecting", message="reconnecting to the model API (1/5)")
    for verbose in (False, True):
        out = io.StringIO()
        renderer = Renderer(out, verbose=verbose)
        renderer.feed(warning)
        renderer.feed(reconnecting)
        shown = out.getvalue()
        assert ("bubblewrap" in shown) is verbose and "[warning] reconnecting" in shown


def test_the_final_line_of_an_interrupted_run_says_interrupted_once() -> None:
    from harness_core import ErrorInfo
    from harness_core.cli.render.format import final_line

    result = HarnessResult(status=RunStatus.INTERRUPTED, duration_ms=34000,
                           error=ErrorInfo(code="interrupted", message="the run was interrupted"))
    assert final_line(result).count("interrupted") == 1
    failed = HarnessResult(status=RunStatus.FAILED, duration_ms=1, error=ErrorInfo(code="model_error", message="x"))
    assert final_line(failed).endswith("model_error")
