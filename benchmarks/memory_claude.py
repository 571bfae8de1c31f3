#!/usr/bin/env python3
"""Peak RSS of the Harness process for a turn whose command prints 1 GiB, consumer sleeping 1 ms per event.

    .venv/bin/python benchmarks/memory_claude.py            # 1024 MiB, median of 3, contenders interleaved
    .venv/bin/python benchmarks/memory_claude.py --quick    # 128 MiB, once
    .venv/bin/python benchmarks/memory_claude.py --json     # one JSON object per row (for bench.py)

Claude: the REAL pinned `claude` (2.1.328; `--claude-bin`, else `claude` on PATH) plays a scripted turn against
Harness's embedded Messages backend on 127.0.0.1 (`harness_core.offline`): the model asks for one Bash call,
`head -c N /dev/zero | tr '\\0' x`, then answers. Claude Code bounds what it writes for it (2.1.328: the
`tool_result` content is a ~2.3 KB `<persisted-output>` preview, the first 64 MB of output go to a file under its
home, `tool_use_result.stdout` keeps 30,000 characters: a 33 KB `user` line), so Harness never sees the GiB.
A second Claude row is the largest line the real CLI writes for a Bash result: `BASH_MAX_OUTPUT_LENGTH=150000`
(its cap: larger values give 150,000 too) and output of `\\x01` bytes, which JSON escapes to 6 bytes each: a
913 KB `user` line.

Codex: the codex-appserver provider against `flood_codex.py` (`FLOOD_OUTPUT_MB`: 64 KiB `outputDelta`
notifications, a stand-in that blocks on the pipe when Harness reads slowly).

Each run is a fresh child interpreter (its own process group, killed on timeout) running the provider through
`open_run` with the run log on, sleeping 1 ms per event; the child reports its ru_maxrss and VmHWM (peak RSS),
its RSS after imports, the largest reaped child's ru_maxrss (the agent CLI itself, for the record: not Harness's
memory), events delivered, wall time. Without the claude CLI the Claude rows say "not available".

Layer: benchmarks (outside the library). Uses the public API (`open_run`, `harness_core.offline`) and knows the
provider names `claude` and `codex-appserver`; nothing in harness imports it. Rows share their table title with
api_events.py's memory table, so bench.py prints them in one group.
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
from pathlib import Path
from typing import Any

from _child import ChildTimedOut, last_line_of_error, run_child as run_process

HERE = Path(__file__).resolve().parent
FLOOD_CODEX = HERE / "flood_codex.py"
TARGET_MB = 100.0
TARGET = f"<= {TARGET_MB:g} MB"
SLEEP = 0.001
ANSWER = "Printed it."
CLI_CAP = 150_000
"""`BASH_MAX_OUTPUT_LENGTH` above this gives this many characters of `stdout` in Claude Code 2.1.328."""
CHILD_TIMEOUT = 900.0
INSTALL = "npm install -g @anthropic-ai/claude-code@2.1.328 (or pass --claude-bin)"

# (contender, label, what the turn's tool_result is, extra child parameters)
CONTENDERS: list[tuple[str, str, str, dict[str, Any]]] = [
    ("claude", "harness claude (real CLI)", "33 KB line", {}),
    ("claude", "harness claude (real CLI)", "913 KB line", {"max_output": CLI_CAP, "byte": "\\1"}),
    ("codex", "harness codex-appserver", "stand-in", {}),
]


# --- the child: one run, in a fresh interpreter ---------------------------------------------------------------


def _vmhwm_kb() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


async def _consume(spec: Any, provider: str, runs_dir: Path, sleep: float) -> dict[str, Any]:
    import anyio

    from harness_core import open_run

    started = time.perf_counter()
    events = 0
    tool_output: int | None = None
    async with open_run(spec, provider, runs_dir=runs_dir, run_log=True) as live:
        async for event in live:
            events += 1
            if event.type == "tool_result":
                assert not event.is_error and event.display.exit_code in (0, None), event
                tool_output = len(event.output or "")
            await anyio.sleep(sleep)
    seconds = time.perf_counter() - started
    result = live.result
    assert result is not None and result.status.value == "success", result
    assert tool_output is not None, "no tool_result event"
    return {"seconds": seconds, "events": events, "tool_output_chars": tool_output, "final_text": result.final_text}


def _log_bytes(runs_dir: Path) -> int:
    return sum(p.stat().st_size for p in runs_dir.glob("*.jsonl"))


def _claude_run(params: dict[str, Any]) -> dict[str, Any]:
    import anyio

    from harness_core import AgentRunSpec
    from harness_core.offline import offline_workspace
    from harness_core.scripted.scenarios import Expected, RunCommand, Say, Scenario

    size = int(params["mb"]) * 2**20
    command = f"head -c {size} /dev/zero | tr '\\0' '{params.get('byte', 'x')}'"
    scenario = Scenario("memory", (RunCommand(command), Say(ANSWER, chunks=3)), Expected(final_text=ANSWER))
    env = {"BASH_MAX_OUTPUT_LENGTH": str(params["max_output"])} if params.get("max_output") else {}
    spec = AgentRunSpec(prompt="print it", provider_options={"claude_bin": params["claude_bin"]}, env=env)
    with tempfile.TemporaryDirectory(prefix="bench-mem-") as tmp, \
            offline_workspace(spec, "claude", scenario) as offline:
        out = anyio.run(_consume, offline, "claude", Path(tmp), float(params["sleep"]))
        out["run_log_bytes"] = _log_bytes(Path(tmp))
    assert out["final_text"] == ANSWER, out["final_text"]
    return out


def _codex_run(params: dict[str, Any]) -> dict[str, Any]:
    import anyio

    from harness_core import AgentRunSpec

    with tempfile.TemporaryDirectory(prefix="bench-mem-") as tmp:
        wrapper = Path(tmp) / "codex"
        wrapper.write_text(f"#!/bin/sh\nexport FLOOD_DELTAS=0 FLOOD_OUTPUT_MB={int(params['mb'])}\n"
                           f"exec {sys.executable} {FLOOD_CODEX} \"$@\"\n")
        wrapper.chmod(0o755)
        spec = AgentRunSpec(prompt="bench", cwd=tmp, provider_options={"codex_bin": str(wrapper)})
        runs = Path(tmp) / "runs"
        runs.mkdir()
        out = anyio.run(_consume, spec, "codex-appserver", runs, float(params["sleep"]))
        out["run_log_bytes"] = _log_bytes(runs)
        return out


def child_main(params: dict[str, Any]) -> None:
    """Import everything first (import cost is not what is measured), then play one run and print one JSON line."""
    import anyio  # noqa: F401

    from harness_core import open_run  # noqa: F401
    from harness_core.offline import offline_workspace  # noqa: F401

    if params["contender"] == "claude":
        import harness_claude.provider  # noqa: F401
        run = _claude_run
    else:
        import harness_codex_appserver.provider  # noqa: F401
        run = _codex_run
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    out = run(params)
    out.update(before_kb=before, peak_kb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, vmhwm_kb=_vmhwm_kb(),
               cli_peak_kb=resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
    out.pop("final_text", None)
    print(json.dumps(out))


# --- the parent: children, medians, rows ----------------------------------------------------------------------


class ChildFailed(Exception):
    pass


def measure_in_child(params: dict[str, Any], timeout: float = CHILD_TIMEOUT) -> dict[str, Any]:
    """One run in a fresh interpreter in its own process group; the whole group is killed afterwards."""
    argv = [sys.executable, str(Path(__file__).resolve()), "--child", json.dumps(params)]
    try:
        status, out, err = run_process(argv, timeout)
    except ChildTimedOut as exc:
        raise ChildFailed(str(exc)) from None
    if status != 0:
        raise ChildFailed(last_line_of_error(err, status))
    return dict(json.loads(out.strip().splitlines()[-1]))


def find_claude(explicit: str | None) -> str | None:
    if explicit:
        return explicit if os.access(explicit, os.X_OK) else None
    tools = os.environ.get("HARNESS_TOOLS_DIR")
    candidates = [shutil.which("claude"), str(Path(tools) / "bin" / "claude") if tools else None]
    return next((c for c in candidates if c and os.access(c, os.X_OK)), None)


def cli_version(binary: str) -> str:
    try:
        out = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return "?"
    return out.split()[0] if out.split() else "?"


def _mb(kb: float) -> float:
    return kb / 1024


def table(mb: int) -> str:
    return f"memory ({mb:,} MiB of command output, consumer sleeping 1 ms/event, peak RSS)"


def _row(table_name: str, name: str, value: float | None, *, target: str | None = TARGET, ok: bool | None = None,
         **extra: Any) -> dict[str, Any]:
    return {"table": table_name, "name": name, "value": value, "unit": "MB", "reference": None, "ratio": None,
            "target": target, "ok": ok, **extra}


def rows(mb: int, repeats: int, claude_bin: str | None, only: str | None) -> list[dict[str, Any]]:
    chosen = [(i, c) for i, c in enumerate(CONTENDERS) if only in (None, c[0])]
    samples: dict[int, list[dict[str, Any]]] = {i: [] for i, _ in chosen}
    errors: dict[int, str] = {}
    version = cli_version(claude_bin) if claude_bin else None
    for _ in range(repeats):  # interleaved: claude, claude worst line, codex, claude, ...
        for i, (contender, _label, _what, extra) in chosen:
            if i in errors or (contender == "claude" and claude_bin is None):
                continue
            params = {"contender": contender, "mb": mb, "sleep": SLEEP, "claude_bin": claude_bin, **extra}
            try:
                samples[i].append(measure_in_child(params))
            except ChildFailed as exc:
                errors[i] = str(exc)
    out: list[dict[str, Any]] = []
    for i, (contender, label, what, _extra) in chosen:
        if contender == "claude" and version:
            label = label.replace("(real CLI)", version)
        size = f"{mb // 1024} GiB" if mb % 1024 == 0 else f"{mb} MiB"
        name = f"{label}, {size}, {what}"
        if contender == "claude" and claude_bin is None:
            out.append(_row(table(mb), name, None, note=f"not available: claude CLI not found; {INSTALL}"))
            continue
        got = samples[i]
        if i in errors or not got:
            out.append(_row(table(mb), name, None, ok=False, note=f"failed: {errors.get(i, 'no sample')}"))
            continue
        peaks = [_mb(max(s["peak_kb"], s["vmhwm_kb"])) for s in got]
        peak = statistics.median(peaks)
        events = statistics.median(s["events"] for s in got)
        seconds = statistics.median(s["seconds"] for s in got)
        after = statistics.median(_mb(s["before_kb"]) for s in got)
        note = (f"after imports {after:.1f} MB; {events:.0f} events, {seconds:.1f} s; range "
                f"{min(peaks):.1f}–{max(peaks):.1f} over {len(got)}")
        out.append(_row(table(mb), name, round(peak, 1), ok=peak <= TARGET_MB, note=note,
                        spread=f"{min(peaks):.1f}–{max(peaks):.1f}", samples=len(got),
                        after_imports_mb=round(statistics.median(_mb(s["before_kb"]) for s in got), 1),
                        events=statistics.median(s["events"] for s in got),
                        seconds=round(statistics.median(s["seconds"] for s in got), 2),
                        tool_output_chars=got[0]["tool_output_chars"], run_log_bytes=got[0]["run_log_bytes"]))
        if contender == "claude":
            cli = statistics.median(_mb(s["cli_peak_kb"]) for s in got)
            out.append(_row(table(mb), f"  claude CLI itself, {what} (not Harness)", round(cli, 1), target=None,
                            note="largest reaped child's ru_maxrss"))
    return out


def print_table(result: list[dict[str, Any]], mb: int, repeats: int) -> None:
    print(f"memory: one Bash command printing {mb:,} MiB, consumer sleeping {SLEEP * 1000:g} ms per event, run log "
          f"on; peak RSS of the Harness process, median of {repeats} (range in brackets)")
    for row in result:
        if row["value"] is None:
            print(f"  {row['name']:52} {row['note']}")
            continue
        value = f"{row['value']:7.1f} {row['unit']}"
        target = f"  (target {row['target']}: {'ok' if row['ok'] else 'MISSED'})" if row["target"] else ""
        spread = f"  [{row['spread']}]" if "spread" in row else ""
        print(f"  {row['name']:52} {value}{target}{spread}")
        if "events" in row:
            print(f"  {'':4}after imports {row['after_imports_mb']:.1f} MB; {row['events']:,.0f} events in "
                  f"{row['seconds']:.1f} s; tool_result output {row['tool_output_chars']:,} chars; run log "
                  f"{row['run_log_bytes']:,} B")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="128 MiB, once")
    parser.add_argument("--json", action="store_true", help="one JSON object per row")
    parser.add_argument("--mb", type=int, help="MiB of command output (default 1024, --quick 128)")
    parser.add_argument("--repeats", type=int, help="runs per contender (default 3, --quick 1)")
    parser.add_argument("--claude-bin", help="the claude CLI (default: claude on PATH, or $HARNESS_TOOLS_DIR/bin)")
    parser.add_argument("--only", choices=("claude", "codex"))
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child_main(json.loads(args.child))
        return 0
    mb = args.mb or (128 if args.quick else 1024)
    repeats = args.repeats or (1 if args.quick else 3)
    result = rows(mb, repeats, find_claude(args.claude_bin), args.only)
    if args.json:
        for row in result:
            print(json.dumps(row, ensure_ascii=False))
    else:
        print_table(result, mb, repeats)
    return 1 if any(str(row.get("note", "")).startswith("failed") for row in result) else 0


if __name__ == "__main__":
    sys.exit(main())
