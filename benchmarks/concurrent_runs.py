#!/usr/bin/env python3
"""100 runs at once in one process: every event of every run delivered, total throughput next to one run's, and
the memory each run costs.

    .venv/bin/python benchmarks/concurrent_runs.py            # 100 runs x 5,000 deltas; one run x 5,000 (median of 3)
    .venv/bin/python benchmarks/concurrent_runs.py --quick    # 100 runs x 1,000 deltas
    .venv/bin/python benchmarks/concurrent_runs.py --json     # one JSON object per row (for bench.py)
    .venv/bin/python benchmarks/concurrent_runs.py --runs 20 --deltas 500 --only claude   # a smoke run

Benchmarks only: it drives harness through its public Python API (`open_run`) and knows the stand-ins
(benchmarks/flood_codex.py, flood_claude.py) only by their environment interface (FLOOD_DELTAS), through a sh
wrapper given as `-o codex_bin=` / `-o claude_bin=`. Each scenario runs in a fresh child interpreter, so its
ru_maxrss is its own: the child imports harness and the provider, notes ru_maxrss (the baseline), opens all its
runs in one anyio task group, consumes every stream concurrently (each consumer counts its text deltas: a count
other than FLOOD_DELTAS, or a run that did not succeed, fails the benchmark), and reports the wall time from
opening the first run to the last `done`, the events seen and the peak RSS.

Rows per provider: one run's events/s (the same run, alone; median of `--repeats`), the total events/s of
`--runs` runs at once and its ratio to one run's (target >= 0.8), wall time, peak RSS and per run
((peak - baseline) / runs). Both rates include each run's start-up (spawning the stand-in, the handshake),
as a program opening many runs pays it; the rows "from the first delta" leave the start-up out of one run's
rate and count the many runs' from their first delta (stricter, but most start-ups still fall in that window);
the CPU rows say where the time goes: the harness process's CPU per event (start-up included) and the CPU
of the children (the stand-ins, their sh wrappers and the per-run supervisors).
"""

from __future__ import annotations

import sys
from pathlib import Path

# This file's name is the standard library's `concurrent` package's: run as a script, its directory is first on
# sys.path and `import asyncio` (which imports `concurrent.futures`) would find this file. Take it off first.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
sys.path.append(str(Path(__file__).resolve().parent))  # last: for `_child`
import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import resource  # noqa: E402
import statistics  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from typing import Any  # noqa: E402

from _child import ChildTimedOut, run_child  # noqa: E402 - after the path is set

HERE = Path(__file__).resolve().parent
FLOODS = {"codex-appserver": HERE / "flood_codex.py", "claude": HERE / "flood_claude.py"}
OPTIONS = {"codex-appserver": "codex_bin", "claude": "claude_bin"}
CHILD_DEADLINE = 900.0
TARGET = 0.8


def _wrapper(directory: Path, provider: str, deltas: int) -> Path:
    path = directory / ("codex" if provider == "codex-appserver" else "claude")
    path.write_text(f"#!/bin/sh\nexport FLOOD_DELTAS={deltas}\nexec '{sys.executable}' '{FLOODS[provider]}' \"$@\"\n")
    path.chmod(0o755)
    return path


def child(provider: str, runs: int, deltas: int) -> dict[str, Any]:
    """One scenario, in this (fresh) interpreter: `runs` runs of `deltas` text deltas at once."""
    import anyio

    from harness_core import open_run
    from harness_core.spec import AgentRunSpec

    before = resource.getrusage(resource.RUSAGE_SELF)
    baseline, cpu_before = before.ru_maxrss, before.ru_utime + before.ru_stime
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    with tempfile.TemporaryDirectory() as tmp:
        binary = _wrapper(Path(tmp), provider, deltas)
        runs_dir = Path(tmp) / "runs"
        texts: list[int] = [0] * runs
        events: list[int] = [0] * runs
        statuses: list[str | None] = [None] * runs
        fds_seen = [0]
        firsts: list[float] = [0.0] * runs

        async def one(index: int) -> None:
            ws = Path(tmp) / f"ws{index}"
            ws.mkdir()
            spec = AgentRunSpec(prompt="bench", cwd=ws, provider_options={OPTIONS[provider]: str(binary)})
            count = seen = 0
            async with open_run(spec, provider, runs_dir=runs_dir) as live:
                async for event in live:
                    seen += 1
                    if event.type == "text_delta":
                        if not count:
                            firsts[index] = time.perf_counter()
                        count += 1
            texts[index], events[index] = count, seen
            statuses[index] = live.result.status.value if live.result is not None else None

        async def watch_fds() -> None:
            while True:
                fds_seen[0] = max(fds_seen[0], len(os.listdir("/proc/self/fd")))
                await anyio.sleep(0.05)

        async def main() -> tuple[float, float]:
            started = time.perf_counter()
            async with anyio.create_task_group() as outer:
                outer.start_soon(watch_fds)
                async with anyio.create_task_group() as tg:
                    for index in range(runs):
                        tg.start_soon(one, index)
                outer.cancel_scope.cancel()
            end = time.perf_counter()
            return end - started, end - min((f for f in firsts if f), default=end)

        wall, streaming = anyio.run(main)
    usage, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    peak = usage.ru_maxrss
    bad = [i for i in range(runs) if texts[i] != deltas or statuses[i] != "success"]
    return {"provider": provider, "runs": runs, "deltas": deltas, "wall": wall, "streaming": streaming,
            "events": sum(events),
            "text_deltas": sum(texts), "bad_runs": [(i, texts[i], statuses[i]) for i in bad[:5]], "bad": len(bad),
            "cpu": usage.ru_utime + usage.ru_stime - cpu_before, "children_cpu": children.ru_utime + children.ru_stime,
            "baseline_kb": baseline, "peak_kb": peak, "max_fds": fds_seen[0], "fd_limit": soft}


def in_child(provider: str, runs: int, deltas: int) -> dict[str, Any]:
    """`child` in a fresh interpreter, in its own process group (killed at the deadline)."""
    try:
        status, out, err = run_child([sys.executable, __file__, "--child", provider, str(runs), str(deltas)],
                                     CHILD_DEADLINE)
    except ChildTimedOut:
        raise SystemExit(f"{provider}: {runs} runs did not finish within {CHILD_DEADLINE:g} s") from None
    if status != 0:
        raise SystemExit(f"{provider}: {runs} runs failed (exit {status}):\n{err[-3000:]}")
    result: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    if result["bad"]:
        raise SystemExit(f"{provider}: {result['bad']} of {runs} runs lost events or failed: {result['bad_runs']}")
    return result


def rows(provider: str, runs: int, deltas: int, repeats: int) -> list[dict[str, Any]]:
    singles, floods = [], []
    for _ in range(repeats):  # interleaved: noise from other work on the machine hits both alike
        singles.append(in_child(provider, 1, deltas))
        floods.append(in_child(provider, runs, deltas))
    one = statistics.median(r["events"] / r["wall"] for r in singles)
    one_streaming = statistics.median(r["events"] / r["streaming"] for r in singles)
    cpu_one = statistics.median(r["cpu"] / r["events"] for r in singles)
    many = sorted(floods, key=lambda r: r["events"] / r["wall"])[len(floods) // 2]  # the median run
    total = many["events"] / many["wall"]
    total_streaming = many["events"] / many["streaming"]
    per_run_mb = (many["peak_kb"] - many["baseline_kb"]) / 1024 / runs
    table, name = "concurrent", provider
    return [
        {"table": table, "name": f"{name}: one run alone, events/s ({deltas:,} deltas)", "value": one,
         "unit": "events/s", "reference": None, "ratio": 1.0, "target": None, "ok": None},
        {"table": table, "name": f"{name}: {runs} runs at once, total events/s", "value": total, "unit": "events/s",
         "reference": one, "ratio": total / one, "target": TARGET, "ok": total / one >= TARGET},
        {"table": table, "name": f"{name}: one run alone, events/s from its first delta", "value": one_streaming,
         "unit": "events/s", "reference": None, "ratio": 1.0, "target": None, "ok": None},
        {"table": table, "name": f"{name}: {runs} runs at once, total events/s from the first delta",
         "value": total_streaming, "unit": "events/s", "reference": one_streaming,
         "ratio": total_streaming / one_streaming, "target": None, "ok": None},
        {"table": table, "name": f"{name}: one run alone, CPU of the harness process per event",
         "value": cpu_one * 1e6, "unit": "µs", "reference": None, "ratio": 1.0, "target": None, "ok": None},
        {"table": table, "name": f"{name}: {runs} runs at once, CPU of the harness process per event",
         "value": many["cpu"] / many["events"] * 1e6, "unit": "µs", "reference": cpu_one * 1e6,
         "ratio": many["cpu"] / many["events"] / cpu_one, "target": None, "ok": None},
        {"table": table, "name": f"{name}: {runs} runs at once, CPU of the stand-ins (children)",
         "value": many["children_cpu"], "unit": "s", "reference": None, "ratio": None, "target": None, "ok": None},
        {"table": table, "name": f"{name}: {runs} runs at once, wall time", "value": many["wall"], "unit": "s",
         "reference": None, "ratio": None, "target": None, "ok": None},
        {"table": table, "name": f"{name}: {runs} runs at once, every event delivered",
         "value": many["text_deltas"], "unit": "text deltas", "reference": runs * deltas, "ratio": 1.0,
         "target": None, "ok": many["text_deltas"] == runs * deltas},
        {"table": table, "name": f"{name}: {runs} runs at once, peak RSS", "value": many["peak_kb"] / 1024,
         "unit": "MB", "reference": many["baseline_kb"] / 1024, "ratio": None, "target": None, "ok": None},
        {"table": table, "name": f"{name}: peak RSS per run ((peak - baseline) / {runs})", "value": per_run_mb,
         "unit": "MB", "reference": None, "ratio": None, "target": None, "ok": None},
        {"table": table, "name": f"{name}: {runs} runs at once, most open fds", "value": many["max_fds"],
         "unit": "fds", "reference": many["fd_limit"], "ratio": None, "target": None, "ok": None},
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="1,000 deltas per run")
    parser.add_argument("--json", action="store_true", help="one JSON object per row")
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--deltas", type=int)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--only", choices=sorted(FLOODS))
    parser.add_argument("--child", nargs=3, metavar=("PROVIDER", "RUNS", "DELTAS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child[0], int(args.child[1]), int(args.child[2]))))
        return 0
    deltas = args.deltas or (1_000 if args.quick else 5_000)
    repeats = 1 if args.quick else args.repeats
    for provider in [args.only] if args.only else sorted(FLOODS):
        result = rows(provider, args.runs, deltas, repeats)
        if args.json:
            for row in result:
                print(json.dumps(row, ensure_ascii=False), flush=True)
            continue
        print(f"{provider}: {args.runs} runs at once of {deltas:,} text deltas each, one process "
              f"(one run alone: median of {repeats})", flush=True)
        for row in result:
            value = f"{row['value']:12,.1f} {row['unit']}"
            ratio = f"  {row['ratio']:.2f}× one run" if row["unit"] in ("events/s", "µs") and row["reference"] else ""
            target = f"  (target ≥ {row['target']:g}×: {'ok' if row['ok'] else 'MISSED'})" if row["target"] else ""
            ref = f"  (baseline {row['reference']:.1f} MB)" if row["unit"] == "MB" and row["reference"] else ""
            print(f"  {row['name']:60} {value}{ratio}{target}{ref}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
