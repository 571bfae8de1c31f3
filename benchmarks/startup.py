"""Start-up time of the `harness` CLI: wall time of `harness --help` next to `python -c pass`.

Budget: `harness --help` under 0.1 s (issue 31). Run: `.venv/bin/python benchmarks/startup.py [-n 20]`. Also
reports which heavy modules `--help` imported (it should import none of pydantic, anyio, structlog, pluggy, the
runner, the plugin host or the offline support: `harness_core.cli` imports only click at start-up).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

BUDGET_S = 0.1
HEAVY = ("pydantic", "anyio", "structlog", "pluggy", "harness_core._run", "harness_core.plugins",
         "harness_core.offline")


def _time(cmd: list[str], runs: int) -> list[float]:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        samples.append(time.perf_counter() - started)
    return samples


def _heavy_imports(args: list[str]) -> list[str]:
    probe = (
        "import sys\nfrom harness_core.cli import main\n"
        f"try:\n    main({args!r})\nexcept SystemExit:\n    pass\n"
        f"print('HEAVY=' + ','.join(m for m in {HEAVY!r} if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True).stdout
    marker = next(line for line in out.splitlines() if line.startswith("HEAVY="))
    return [m for m in marker.removeprefix("HEAVY=").split(",") if m]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("-n", "--runs", type=int, default=20)
    runs = parser.parse_args().runs
    cases = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "harness --help": [sys.executable, "-m", "harness_core.cli", "--help"],
        "harness run --help": [sys.executable, "-m", "harness_core.cli", "run", "--help"],
    }
    results = {}
    for name, cmd in cases.items():
        _time(cmd, 2)  # warm the page cache and .pyc files
        samples = _time(cmd, runs)
        results[name] = samples
        print(f"{name:<20} median {statistics.median(samples) * 1000:6.1f} ms   "
              f"min {min(samples) * 1000:6.1f} ms   max {max(samples) * 1000:6.1f} ms   ({runs} runs)")
    heavy = _heavy_imports(["--help"])
    print(f"heavy modules imported by --help: {', '.join(heavy) or 'none'}")
    help_median = statistics.median(results["harness --help"])
    verdict = "within" if help_median < BUDGET_S else "OVER"
    print(f"harness --help: {help_median * 1000:.0f} ms, {verdict} the {BUDGET_S * 1000:.0f} ms budget")
    return 0 if help_median < BUDGET_S and not heavy else 1


if __name__ == "__main__":
    sys.exit(main())
