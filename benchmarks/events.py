#!/usr/bin/env python3
"""Per-event cost and memory of a run, side by side with the raw reference, on the same event stream.

    .venv/bin/python benchmarks/events.py            # per-event cost (200k deltas) and memory (1 GiB output)
    .venv/bin/python benchmarks/events.py --quick    # smaller sizes

The stream comes from benchmarks/flood_codex.py, a stand-in for `codex app-server` that writes pre-serialized
notification lines (so the producer costs almost nothing). Reference: read the child's stdout line by line and
`json.loads` each line. Harness: the real codex-appserver provider through the runner (transport, JSON-RPC
peer, mapping, stamping, run log, bounded stream to the consumer). Per-event cost is the slope between a
small and a large run, which cancels process start-up and the handshake.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
FLOOD = HERE / "flood_codex.py"


def raw_seconds(deltas: int) -> float:
    env = {**os.environ, "FLOOD_RAW": "1", "FLOOD_DELTAS": str(deltas)}
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, str(FLOOD)], stdout=subprocess.PIPE, env=env)
    assert proc.stdout is not None
    loads = json.loads
    count = 0
    for raw in proc.stdout:
        loads(raw)
        count += 1
    proc.wait()
    elapsed = time.perf_counter() - started
    assert count >= deltas
    return elapsed


def _wrapper(directory: Path, env: dict[str, str]) -> Path:
    path = directory / "codex"
    exports = "".join(f"export {k}={v}\n" for k, v in env.items())
    path.write_text(f"#!/bin/sh\n{exports}exec {sys.executable} {FLOOD} \"$@\"\n")
    path.chmod(0o755)
    return path


def harness_seconds(deltas: int, *, run_log: bool, slow_consumer: float = 0.0,
                    output_mb: int = 0) -> tuple[float, int]:
    import anyio

    from harness_core import open_run
    from harness_core.spec import AgentRunSpec

    with tempfile.TemporaryDirectory() as tmp:
        wrapper = _wrapper(Path(tmp), {"FLOOD_DELTAS": str(deltas), "FLOOD_OUTPUT_MB": str(output_mb)})
        spec = AgentRunSpec(prompt="bench", cwd=tmp, provider_options={"codex_bin": str(wrapper)})

        async def main() -> tuple[float, int]:
            started = time.perf_counter()
            count = 0
            async with open_run(spec, "codex-appserver", runs_dir=Path(tmp) / "runs", run_log=run_log) as live:
                async for _event in live:
                    count += 1
                    if slow_consumer:
                        await anyio.sleep(slow_consumer)
            assert live.result is not None and live.result.status.value == "success", live.result
            return time.perf_counter() - started, count

        return anyio.run(main)


def slope(measure, small: int, large: int, repeats: int) -> float:
    """Seconds per event: median over repeats of (t(large) - t(small)) / (large - small)."""
    samples = []
    for _ in range(repeats):
        samples.append((measure(large) - measure(small)) / (large - small))
    return statistics.median(samples)


def memory_child(output_mb: int, sleep: float) -> None:
    """Runs in a fresh interpreter so ru_maxrss measures this scenario only."""
    import harness_codex_appserver.provider  # noqa: F401

    from harness_core import open_run  # noqa: F401 - import cost is not what we measure

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    elapsed, events = harness_seconds(0, run_log=True, slow_consumer=sleep, output_mb=output_mb)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"before_kb": before, "peak_kb": peak, "seconds": elapsed, "events": events}))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--memory-child", nargs=2, metavar=("MB", "SLEEP"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.memory_child:
        memory_child(int(args.memory_child[0]), float(args.memory_child[1]))
        return 0
    small, large = (2_000, 50_000) if args.quick else (5_000, 200_000)
    repeats = 3
    output_mb = 128 if args.quick else 1024

    raw = slope(raw_seconds, small, large, repeats)
    off = slope(lambda n: harness_seconds(n, run_log=False)[0], small, large, repeats)
    on = slope(lambda n: harness_seconds(n, run_log=True)[0], small, large, repeats)
    print(f"per-event cost: item/agentMessage/delta, slope between {small:,} and {large:,} events, "
          f"median of {repeats}")
    print(f"  {'raw: readline + json.loads (reference)':44} {raw * 1e6:6.2f} µs/event")
    print(f"  {'harness codex-appserver, run log off':44} {off * 1e6:6.2f} µs/event   {off / raw:4.2f}× raw")
    print(f"  {'harness codex-appserver, run log on':44} {on * 1e6:6.2f} µs/event   {on / raw:4.2f}× raw"
          f"   (target ≤ 2×)")

    sleep = 0.001
    out = subprocess.run([sys.executable, __file__, "--memory-child", str(output_mb), str(sleep)],
                         capture_output=True, text=True, check=True)
    mem = json.loads(out.stdout.strip().splitlines()[-1])
    print(f"memory: one command printing {output_mb} MiB in 64 KiB output deltas, consumer sleeping "
          f"{sleep * 1000:g} ms per event")
    print(f"  peak RSS {mem['peak_kb'] / 1024:7.1f} MB   (after imports {mem['before_kb'] / 1024:.1f} MB; "
          f"{mem['events']:,} events in {mem['seconds']:.1f} s)")
    print("  reference: an official SDK buffered 865 MB for 1 GiB of output with a slow consumer")
    return 0


if __name__ == "__main__":
    sys.exit(main())
