#!/usr/bin/env python3
"""`harness run --json` as a whole process, next to a raw consumer process, on the same Codex stream.

    .venv/bin/python benchmarks/cli_process.py            # 1,000 and 200,000 deltas, the fixed-cost breakdown
    .venv/bin/python benchmarks/cli_process.py --quick    # 1,000 and 50,000 deltas, fewer repeats
    .venv/bin/python benchmarks/cli_process.py --json     # rows for bench.py (benchmarks/README.md: the row protocol)

Benchmarks only (outside the library). The stream comes from benchmarks/flood_codex.py (a `codex app-server`
stand-in, `FLOOD_DELTAS=N`). Contenders, each timed from spawn to exit, alternately, medians over repeats:

- raw consumer: a Python process that spawns the stand-in with `FLOOD_RAW=1` (the turn's lines, no
  handshake), reads its lines and `json.loads` each one, writing nothing (its count of delta lines at exit);
- harness: `harness run --json --cwd WS -o codex_bin=WRAPPER go` (the console script), its stdout read by
  this process in 1 MiB chunks, counting the `text_delta` lines.

Both must see every delta, or the run fails. Targets (issue 31): at 200,000 deltas harness at most 1.5 times the raw
consumer; at 1,000 deltas ≤ 0.2 s more than it. Both run from bytecode as installed packages do: the
environment's PYTHONDONTWRITEBYTECODE is dropped and .pyc files go to a cache of this benchmark
(PYTHONPYCACHEPREFIX), warmed first; `-o codex_bin` points at a tiny sh wrapper, as benchmarks/api_events.py does.
The config, cache and runs directories are temporary, so the user's settings play no part; the CLI-version
cache (`$XDG_CACHE_HOME/harness`) is warm after the first run, as it is for any user's second run.

The fixed-cost breakdown runs fresh interpreters that stop after each stage: `python -c pass`, importing the
CLI, importing what `harness run` needs, building the plugin host, and the whole run at 0 deltas (version
cache warm and cold); each line is the median of its repeats and its difference from the line before.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
FLOOD = HERE / "flood_codex.py"
TABLE = "harness run --json, whole process (Codex stream)"
DELTA_MARK = b'"type":"text_delta"'
DONE_MARK = b'"type":"done"'  # no longer than DELTA_MARK: the kept tail catches both across chunks
RAW_CONSUMER = """
import json, subprocess, sys
proc = subprocess.Popen([sys.executable, sys.argv[1]], stdout=subprocess.PIPE)
loads, count = json.loads, 0
for line in proc.stdout:
    loads(line)
    count += b'"item/agentMessage/delta"' in line
proc.wait()
sys.stdout.write(str(count))
"""
STAGES = {
    "interpreter (python -c pass)": "pass",
    "+ import harness_core.cli (click, the commands)": "import harness_core.cli",
    "+ what `harness run` imports (pydantic, anyio, runner, events)":
        "import harness_core.cli, harness_core.cli.foreground.live, harness_core.cli.settings.loader, "
        "harness_core.spec",
    "+ plugin host (entry points, pluggy, provider classes)":
        "import harness_core.cli, harness_core.cli.foreground.live, harness_core.cli.settings.loader, "
        "harness_core.spec\n"
        "from harness_core.plugins import get_host\nget_host().get('codex-appserver')",
}


def _children_cpu() -> float:
    """User + system seconds of every reaped child so far (each contender's tree is reaped before the next)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


class Bench:
    """The temporary world both contenders run in."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.ws = root / "ws"
        self.ws.mkdir()
        self.cache = root / "cache"
        self.wrapper = root / "codex"
        self.wrapper.write_text(f"#!/bin/sh\nexec '{sys.executable}' '{FLOOD}' \"$@\"\n")
        self.wrapper.chmod(0o755)
        self.env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED")}
        self.env.update(PYTHONPYCACHEPREFIX=str(root / "pycache"), XDG_CACHE_HOME=str(self.cache),
                        XDG_CONFIG_HOME=str(root / "config"), XDG_STATE_HOME=str(root / "state"))
        self.env.pop("HARNESS_RUNS_DIR", None)
        self.env.pop("HARNESS_PROVIDER", None)
        script = Path(sys.executable).with_name("harness")
        self.harness = [str(script)] if script.exists() else [sys.executable, "-m", "harness_core.cli"]
        self.cpu: dict[tuple[str, int], list[float]] = {}
        """CPU seconds (user + system) of each run's whole process tree, by contender and size."""

    def raw(self, deltas: int) -> float:
        env = {**self.env, "FLOOD_RAW": "1", "FLOOD_DELTAS": str(deltas)}
        cpu, started = _children_cpu(), time.perf_counter()
        out = subprocess.run([sys.executable, "-c", RAW_CONSUMER, str(FLOOD)], env=env, stdout=subprocess.PIPE,
                             check=True, timeout=600).stdout
        elapsed = time.perf_counter() - started
        self.cpu.setdefault(("raw", deltas), []).append(_children_cpu() - cpu)
        if int(out or 0) != deltas:
            raise SystemExit(f"raw consumer saw {out!r} deltas of {deltas}")
        return elapsed

    def harness_run(self, deltas: int) -> float:
        argv = [*self.harness, "run", "--json", "--cwd", str(self.ws), "--runs-dir", str(self.root / "runs"),
                "-o", f"codex_bin={self.wrapper}", "go"]
        env = {**self.env, "FLOOD_DELTAS": str(deltas)}
        cpu, started = _children_cpu(), time.perf_counter()
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
        assert proc.stdout is not None
        fd, count, done, tail = proc.stdout.fileno(), 0, 0, b""
        keep = len(DELTA_MARK) - 1
        while chunk := os.read(fd, 1 << 20):
            both = tail + chunk
            count += both.count(DELTA_MARK)
            done += both.count(DONE_MARK)
            tail = both[-keep:]
        status = proc.wait(timeout=600)
        elapsed = time.perf_counter() - started
        self.cpu.setdefault(("harness", deltas), []).append(_children_cpu() - cpu)
        if status != 0 or count != deltas or done != 1:
            raise SystemExit(f"harness run exited {status}, saw {count} deltas of {deltas} and {done} done")
        return elapsed

    def stage(self, code: str) -> float:
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], env=self.env, check=True, timeout=120)
        return time.perf_counter() - started

    def forget_versions(self) -> None:
        shutil.rmtree(self.cache, ignore_errors=True)


def medians(contenders: dict[str, Callable[[], float]], repeats: int) -> dict[str, tuple[float, list[float]]]:
    """Median and samples of each contender, run in turn (the order alternates between rounds)."""
    samples: dict[str, list[float]] = {name: [] for name in contenders}
    names = list(contenders)
    for i in range(repeats):
        for name in names if i % 2 == 0 else reversed(names):
            samples[name].append(contenders[name]())
    return {name: (statistics.median(s), s) for name, s in samples.items()}


def row(name: str, value: float, unit: str, reference: float | None = None, target: float | str | None = None,
        ok: bool | None = None, note: str = "", table: str = TABLE) -> dict[str, Any]:
    return {"table": table, "name": name, "value": value, "unit": unit, "reference": reference,
            "ratio": value / reference if reference else None, "target": target, "ok": ok, "note": note}


def spread(samples: list[float]) -> str:
    return f"samples {', '.join(f'{s:.3f}' for s in samples)} s"


def process_rows(bench: Bench, sizes: tuple[int, int], repeats: tuple[int, int]) -> list[dict[str, Any]]:
    small, large = sizes
    rows = []
    for deltas, reps in ((small, repeats[0]), (large, repeats[1])):
        got = medians({"raw": lambda d=deltas: bench.raw(d), "harness": lambda d=deltas: bench.harness_run(d)}, reps)
        (raw, raw_s), (har, har_s) = got["raw"], got["harness"]
        raw_cpu = statistics.median(bench.cpu[("raw", deltas)][-reps:])
        har_cpu = statistics.median(bench.cpu[("harness", deltas)][-reps:])
        table = f"{TABLE}, medians of {reps}"
        rows.append(row(f"raw consumer process, {deltas:,} deltas", raw, "s", note=spread(raw_s), table=table))
        if deltas == small:
            rows.append(row(f"harness run --json, {deltas:,} deltas (− raw: {har - raw:+.3f} s)", har, "s", raw,
                            "<= raw + 0.2 s", har - raw <= 0.2, spread(har_s), table))
        else:
            rows.append(row(f"harness run --json, {deltas:,} deltas ÷ raw", har, "s", raw, 1.5, har <= 1.5 * raw,
                            spread(har_s), table))
        rows.append(row(f"  CPU time (user + system, whole tree) of harness ÷ raw, {deltas:,} deltas", har_cpu, "s",
                        raw_cpu, note="less noisy than wall time on a busy machine", table=table))
    return rows


def breakdown_rows(bench: Bench, repeats: int) -> list[dict[str, Any]]:
    """The fixed cost, stage by stage (each a fresh interpreter), and the whole run at 0 deltas."""
    contenders: dict[str, Callable[[], float]] = {name: (lambda c=code: bench.stage(c))
                                                  for name, code in STAGES.items()}
    contenders["whole run, 0 deltas (version cache warm)"] = lambda: bench.harness_run(0)

    def cold() -> float:
        bench.forget_versions()
        return bench.harness_run(0)

    contenders["whole run, 0 deltas (version cache cold: spawns --version)"] = cold
    contenders["raw consumer process, 0 deltas"] = lambda: bench.raw(0)
    got = medians(contenders, repeats)
    table = f"harness run --json fixed cost, stage by stage (fresh processes, medians of {repeats})"
    rows, before = [], 0.0
    for name, (value, samples) in got.items():
        if name.startswith(("whole", "raw")):
            delta = ""
        else:
            delta, before = f" (+{(value - before) * 1000:.0f} ms)", value
        rows.append(row(name + delta, value * 1000, "ms", note=spread(samples), table=table))
    run0 = got["whole run, 0 deltas (version cache warm)"][0]
    rows.append(row("whole run − plugin host stage (config, probe, spawn, handshake, shutdown)",
                    (run0 - before) * 1000, "ms", table=table))
    rows.append(row("whole run, 0 deltas − raw consumer, 0 deltas", (run0 - got["raw consumer process, 0 deltas"][0])
                    * 1000, "ms", table=table))
    return rows


def show(rows: list[dict[str, Any]]) -> None:
    table = None
    for r in rows:
        if r["table"] != table:
            table = r["table"]
            print(f"\n{table}")
        ratio = f"{r['ratio']:5.2f}×" if r["ratio"] else "      "
        target = r["target"]
        shown_target = f"target ≤ {target:g}×" if isinstance(target, (int, float)) else f"target {target}" if target \
            else ""
        verdict = "" if r["ok"] is None else "ok" if r["ok"] else "NOT MET"
        print(f"  {r['name']:78} {r['value']:9.3f} {r['unit']:3} {ratio} {shown_target:22} {verdict}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="1,000 and 50,000 deltas, fewer repeats")
    parser.add_argument("--json", action="store_true", help="print one JSON row per line (bench.py)")
    parser.add_argument("--no-breakdown", action="store_true", help="skip the fixed-cost breakdown")
    parser.add_argument("--sizes", nargs=2, type=int, metavar=("SMALL", "LARGE"), help="delta counts (tests)")
    parser.add_argument("--repeats", type=int, metavar="N", help="repeats of every measurement (tests)")
    args = parser.parse_args()
    sizes, repeats, stage_repeats = ((1_000, 50_000), (5, 3), 3) if args.quick else ((1_000, 200_000), (9, 5), 7)
    if args.sizes:
        sizes = (args.sizes[0], args.sizes[1])
    if args.repeats:
        repeats, stage_repeats = (args.repeats, args.repeats), args.repeats
    with tempfile.TemporaryDirectory(prefix="harness-cli-bench-") as tmp:
        bench = Bench(Path(tmp))
        bench.raw(10)  # warm: bytecode for both, the version cache for harness
        bench.harness_run(10)
        rows = process_rows(bench, sizes, repeats)
        if not args.no_breakdown:
            rows += breakdown_rows(bench, stage_repeats)
    if args.json:
        for r in rows:
            print(json.dumps(r))
    else:
        show(rows)
        print(f"\n(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores at the end: wall times on a "
              "busy machine are noisy)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
