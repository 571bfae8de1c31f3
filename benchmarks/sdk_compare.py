#!/usr/bin/env python3
"""Import time of harness next to the official Python SDKs (openai-codex, claude-agent-sdk).

    .venv/bin/python benchmarks/sdk_compare.py             # median of 5 fresh interpreters per module, after a warm-up
    .venv/bin/python benchmarks/sdk_compare.py --json      # one JSON row per figure (bench.py's protocol)

Benchmarks only (outside the library). Wall time of `python -c "import X"` in a fresh interpreter, next to
`python -c pass`. The per-event and memory comparisons with the SDKs that used to live here are in
benchmarks/api_events.py (the same contenders, each in a fresh child, interleaved).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from typing import Any

INSTALL = {"openai_codex": "pip install openai-codex==0.163.0",
           "claude_agent_sdk": "pip install claude-agent-sdk==0.2.184"}
CASES = [
    ("python -c pass (floor)", "pass", None),
    ("from harness_core import open_run", "from harness_core import open_run", "harness_core"),
    ("import openai_codex", "import openai_codex", "openai_codex"),
    ("import claude_agent_sdk", "import claude_agent_sdk", "claude_agent_sdk"),
]
DEADLINE = 120.0


def importable(python: str, module: str) -> bool:
    probe = f"import importlib.util, sys; sys.exit(0 if importlib.util.find_spec({module!r}) else 1)"
    return subprocess.run([python, "-c", probe], capture_output=True, timeout=DEADLINE).returncode == 0


def wall(python: str, code: str, runs: int) -> list[float]:
    samples = []
    for i in range(runs + 1):  # the first run warms the page cache and the .pyc files
        started = time.perf_counter()
        subprocess.run([python, "-c", code], check=True, capture_output=True, timeout=DEADLINE)
        if i:
            samples.append((time.perf_counter() - started) * 1000)
    return samples


def rows(python: str, runs: int) -> list[dict[str, Any]]:
    table = f"import time (fresh interpreter, median of {runs})"
    out: list[dict[str, Any]] = []
    floor = None
    for label, code, module in CASES:
        base = {"table": table, "name": label, "unit": "ms", "target": None, "ok": None}
        if module and not importable(python, module):
            hint = INSTALL.get(module, f"pip install -e <{module}>")
            out.append({**base, "value": None, "reference": None, "ratio": None, "note": f"not installed: {hint}"})
            continue
        samples = wall(python, code, runs)
        value = statistics.median(samples)
        floor = value if floor is None else floor
        ref = None if module is None else floor
        out.append({**base, "value": value, "reference": ref, "ratio": value / ref if ref else None,
                    "note": f"min {min(samples):.0f}, max {max(samples):.0f}"})
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", action="store_true", help="one JSON row per figure")
    parser.add_argument("--quick", action="store_true", help="median of 3 instead of 5")
    parser.add_argument("-n", type=int, help="runs per module (default 5, --quick 3)")
    parser.add_argument("--python", default=sys.executable, help="interpreter to time")
    args = parser.parse_args()
    for r in rows(args.python, args.n or (3 if args.quick else 5)):
        if args.json:
            print(json.dumps(r, ensure_ascii=False), flush=True)
        else:
            value = "n/a" if r["value"] is None else f"{r['value']:7.0f} ms"
            print(f"  {r['name']:40} {value:>10}   {r['note']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
