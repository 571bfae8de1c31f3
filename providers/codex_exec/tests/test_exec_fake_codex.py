"""The fake `codex exec` speaks the shapes the real 0.169.0 printed (recorded transcripts)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from exec_helpers import TRANSCRIPTS, load_cases

from harness_codex_exec.testing import write_fake_codex
from harness_core.offline import SCENARIOS


def _shapes(lines: list[dict[str, Any]]) -> set[tuple[str, ...]]:
    """(line type, item type or "", sorted keys of the line, sorted keys of the item) for every line."""
    out = set()
    for msg in lines:
        item = msg.get("item") or {}
        extra = tuple(sorted(msg.get("usage") or msg.get("error") or {}))
        out.add((msg["type"], item.get("type", ""), *sorted(msg), "|", *sorted(item), "|", *extra))
    return out


def _real_shapes() -> set[tuple[str, ...]]:
    shapes: set[tuple[str, ...]] = set()
    for path in TRANSCRIPTS.glob("*.jsonl"):
        for _, lines in load_cases(path.name):
            shapes |= _shapes(lines)
    return shapes


def _fake(scenario: str, tmp_path: Path, *args: str) -> tuple[list[dict[str, Any]], int]:
    env = {**os.environ, "HARNESS_FAKE_SCENARIO": scenario, "CODEX_HOME": str(tmp_path)}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "harness_codex_exec.testing.fake",
            "exec",
            "--json",
            "--skip-git-repo-check",
            "-C",
            str(tmp_path),
            "-s",
            "workspace-write",
            *args,
        ],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        env=env,
        timeout=30,
        check=False,
    )
    return [json.loads(line) for line in proc.stdout.decode().splitlines()], proc.returncode


@pytest.mark.parametrize("scenario", ["say", "tools", "think", "fail_401", "fail_429", "fail_500"])
def test_fake_lines_have_real_shapes(scenario: str, tmp_path: Path) -> None:
    lines, code = _fake(scenario, tmp_path, "--", "do it")
    assert _shapes(lines) <= _real_shapes(), _shapes(lines) - _real_shapes()
    assert code == (1 if scenario.startswith("fail") else 0)
    assert SCENARIOS[scenario].steps  # a real scenario, not an empty play


def test_fake_resume_keeps_the_thread_and_its_total(tmp_path: Path) -> None:
    first, _ = _fake("tools", tmp_path, "--", "one")
    thread = first[0]["thread_id"]
    second, code = _fake("say", tmp_path, "resume", "--", thread, "two")
    assert code == 0 and second[0]["thread_id"] == thread
    assert second[-1]["usage"]["input_tokens"] > first[-1]["usage"]["input_tokens"]
    _, code = _fake("say", tmp_path, "resume", "--", "00000000-0000-0000-0000-000000000000", "x")
    assert code == 1


def test_version_and_wrapper(tmp_path: Path) -> None:
    wrapper = write_fake_codex(tmp_path, version="0.170.1")
    out = subprocess.run([str(wrapper), "--version"], capture_output=True, timeout=30, check=True, env={"PATH": "/x"})
    assert out.stdout.decode().strip() == "codex-cli 0.170.1"  # baked in: the probe gets no run env, nor PATH


def _wrapper_run(wrapper: Path, tmp_path: Path, **env: str) -> subprocess.CompletedProcess[bytes]:
    argv = [str(wrapper), "exec", "--json", "--skip-git-repo-check", "-C", str(tmp_path), "--", "go"]
    full = {"PATH": "/usr/bin:/bin", "CODEX_HOME": str(tmp_path), **env}
    return subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, env=full, timeout=30, check=False)


def test_wrapper_scenario_is_a_default_the_run_env_overrides(tmp_path: Path) -> None:
    wrapper = write_fake_codex(tmp_path, scenario="think")
    baked = [json.loads(line) for line in _wrapper_run(wrapper, tmp_path).stdout.splitlines()]
    assert any(m.get("item", {}).get("type") == "reasoning" for m in baked)
    chosen = _wrapper_run(wrapper, tmp_path, HARNESS_FAKE_SCENARIO="fail_429")
    assert chosen.returncode == 1 and b"429 Too Many Requests" in chosen.stdout


def test_wrapper_crash_dies_after_the_turn_starts(tmp_path: Path) -> None:
    proc = _wrapper_run(write_fake_codex(tmp_path, crash=True), tmp_path)
    assert proc.returncode == 101 and b"simulated crash" in proc.stderr
    assert [json.loads(line)["type"] for line in proc.stdout.splitlines()] == ["thread.started", "turn.started"]
