#!/usr/bin/env python3
"""Batches: N offline tasks at concurrency 1, 4, 8, 16, on the fake CLIs and on the real ones, local and Ray side by
side — tasks per minute, peak RSS of the whole process tree and the peak of live runs (the bound holding).

    .venv/bin/python benchmarks/batch.py                       # 100 tasks; 1,4,8,16; codex-appserver and claude
    .venv/bin/python benchmarks/batch.py --only fake --tasks 20 --concurrency 1,4
    .venv/bin/python benchmarks/batch.py --providers claude,gemini --only real --engines local
    .venv/bin/python benchmarks/batch.py --json                # one JSON object per row (bench.py's protocol)

Benchmarks only: it drives `harness_core.batch.Batch` through its public API. Every task plays the `tools` scenario
(a command, a read, an edit, a write) in its own workspace. "fake" rows: the provider's shipped fake CLI (the one
its fast tests check against the real protocol) plays the scenario itself; each task gets its own directory,
seeded with the scenario's files before the clock starts. "real" rows: the pinned real CLI (found on PATH: put
.tools/bin first) against the embedded scripted model backend on 127.0.0.1 (`offline=True`; the batch makes a
temporary workspace per task). Nothing leaves 127.0.0.1.

Each configuration (provider, fake/real, engine, concurrency) runs in a fresh child interpreter in its own
session; this process samples /proc every 50 ms and sums the RSS of the child and every process it started
(descendants, and anything left in its session), and reports the peak of that sum. tasks/min is the wall clock
of the whole batch, from `Batch(...)` to its last result (the engine's start, e.g. Ray's, included; "start" is
when the first task started). "live" is `stats.peak_running`, which must not exceed the concurrency. A task that
does not succeed is counted in "ok" (and its first error shown); the figures are printed, never asserted.
The `ray` column appears when `harness_core.executor_names()` has "ray".
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
CHILD_DEADLINE = 1800.0
SAMPLE_EVERY = 0.05
SCENARIO = "tools"
PAGE = os.sysconf("SC_PAGE_SIZE")
RAY_MISSING = "ray: not installed (pip install -e 'executors/ray[ray]')"

# provider → (module, writer, provider option): the fake CLI its distribution ships for its own fast tests
FAKES: dict[str, tuple[str, str, str]] = {
    "codex-appserver": ("harness_codex_appserver.testing", "write_fake_codex", "codex_bin"),
    "codex-exec": ("harness_codex_exec.testing", "write_fake_codex", "codex_bin"),
    "claude": ("harness_claude.testing", "write_fake_claude", "claude_bin"),
    "acp": ("harness_acp.testing", "write_fake_agent", "command"),  # the fake ACP agent, as the generic provider
}
REAL = ("codex-appserver", "codex-exec", "claude", "gemini", "qwen", "codex-acp", "claude-acp")
NO_FAKE = "no fake CLI of its own (the fake ACP agent plays under provider `acp`)"
NO_REAL = "no real CLI of its own (a named ACP provider is: gemini, qwen, codex-acp, claude-acp)"


# --- the child: one configuration ----------------------------------------------------------------------------------

def child(config: dict[str, Any]) -> dict[str, Any]:
    """Play one batch in this (fresh) interpreter; what it measured, as JSON-able data."""
    import resource

    import anyio

    from harness_core.batch import Batch, BatchTask, BatchUpdate
    from harness_core.offline import scenario_named, seed_workspace
    from harness_core.spec import AgentRunSpec

    provider, fake, count = config["provider"], config["cli"] == "fake", config["tasks"]
    scenario = scenario_named(SCENARIO)
    with tempfile.TemporaryDirectory(prefix="harness-bench-batch-") as tmp:
        root = Path(tmp)
        tasks: list[BatchTask] = []
        options: dict[str, Any] = {}
        if fake:
            module, writer, option = FAKES[provider]
            (root / "bin").mkdir()
            binary = getattr(__import__(module, fromlist=[writer]), writer)(root / "bin", scenario=SCENARIO)
            options = {option: str(binary)}
        for n in range(count):
            cwd: dict[str, Any] = {}
            if fake:  # the fake plays the scenario; its workspace is made here, before the clock starts
                ws = root / "ws" / f"t{n:03d}"
                ws.mkdir(parents=True)
                seed_workspace(scenario, ws)
                cwd = {"cwd": ws}
            spec = AgentRunSpec(prompt=f"task {n}: run the tools", provider_options=options, **cwd)
            tasks.append(BatchTask(f"t{n:03d}", spec))
        first: list[float] = []
        began: list[float] = []

        def on_update(update: BatchUpdate) -> None:
            if update.kind == "started" and not first:
                first.append(time.perf_counter())

        baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        statuses: dict[str, int] = {}
        errors: list[str] = []

        async def main() -> tuple[float, int]:
            began.append(time.perf_counter())
            batch = Batch(tasks, provider=provider, concurrency=config["concurrency"], executor=config["engine"],
                          offline=not fake, scenario=scenario, runs_dir=root / "runs", on_update=on_update)
            with anyio.fail_after(CHILD_DEADLINE - 60):
                async for result in batch.results():
                    statuses[result.status] = statuses.get(result.status, 0) + 1
                    if result.ok and set(scenario.writes) <= set(result.files_changed):
                        statuses["did_tools"] = statuses.get("did_tools", 0) + 1
                    elif result.ok and len(errors) < 3:
                        errors.append(f"{result.id}: succeeded, but changed {list(result.files_changed)}, not "
                                      f"{list(scenario.writes)}")
                    if result.status != "success" and len(errors) < 3:
                        errors.append(f"{result.id}: {result.error_code}: {result.error}")
            return time.perf_counter() - began[0], batch.stats.peak_running

        wall, peak_running = anyio.run(main)
        start = first[0] - began[0] if first else None
    return {**config, "wall": wall, "start": start, "peak_running": peak_running, "statuses": statuses,
            "errors": errors, "driver_baseline_kb": baseline,
            "driver_peak_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}


# --- this process: the child's tree, sampled -----------------------------------------------------------------------

def _processes() -> dict[int, tuple[int, int, int, int]]:
    """pid → (ppid, session, rss bytes, start time) of every process this user can read."""
    out: dict[int, tuple[int, int, int, int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
        except OSError:  # gone, or not ours to read
            continue
        # after the name: state ppid pgrp session ... starttime (22nd field) ... rss (24th)
        out[int(name)] = (int(fields[1]), int(fields[3]), int(fields[21]) * PAGE, int(fields[19]))
    return out


def tree_of(root: int, table: dict[int, tuple[int, int, int, int]]) -> dict[int, int]:
    """pid → start time of `root`, its descendants and every process in its session (`root` leads it)."""
    kids: dict[int, list[int]] = {}
    for pid, (ppid, _sid, _rss, _start) in table.items():
        kids.setdefault(ppid, []).append(pid)
    found = {pid for pid, (_ppid, sid, _rss, _start) in table.items() if sid == root}
    todo = [root] if root in table else []
    while todo:
        pid = todo.pop()
        found.add(pid)
        todo.extend(k for k in kids.get(pid, ()) if k not in found)
    return {pid: table[pid][3] for pid in found}


def tree_rss(root: int) -> tuple[int, dict[int, int]]:
    """(summed RSS in bytes, {pid: start time}) of `root`'s tree now."""
    table = _processes()
    tree = tree_of(root, table)
    return sum(table[pid][2] for pid in tree), tree


def run_sampled(argv: list[str], deadline: float) -> tuple[int, str, str, int, int]:
    """Run `argv` in its own session, sampling its tree's RSS; (status, stdout, stderr, peak bytes, most processes).
    Whatever it left running is killed afterwards (its session, and each process seen in its tree that is still
    the same process)."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(argv, stdout=out, stderr=err, stdin=subprocess.DEVNULL, text=True,
                                start_new_session=True)
        peak = most = 0
        seen: dict[int, int] = {}
        ends = time.monotonic() + deadline
        try:
            while proc.poll() is None:
                if time.monotonic() > ends:
                    err.write(f"\ntimed out after {deadline:.0f} s\n")
                    break
                rss, tree = tree_rss(proc.pid)
                peak, most = max(peak, rss), max(most, len(tree))
                seen.update(tree)
                time.sleep(SAMPLE_EVERY)
        finally:
            _reap(proc, seen)
        out.seek(0)
        err.seek(0)
        return proc.returncode, out.read(), err.read(), peak, most


def _reap(proc: subprocess.Popen[str], seen: dict[int, int]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    table = _processes()
    for pid, start in seen.items():
        if pid != proc.pid and pid in table and table[pid][3] == start:  # the same process, not a reused pid
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)


def measure(config: dict[str, Any]) -> dict[str, Any]:
    """One configuration in a child: its figures, or {"failed": why}."""
    status, out, err, peak, most = run_sampled(
        [sys.executable, str(Path(__file__).resolve()), "--child", json.dumps(config)], CHILD_DEADLINE)
    lines = [line for line in out.splitlines() if line.startswith("{")]
    if status != 0 or not lines:
        tail = [line for line in err.strip().splitlines() if line.strip()][-1:]
        return {**config, "failed": (tail[0] if tail else f"exit {status}")[:200]}
    result: dict[str, Any] = json.loads(lines[-1])
    return {**result, "tree_peak_mb": peak / 2**20, "processes": most,
            "tasks_per_min": config["tasks"] / result["wall"] * 60}


# --- what is run, and the table ------------------------------------------------------------------------------------

def configurations(providers: list[str], clis: list[str], engines: list[str], levels: list[int],
                   tasks: int) -> tuple[list[dict[str, Any]], list[str]]:
    """The configurations to measure, and a note for each provider/cli pair that cannot be."""
    configs: list[dict[str, Any]] = []
    notes: list[str] = []
    for provider in providers:
        for cli in clis:
            if cli == "fake" and provider not in FAKES:
                notes.append(f"{provider} fake: {NO_FAKE}")
                continue
            if cli == "real" and provider not in REAL:
                notes.append(f"{provider} real: {NO_REAL}")
                continue
            for level in levels:  # engines innermost: local and ray measured back to back, as they are shown
                configs.extend({"provider": provider, "cli": cli, "engine": engine, "concurrency": level,
                                "tasks": tasks} for engine in engines)
    return configs, notes


def _key(r: dict[str, Any]) -> tuple[str, str, str]:
    return r["provider"], r["cli"], r["engine"]


def reference_rates(results: list[dict[str, Any]]) -> dict[tuple[str, str, str], float]:
    """tasks/min at the lowest concurrency measured, per provider, cli and engine: the reference."""
    best: dict[tuple[str, str, str], tuple[int, float]] = {}
    for r in results:
        if "failed" not in r and (_key(r) not in best or r["concurrency"] < best[_key(r)][0]):
            best[_key(r)] = (r["concurrency"], r["tasks_per_min"])
    return {key: rate for key, (_level, rate) in best.items()}


def _cells(r: dict[str, Any] | None, reference: float | None) -> str:
    if r is None:
        return f"{'':48}"
    if "failed" in r:
        return f"{'FAILED: ' + r['failed']:48.48}"
    ok = r["statuses"].get("did_tools", 0)
    ratio = f"{r['tasks_per_min'] / reference:.2f}×" if reference else ""
    live = f"{r['peak_running']}{'' if r['peak_running'] <= r['concurrency'] else '!'}"
    return (f"{r['tasks_per_min']:9.1f} {ratio:>6} {r['start'] or 0:6.2f} {r['tree_peak_mb']:8.0f} {live:>4} "
            f"{ok:>4}/{r['tasks']:<4}")


def table(results: list[dict[str, Any]], engines: list[str]) -> list[str]:
    """The results, local and ray side by side: one line per provider, cli and concurrency."""
    refs = reference_rates(results)
    by = {(*_key(r), r["concurrency"]): r for r in results}
    head = f"{'tasks/min':>9} {'×c1':>6} {'start':>6} {'RSS MB':>8} {'live':>4} {'ok':>9}"
    lines = [f"{'':26} | " + " | ".join(f"{e:^48}" for e in engines),
             f"{'provider':16} {'cli':4} {'conc':>4} | " + " | ".join(f"{head:48}" for _ in engines)]
    rows = dict.fromkeys((r["provider"], r["cli"], r["concurrency"]) for r in results)
    for provider, cli, level in rows:
        cells = [_cells(by.get((provider, cli, e, level)), refs.get((provider, cli, e))) for e in engines]
        lines.append(f"{provider:16} {cli:4} {level:>4} | " + " | ".join(cells))
    for r in results:
        if "failed" not in r and r["errors"]:
            lines.append(f"  {r['provider']} {r['cli']} {r['engine']} c={r['concurrency']}: {r['errors'][0]}")
    return lines


def json_rows(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The results in bench.py's row protocol (benchmarks/README.md)."""
    refs, rows = reference_rates(results), list[dict[str, Any]]()
    for r in results:
        where = f"{r['provider']} {r['cli']} {r['engine']} c={r['concurrency']}"
        group = f"batch: {r['tasks']} `{SCENARIO}` tasks"
        if "failed" in r:
            rows.append({"table": group, "name": f"{where}: tasks/min", "value": None, "unit": "tasks/min",
                         "reference": None, "ratio": None, "target": None, "ok": None,
                         "note": f"FAILED: {r['failed']}"})
            continue
        ref = refs.get(_key(r))
        rows += [
            {"table": group, "name": f"{where}: tasks/min", "value": r["tasks_per_min"], "unit": "tasks/min",
             "reference": ref, "ratio": r["tasks_per_min"] / ref if ref else None, "target": None, "ok": None,
             "note": f"{r['statuses'].get('did_tools', 0)}/{r['tasks']} succeeded with the scenario's edits; "
                     f"first task started after {r['start'] or 0:.2f} s"},
            {"table": group, "name": f"{where}: peak RSS of the process tree", "value": r["tree_peak_mb"],
             "unit": "MB", "reference": None, "ratio": None, "target": None, "ok": None,
             "note": f"driver alone {r['driver_peak_kb'] / 1024:.0f} MB; at most {r['processes']} processes"},
            {"table": group, "name": f"{where}: peak live runs", "value": r["peak_running"], "unit": "runs",
             "reference": r["concurrency"], "ratio": None, "target": f"<= {r['concurrency']}",
             "ok": r["peak_running"] <= r["concurrency"]},
        ]
    return rows


def _list(text: str) -> list[str]:
    return [item.strip() for item in text.split(",") if item.strip()]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", type=int, default=100, help="tasks per batch (default 100)")
    parser.add_argument("--concurrency", default="1,4,8,16", help="comma-separated levels (default 1,4,8,16)")
    parser.add_argument("--providers", default="codex-appserver,claude",
                        help=f"comma-separated; fakes: {', '.join(FAKES)}; real: {', '.join(REAL)}")
    parser.add_argument("--engines", default="local,ray", help="comma-separated (default local,ray: ray if installed)")
    parser.add_argument("--only", choices=("fake", "real"), help="only the fake CLIs, or only the real ones")
    parser.add_argument("--json", action="store_true", help="one JSON object per row")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(json.loads(args.child))))
        return 0
    from harness_core.batch import executor_names

    installed = executor_names()
    if "ray" in installed and importlib.util.find_spec("ray") is None:  # harness-ray without Ray itself
        installed.remove("ray")
    wanted = _list(args.engines)
    unknown = [e for e in wanted if e not in installed and e != "ray"]
    if unknown:
        parser.error(f"no executor named {', '.join(unknown)}; installed: {', '.join(installed)}")
    engines = [e for e in wanted if e in installed]
    notes = [RAY_MISSING] if "ray" in wanted and "ray" not in installed else []
    levels = sorted({int(level) for level in _list(args.concurrency)})
    if not engines or not levels or min(levels) < 1 or args.tasks < 1:
        parser.error("nothing to measure: give --tasks >= 1, --concurrency levels >= 1 and an installed engine")
    configs, skipped = configurations(_list(args.providers), [args.only] if args.only else ["fake", "real"],
                                      engines, levels, args.tasks)
    notes += skipped
    if not args.json:
        print(f"batch: {args.tasks} tasks of the `{SCENARIO}` scenario (a command, a read, an edit, a write), each in "
              f"its own workspace; load {os.getloadavg()[0]:.1f}; ×c1: tasks/min ÷ the lowest concurrency's; start: "
              "s to the first task; RSS: peak of the whole tree; live: peak live runs (≤ conc)", flush=True)
        for note in notes:
            print(note, flush=True)
    results = []
    for config in configs:
        results.append(measure(config))
        if not args.json:
            print(f"  measured {config['provider']} {config['cli']} {config['engine']} c={config['concurrency']}",
                  file=sys.stderr, flush=True)
    if args.json:
        for note in notes:
            print(json.dumps({"table": f"batch: {args.tasks} `{SCENARIO}` tasks", "name": note.split(":")[0],
                              "value": None, "unit": "", "reference": None, "ratio": None, "target": None,
                              "ok": None, "note": note}))
        for row in json_rows(results):
            print(json.dumps(row, ensure_ascii=False), flush=True)
        return 0
    for line in table(results, engines):
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
