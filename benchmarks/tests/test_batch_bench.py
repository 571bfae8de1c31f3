"""benchmarks/batch.py still runs: tiny batches on the fake CLIs, every task doing the scenario's edits, the bound on
live runs reported, the process-tree sampler counting (and reaping) what a child starts, and the table's layout.

No timing is asserted (figures at these sizes are noise). Providers whose package is not installed here are left
out (the benchmark envs have one or two); the Ray case runs only where `harness_core.executor_names()` has it.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

BENCH = Path(__file__).resolve().parent.parent
sys.path.append(str(BENCH))  # last: benchmarks/ must not shadow a stdlib module
import batch  # noqa: E402

from harness_core.batch import executor_names  # noqa: E402

MODULES = {"codex-appserver": "harness_codex_appserver", "claude": "harness_claude"}
PRESENT = [p for p, m in MODULES.items() if importlib.util.find_spec(m) is not None]


def _script(*args: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(BENCH / "batch.py"), *args], capture_output=True, text=True,
                          timeout=timeout)


@pytest.mark.skipif(not PRESENT, reason="no provider with a fake CLI is installed here")
def test_tiny_batches_on_the_fakes_in_json_rows() -> None:
    out = _script("--tasks", "3", "--concurrency", "1,2", "--providers", ",".join(PRESENT), "--only", "fake",
                  "--engines", "local", "--json")
    assert out.returncode == 0, out.stderr
    rows = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    assert len(rows) == 3 * 2 * len(PRESENT), rows  # tasks/min, RSS, live per configuration
    for row in rows:
        assert set(row) >= {"table", "name", "value", "unit", "reference", "ratio", "target", "ok"}
        assert row["value"] is not None, row  # measured, not FAILED
        assert row["table"] == "batch: 3 `tools` tasks"
    for provider in PRESENT:
        for level in (1, 2):
            where = f"{provider} fake local c={level}"
            by = {r["name"][len(where) + 2:]: r for r in rows if r["name"].startswith(where + ":")}
            assert by["tasks/min"]["note"].startswith("3/3 succeeded with the scenario's edits"), by
            assert by["tasks/min"]["value"] > 0
            assert by["peak live runs"]["ok"] is True and 1 <= by["peak live runs"]["value"] <= level
            assert by["peak RSS of the process tree"]["value"] > 10  # an interpreter at least
        one = next(r for r in rows if r["name"] == f"{provider} fake local c=1: tasks/min")
        assert one["ratio"] == 1.0 and one["reference"] == one["value"]


@pytest.mark.skipif("ray" in executor_names(), reason="ray is installed here")
def test_without_ray_the_table_says_how_to_install_it() -> None:
    provider = PRESENT[0] if PRESENT else "codex-appserver"
    out = _script("--tasks", "1", "--concurrency", "1", "--providers", provider, "--only", "fake")
    assert out.returncode == 0, out.stderr
    assert batch.RAY_MISSING in out.stdout.splitlines()
    if PRESENT:
        line = next(line for line in out.stdout.splitlines() if line.startswith(provider))
        assert line.split()[:3] == [provider, "fake", "1"] and "1/1" in line


@pytest.mark.skipif("ray" not in executor_names() or not PRESENT, reason="needs harness-ray and a fake CLI")
def test_ray_and_local_side_by_side() -> None:
    out = _script("--tasks", "2", "--concurrency", "2", "--providers", PRESENT[0], "--only", "fake",
                  "--engines", "local,ray", timeout=400)
    assert out.returncode == 0, out.stderr
    line = next(line for line in out.stdout.splitlines() if line.startswith(PRESENT[0]))
    assert line.count("2/2") == 2, out.stdout  # both engines: every task did its edits


def test_the_sampler_counts_a_childs_children_and_reaps_what_they_leave() -> None:
    grandchild = "b = b'x' * (40 * 2**20); import time; time.sleep(0.6)"
    script = f"{sys.executable} -c \"{grandchild}\" & p=$!; setsid sleep 120 & echo $!; wait $p"
    status, out, _err, peak, most = batch.run_sampled(["sh", "-c", script], deadline=60)
    assert status == 0
    assert most >= 3  # sh, the grandchild, the setsid sleep (in its own session, still a descendant)
    assert peak >= 40 * 2**20
    left = int(out.split()[0])
    for _ in range(100):  # the kill is sent by run_sampled; the zombie is init's to reap
        if not Path(f"/proc/{left}").exists() or _state(left) == "Z":
            break
        time.sleep(0.05)
    assert not Path(f"/proc/{left}").exists() or _state(left) == "Z", f"the escaped sleep {left} was left running"


def test_a_deadline_ends_the_child() -> None:
    began = time.monotonic()
    status, _out, err, _peak, _most = batch.run_sampled(["sleep", "60"], deadline=0.5)
    assert time.monotonic() - began < 10
    assert status != 0 and "timed out after" in err


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"


def _result(provider: str, engine: str, level: int, rate: float, **extra: Any) -> dict[str, Any]:
    return {"provider": provider, "cli": "fake", "engine": engine, "concurrency": level, "tasks": 10,
            "tasks_per_min": rate, "start": 0.5, "tree_peak_mb": 100.0, "peak_running": level, "processes": 3,
            "statuses": {"success": 10, "did_tools": 10}, "errors": [], "driver_peak_kb": 50_000, **extra}


def test_the_table_puts_engines_side_by_side_against_the_lowest_concurrency() -> None:
    results = [_result("claude", "local", 1, 60.0), _result("claude", "ray", 1, 30.0),
               _result("claude", "local", 4, 180.0), {**_result("claude", "ray", 4, 0.0), "failed": "boom"},
               _result("codex-appserver", "local", 1, 50.0, peak_running=2, errors=["t001: failed: x"])]
    lines = batch.table(results, ["local", "ray"])
    assert "local" in lines[0] and "ray" in lines[0] and lines[1].startswith("provider")
    four = next(line for line in lines if line.startswith("claude") and line.split()[2] == "4")
    local, ray = four.split(" | ")[1:]
    assert "180.0" in local and "3.00×" in local and "10/10" in local
    assert ray.strip() == "FAILED: boom"
    codex = next(line for line in lines if line.startswith("codex-appserver"))
    assert " 2!" in codex  # more live than the concurrency is marked
    assert "  codex-appserver fake local c=1: t001: failed: x" in lines
    rows = batch.json_rows(results)
    assert next(r for r in rows if r["name"] == "codex-appserver fake local c=1: peak live runs")["ok"] is False
    assert next(r for r in rows if r["name"] == "claude fake ray c=4: tasks/min")["note"] == "FAILED: boom"


def test_providers_without_a_fake_or_a_real_cli_are_noted_not_run() -> None:
    configs, notes = batch.configurations(["gemini", "acp"], ["fake", "real"], ["local"], [1, 4], 5)
    assert [(c["provider"], c["cli"], c["concurrency"]) for c in configs] == [
        ("gemini", "real", 1), ("gemini", "real", 4), ("acp", "fake", 1), ("acp", "fake", 4)]
    assert notes == [f"gemini fake: {batch.NO_FAKE}", f"acp real: {batch.NO_REAL}"]
