"""`harness trace RUN`: a run's span tree printed from its log (no OpenTelemetry installed or needed), a run cut
short ended at its last event, and `--otel` refusing clearly when the observer is not installed or turned off."""

from __future__ import annotations

import fcntl
import json
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness_core import ApprovalDecision, run_sync
from harness_core.cli import cli
from harness_core.plugins import PluginHost
from harness_core.spec import AgentRunSpec


def test_trace_prints_the_runs_span_tree(host: PluginHost, runs_dir: Path, tmp_path: Path) -> None:
    result = run_sync(AgentRunSpec(prompt="go", cwd=tmp_path, approval="on-request",
                                   provider_options={"scenario": "tools"}), "scripted", runs_dir=runs_dir,
                      approver=lambda request: ApprovalDecision.APPROVE)
    shown = CliRunner().invoke(cli, ["trace", "--runs-dir", str(runs_dir)], catch_exceptions=False)
    assert shown.exit_code == 0, shown.output
    lines = shown.output.splitlines()
    assert lines[0].startswith("invoke_agent scripted  +0.00s")
    assert "success" in lines[0] and "in=100" in lines[0] and "out=20" in lines[0]
    assert [line.split("  +")[0] for line in lines[1:]] == [
        "├─ execute_tool shell", "│  └─ harness.approval", "├─ execute_tool read", "├─ execute_tool edit",
        "│  └─ harness.approval", "└─ execute_tool write", "   └─ harness.approval"]
    assert "decision=approve" in lines[2] and "command=echo harness-ok" in lines[1]
    as_json = json.loads(CliRunner().invoke(cli, ["trace", result.run_id[:12], "--runs-dir", str(runs_dir),
                                                  "--json"]).output)
    assert as_json["attributes"]["harness.run_id"] == result.run_id
    assert as_json["attributes"]["gen_ai.usage.input_tokens"] == result.usage.input_tokens
    assert [c["name"] for c in as_json["children"]] == ["execute_tool shell", "execute_tool read",
                                                        "execute_tool edit", "execute_tool write"]


def test_trace_of_a_log_without_its_start_says_so(runs_dir: Path) -> None:
    runs_dir.mkdir(parents=True)
    (runs_dir / "20260101T000000-deadbeef.jsonl").write_text("")
    shown = CliRunner().invoke(cli, ["trace", "20260101T000000-deadbeef", "--runs-dir", str(runs_dir)])
    assert shown.exit_code == 1 and "no `run_started`" in shown.output


def test_otel_without_the_observer_installed_is_a_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("harness_core.cli.flags.otel_plugin.metadata.entry_points", lambda group: [])
    monkeypatch.delenv("HARNESS_OTEL", raising=False)
    shown = CliRunner().invoke(cli, ["run", "--otel", "hi"])
    assert shown.exit_code == 2 and "needs the harness-otel plugin" in shown.output


def test_trace_ends_a_dead_run_at_its_last_event_and_a_live_one_now(host: PluginHost, runs_dir: Path,
                                                                     tmp_path: Path) -> None:
    """A log without its `done` and no writer (a killed run): its open spans end at its last event, `unfinished`,
    however long ago that was. With a writer holding the log (a run playing): `running`, up to now."""
    result = run_sync(AgentRunSpec(prompt="go", cwd=tmp_path, provider_options={"scenario": "tools"}), "scripted",
                      runs_dir=runs_dir)
    path = runs_dir / f"{result.run_id}.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    kept = lines[:len(lines) // 2]
    path.write_text("".join(kept))
    last = json.loads(kept[-1])["ts"]

    def traced() -> dict[str, object]:
        shown = CliRunner().invoke(cli, ["trace", result.run_id, "--runs-dir", str(runs_dir), "--json"])
        assert shown.exit_code == 0, shown.output
        return dict(json.loads(shown.output))

    dead = traced()
    assert dead["end"] == last and dead["attributes"]["harness.status"] == "unfinished"  # type: ignore[index]
    with path.open("rb") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)  # what a live LogWriter holds
        before = time.time()
        live = traced()
    assert live["end"] >= before and live["attributes"]["harness.status"] == "running"  # type: ignore[index,operator]


@pytest.mark.parametrize(("variable", "value", "said"), [
    ("HARNESS_DISABLE_PLUGINS", "ray, otel", "take `otel` out of HARNESS_DISABLE_PLUGINS"),
    ("HARNESS_LOAD_PLUGINS", "scripted", "add `otel` to HARNESS_LOAD_PLUGINS"),
])
def test_otel_with_the_observer_turned_off_is_a_usage_error(monkeypatch: pytest.MonkeyPatch, variable: str,
                                                             value: str, said: str) -> None:
    monkeypatch.setattr("harness_core.cli.flags.otel_plugin.metadata.entry_points", lambda group: [_Otel()])
    monkeypatch.setenv("HARNESS_OTEL", "")
    monkeypatch.setenv(variable, value)
    shown = CliRunner().invoke(cli, ["run", "--otel", "hi"])
    assert shown.exit_code == 2, shown.output
    assert "--otel needs the harness-otel plugin" in shown.stderr and said in shown.stderr


def test_otel_with_the_sdk_disabled_warns(host: PluginHost, runs_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("harness_core.cli.flags.otel_plugin.metadata.entry_points", lambda group: [_Otel()])
    monkeypatch.setenv("HARNESS_OTEL", "")
    monkeypatch.setenv("OTEL_SDK_DISABLED", "true")
    shown = CliRunner().invoke(cli, ["run", "--otel", "-p", "scripted", "--runs-dir", str(runs_dir), "hi"])
    assert shown.exit_code == 0, shown.output
    assert ("harness: warning: --otel: OTEL_SDK_DISABLED=true turns OpenTelemetry off, so this run is not traced "
            "(unset OTEL_SDK_DISABLED to trace it)") in shown.stderr


class _Otel:
    name = "otel"
