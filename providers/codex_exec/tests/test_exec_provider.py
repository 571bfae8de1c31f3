"""The provider end to end through the runner, against the fake `codex exec` (no Node, no network)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import anyio
import pytest

from harness_codex_exec.testing import write_fake_codex
from harness_core import (
    AgentRunSpec,
    ApprovalPolicy,
    Attachment,
    Capability,
    CliNotFoundError,
    CliVersionUnsupportedError,
    HarnessEvent,
    InvalidSpecError,
    RunStatus,
    UnsupportedFeatureError,
    open_run,
)
from harness_core.plugins import PluginHost

pytestmark = pytest.mark.anyio


async def _run(
    host: PluginHost,
    spec: AgentRunSpec,
    *,
    interrupt_on: str | None = None,
) -> tuple[Any, list[HarnessEvent]]:
    events: list[HarnessEvent] = []
    with anyio.fail_after(20):
        async with open_run(spec, "codex-exec", host=host, run_log=False) as live:
            async for event in live:
                events.append(event)
                if interrupt_on is not None and event.type == interrupt_on:
                    live.interrupt()
            result = await live.wait()
    return result, events


def _spec(tmp_path: Path, codex: Path, scenario: str, **kwargs: Any) -> AgentRunSpec:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    options = {"codex_bin": str(codex), "codex_home": str(home), **kwargs.pop("provider_options", {})}
    return AgentRunSpec(
        prompt="do it", cwd=ws, env={"HARNESS_FAKE_SCENARIO": scenario}, provider_options=options, **kwargs
    )


async def test_tools_scenario(host: PluginHost, fake_codex: Path, tmp_path: Path) -> None:
    result, events = await _run(host, _spec(tmp_path, fake_codex, "tools"))
    assert result.status is RunStatus.SUCCESS and result.final_text == "All four tools ran."
    assert [e.type for e in events][:2] == ["run_started", "session_started"] and events[-1].type == "done"
    uses = [(e.display.kind.value, e.display.title) for e in events if e.type == "tool_use"]
    assert uses == [
        ("shell", "Running command"),
        ("read", "Reading file"),
        ("edit", "Editing file"),
        ("write", "Writing file"),
    ]
    assert result.session_id == events[1].session_id
    assert result.usage.input_tokens == 500 and result.usage.output_tokens == 100


async def test_resume_reports_this_runs_usage(host: PluginHost, fake_codex: Path, tmp_path: Path) -> None:
    first, _ = await _run(host, _spec(tmp_path, fake_codex, "tools"))
    second, events = await _run(host, _spec(tmp_path, fake_codex, "say", resume_session=first.session_id))
    assert second.status is RunStatus.SUCCESS and second.session_id == first.session_id
    started = next(e for e in events if e.type == "session_started")
    assert started.resumed is True
    usage = next(e for e in events if e.type == "context_usage")
    assert usage.cumulative is False and usage.usage.input_tokens == 100 == second.usage.input_tokens


@pytest.mark.parametrize(
    ("scenario", "code"),
    [("fail_401", "auth_failed"), ("fail_429", "rate_limited"), ("fail_500", "model_error")],
)
async def test_backend_failures(
    host: PluginHost, fake_codex: Path, tmp_path: Path, scenario: str, code: str
) -> None:
    result, events = await _run(host, _spec(tmp_path, fake_codex, scenario))
    assert result.status is RunStatus.FAILED and result.error is not None and result.error.code == code
    assert [e.error.code for e in events if e.type == "error"] == [code]


async def test_crash_reports_exit_status_and_stderr(
    host: PluginHost, fake_codex: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HARNESS_FAKE_CRASH", "thread 'main' panicked: scripted crash")
    result, _ = await _run(host, _spec(tmp_path, fake_codex, "say"))
    assert result.status is RunStatus.FAILED and result.error is not None
    assert result.error.code == "process_exited" and result.error.details["exit_code"] == 101
    assert "scripted crash" in result.error.message


async def test_interrupt_stops_the_process_group(host: PluginHost, fake_codex: Path, tmp_path: Path) -> None:
    spec = _spec(tmp_path, fake_codex, "slow_command")
    started = anyio.current_time()
    result, _ = await _run(host, spec, interrupt_on="tool_use")
    assert anyio.current_time() - started < 10
    assert result.status is RunStatus.INTERRUPTED and result.session_id is not None
    assert result.error is not None and "--resume" in result.error.message
    assert not _fake_codex_processes(tmp_path)


def _fake_codex_processes(tmp_path: Path) -> list[int]:
    """Processes still running whose command line mentions this test's workspace."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if str(tmp_path).encode() in cmdline and int(entry.name) != os.getpid():
                found.append(int(entry.name))
    return found


@pytest.mark.parametrize(
    ("kwargs", "feature"),
    [
        ({"requires": frozenset({Capability.INTERRUPT})}, "interrupt"),
        ({"requires": frozenset({Capability.STREAMING})}, "streaming"),
        ({"approval": ApprovalPolicy.ON_REQUEST}, "approvals"),
        ({"approval": ApprovalPolicy.UNTRUSTED}, "approvals"),
    ],
)
async def test_refuses_what_it_cannot_do_before_spawning(
    host: PluginHost, tmp_path: Path, kwargs: dict[str, Any], feature: str
) -> None:
    spy = tmp_path / "spawned"
    codex = tmp_path / "codex"
    codex.write_text(f"#!/bin/sh\ntouch {spy}\n")
    codex.chmod(0o755)
    with pytest.raises(UnsupportedFeatureError) as info:
        async with open_run(_spec(tmp_path, codex, "say", **kwargs), "codex-exec", host=host, run_log=False):
            pass
    assert "'codex-exec'" in info.value.message and feature in info.value.message
    assert not spy.exists()


async def test_missing_and_old_binaries(host: PluginHost, tmp_path: Path) -> None:
    with pytest.raises(CliNotFoundError) as missing:
        async with open_run(
            _spec(tmp_path, tmp_path / "nope", "say"), "codex-exec", host=host, run_log=False
        ):
            pass
    assert "codex_bin" in missing.value.message
    old_dir = tmp_path / "old"
    old_dir.mkdir()
    old = write_fake_codex(old_dir, version="0.100.0")
    with pytest.raises(CliVersionUnsupportedError) as too_old:
        async with open_run(_spec(tmp_path, old, "say"), "codex-exec", host=host, run_log=False):
            pass
    assert "0.169.0" in too_old.value.message


async def test_bad_options_say_what_is_valid(host: PluginHost, fake_codex: Path, tmp_path: Path) -> None:
    with pytest.raises(InvalidSpecError) as info:
        async with open_run(
            _spec(tmp_path, fake_codex, "say", provider_options={"sandboxx": 1}),
            "codex-exec",
            host=host,
            run_log=False,
        ):
            pass
    assert "codex_home" in info.value.message


async def test_the_prompt_goes_on_stdin_and_the_fake_reads_it_as_codex_does(
    host: PluginHost, fake_codex: Path, tmp_path: Path
) -> None:
    spec = _spec(tmp_path, fake_codex, "say").model_copy(update={"prompt": "-looks like a flag\nsecond line ✓"})
    result, _ = await _run(host, spec)
    assert result.status is RunStatus.SUCCESS
    rollout = "".join(p.read_text() for p in (tmp_path / "home").rglob("rollout-*.jsonl"))
    assert '"text": "-looks like a flag\\nsecond line \\u2713"' in rollout  # all of stdin, as the real one keeps it


async def test_an_image_given_as_bytes_is_refused_before_spawn(host: PluginHost, fake_codex: Path,
                                                               tmp_path: Path) -> None:
    """`codex exec -i` takes images by path only (`attachment_data` off): bytes are refused before the CLI starts,
    not after `run_started`; an SVG (no API image type) by path is degraded, not sent."""
    png = b"\x89PNG\r\n\x1a\n" + b"\x00" * 8
    spec = _spec(tmp_path, fake_codex, "say", attachments=[Attachment(data=png, name="dot.png")])
    with pytest.raises(InvalidSpecError, match=r"given as bytes.*save it to a file.*Nothing was started"):
        await _run(host, spec)
    assert not (tmp_path / "home" / "sessions").exists()
    svg = tmp_path / "x.svg"
    svg.write_text("<svg/>")
    result, events = await _run(host, _spec(tmp_path, fake_codex, "say", attachments=[Attachment.of(svg)]))
    assert result.status is RunStatus.SUCCESS, result.error
    degraded = [e for e in events if e.type == "notice" and e.code == "attachment_degraded"]
    assert [e.details["mime_type"] for e in degraded] == ["image/svg+xml"]
