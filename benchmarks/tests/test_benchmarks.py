"""The benchmark scripts still run and their consumers count every delta; bench.py's table and verdict.

No timing is asserted here (figures on a shared machine are noise at these sizes): only that each contender
sees exactly the deltas the stand-in wrote, that a missing SDK is a row saying how to install it, and that
bench.py lays out canned rows and names the targets that do not hold. Contenders whose provider package is
not installed in this environment are skipped (the core env has none; the provider envs have one each).
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

BENCH = Path(__file__).resolve().parent.parent
sys.path.append(str(BENCH))  # last: benchmarks/ must not shadow a stdlib module
import bench  # noqa: E402

HAVE = {m: importlib.util.find_spec(m) is not None for m in (
    "harness_codex_appserver", "harness_claude", "harness_acp", "openai_codex", "claude_agent_sdk", "acp")}
CONTENDERS = {"raw-codex": None, "raw-claude": None, "raw-acp": None, "harness-codex": "harness_codex_appserver",
              "harness-codex-nolog": "harness_codex_appserver", "harness-claude": "harness_claude",
              "harness-claude-nolog": "harness_claude", "harness-acp": "harness_acp",
              "harness-acp-nolog": "harness_acp"}
LOG_ON = {"codex": ("harness codex-appserver API, log on ÷ raw", 1.0),
          "claude": ("harness claude API, log on ÷ raw", 1.0),
          "acp": ("harness acp (generic) API, log on ÷ raw", 1.0)}


def _api_events(*args: str) -> list[dict[str, Any]]:
    out = subprocess.run([sys.executable, str(BENCH / "api_events.py"), "--json", *args], capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]


@pytest.mark.parametrize("contender", sorted(CONTENDERS))
def test_each_consumer_counts_every_delta(contender: str) -> None:
    module = CONTENDERS[contender]
    if module and not HAVE[module]:
        pytest.skip(f"{module} is not installed here")
    spec = json.dumps({"contender": contender, "deltas": 37})
    out = subprocess.run([sys.executable, str(BENCH / "api_events.py"), "--child", spec], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["deltas"] == 37
    assert result["events"] >= 37 and result["seconds"] >= 0 and result["peak_kb"] > 0


@pytest.mark.parametrize("stream", sorted(LOG_ON))
def test_api_events_rows_at_tiny_sizes(stream: str) -> None:
    present = [n for n, m in CONTENDERS.items() if n.split("-")[1] == stream and (m is None or HAVE[m])]
    rows = _api_events("--sizes", "50", "200", "--repeats", "1", "--contenders", *present)
    by_name = {r["name"]: r for r in rows}
    assert len(rows) == len(present), rows
    for r in rows:
        assert set(r) >= {"table", "name", "value", "unit", "reference", "ratio", "target", "ok"}
        assert r["value"] is not None, r  # measured, not FAILED
        assert f"per delta, {stream} stream (50 -> 200 deltas" in r["table"]
    targeted = [r for r in rows if r["target"] is not None]
    assert all(isinstance(r["ok"], bool) for r in targeted)
    name, limit = LOG_ON[stream]
    if name in by_name:
        raw = next(r for r in rows if r["name"].startswith("raw:"))
        assert by_name[name]["target"] == limit and by_name[name]["reference"] == raw["value"]


@pytest.mark.skipif(HAVE["openai_codex"] and HAVE["claude_agent_sdk"], reason="both SDKs are installed here")
def test_scrubber_rows_at_small_sizes() -> None:
    """benchmarks/scrubber.py up to 100 KB: a row for each path of the real-shaped line (its planted secrets hidden,
    or the row says FAILED) and one for each adversarial shape, with the series from 1 KB."""
    out = subprocess.run([sys.executable, str(BENCH / "scrubber.py"), "--json", "--quick", "--largest", "100000"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    rows = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    lines = [r for r in rows if r["table"].startswith("scrubber: a 100 KB line")]
    shapes = [r for r in rows if r["table"].startswith("scrubber: adversarial text")]
    assert len(lines) == 3 and all(r["ok"] is True and "FAILED" not in r["note"] for r in lines), lines
    assert len(shapes) == 11 and all(r["note"].startswith("1 KB ") and "100 KB" in r["note"] for r in shapes)
    assert all(r["value"] > 0 and r["reference"] > 0 and r["target"] == 3.0 for r in shapes)


def test_a_missing_sdk_is_a_row_with_the_pip_command() -> None:
    wanted = [n for n, m in (("codex-sdk", "openai_codex"), ("claude-sdk", "claude_agent_sdk"), ("acp-sdk", "acp"))
              if not HAVE[m]]
    rows = _api_events("--sizes", "50", "200", "--repeats", "1", "--contenders", *wanted)
    assert len(rows) == len(wanted)
    for r in rows:
        assert r["value"] is None and "not installed: pip install " in r["note"], r


CANNED = [
    {"table": "per delta, codex stream", "name": "raw: readline + json.loads", "value": 3.04, "unit": "µs",
     "reference": None, "ratio": 1.0, "target": None, "ok": None, "note": "samples 3.01, 3.04, 3.10"},
    {"table": "per delta, codex stream", "name": "harness codex-appserver API, log on ÷ raw", "value": 4.2,
     "unit": "µs", "reference": 3.04, "ratio": 1.38, "target": 1.5, "ok": True},
    {"table": "per delta, codex stream", "name": "openai-codex 0.163.0 sync stream() ÷ harness", "value": 16.4,
     "unit": "µs", "reference": 4.2, "ratio": 3.9, "target": ">= 3x", "ok": True},
    {"table": "memory", "name": "harness claude", "value": 151.0, "unit": "MB", "reference": None, "ratio": None,
     "target": "<= 100 MB", "ok": False, "note": "x" * 300},
    {"table": "concurrent", "name": "100 runs, total events/s", "value": 13647.0, "unit": "events/s",
     "reference": 6005.0, "ratio": 2.27, "target": 0.8, "ok": True},
    {"table": "whole process", "name": "harness run --json, 1,000 deltas", "value": 0.61, "unit": "s",
     "reference": 0.22, "ratio": 2.77, "target": "<= 0.3 s more", "ok": None, "spread": "0.60-0.66"},
    bench.status_row("concurrent_runs.py", "100 runs at once", "not available"),
]


def test_table_groups_rows_and_fits_the_width() -> None:
    lines = bench.format_table(CANNED)
    assert all(len(line) <= bench.WIDTH for line in lines), max(lines, key=len)
    text = "\n".join(lines)
    tables = [line for line in lines if line and not line.startswith((" ", "-"))]
    assert tables == ["per delta, codex stream", "memory", "concurrent", "whole process",
                      "concurrent_runs.py: 100 runs at once"]
    assert "13,647 events/s" in text and "≥ 0.8×" in text  # a lower bound, as its verdict shows
    assert "≤ 1.5×" in text and "≥ 3×" in text and "≤ 100 MB" in text and "≤ 0.3 s more" in text
    memory = next(line for line in lines if "harness claude" in line)
    assert " NO " in memory and memory.endswith("…") and "151 MB" in memory
    assert "n/a" in next(line for line in lines if "not available" in line)
    assert "0.60-0.66" in text  # a row's "spread" is shown when it has no note


def test_verdict_names_what_does_not_hold() -> None:
    notes, last = bench.verdict(CANNED)
    assert notes == ["1 target not measured:", "  harness run --json, 1,000 deltas",
                     "1 target does not hold:", "  harness claude: 151 MB, target ≤ 100 MB"]
    assert last == "3 of 5 targets hold, 1 do not, 1 not measured (see above)"
    assert bench.verdict(CANNED[:3]) == ([], "all targets hold")
    failed = {**CANNED[3], "value": None, "name": "x"}
    assert bench.verdict([failed])[0][-1] == "  x: not measured, target ≤ 100 MB"
    assert "all targets hold" not in bench.verdict([failed])[1]


def test_a_failed_contender_is_named_with_its_reason_and_is_no_success() -> None:
    row = {"table": "t", "name": "harness x", "value": None, "unit": "µs", "reference": None, "ratio": None,
           "target": 1.5, "ok": None, "note": "FAILED: saw 3 text deltas of 5"}
    assert bench.failures([row]) == ["  harness x: FAILED: saw 3 text deltas of 5"]
    assert "all targets hold" not in bench.verdict([row])[1]


def test_rows_are_read_from_mixed_output() -> None:
    text = "warming up\n" + json.dumps(CANNED[0]) + "\n{not json\n" + json.dumps({"other": 1}) + "\n"
    assert bench.parse_rows(text) == [CANNED[0]]


def test_a_missing_or_crashing_benchmark(tmp_path: Path) -> None:
    crash = tmp_path / "crash.py"
    crash.write_text("import sys\nprint('boom', file=sys.stderr)\nsys.exit(3)\n")
    with pytest.raises(bench.SubFailed, match="exit 3: boom"):
        bench.run_sub(crash, [], 60)
    partial = tmp_path / "partial.py"
    partial.write_text(f"import sys\nprint({json.dumps(json.dumps(CANNED[0]))})\nsys.exit(1)\n")
    with pytest.raises(bench.SubFailed, match=r"^exit 1$") as failed:
        bench.run_sub(partial, [], 60)
    assert failed.value.rows == [CANNED[0]]  # what it printed before failing is kept
    silent = tmp_path / "silent.py"
    silent.write_text("")
    with pytest.raises(bench.SubFailed, match="no rows"):
        bench.run_sub(silent, [], 60)
