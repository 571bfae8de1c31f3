"""Print the per-env time table of one tox run from its `--result-json` report, longest env first.

Usage: python scripts/tox-times.py REPORT.json [WALL_SECONDS]. Knows tox's report format, nothing of Harness.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def rows(report: dict[str, object]) -> list[tuple[str, str, float, float]]:
    """(env, status, seconds in all, seconds of its commands) for each env of the report."""
    out: list[tuple[str, str, float, float]] = []
    envs = report.get("testenvs")
    for name, env in (envs.items() if isinstance(envs, dict) else []):
        result = env.get("result") if isinstance(env, dict) else None
        if not isinstance(result, dict):  # not run in this invocation, or a helper env (packaging)
            continue
        if result.get("skipped"):
            status = "skipped"
        elif result.get("success"):
            status = "OK"
        else:
            status = f"FAIL ({result.get('exit_code')})"
        seconds = float(result.get("duration") or 0.0)
        if seconds < 0:  # tox marks an env it never ran with a negative duration
            seconds = 0.0
        tests = sum(float(one.get("elapsed") or 0.0) for one in env.get("test") or [])
        out.append((name, status, seconds, tests))
    return sorted(out, key=lambda row: row[2], reverse=True)


def table(report: dict[str, object], wall: float | None) -> str:
    """The table as printed: one line per env, then the sum of the envs and the wall time of the whole run."""
    lines = [f"{'env':<24} {'status':<10} {'seconds':>8} {'commands':>9}"]
    found = rows(report)
    for name, status, seconds, tests in found:
        lines.append(f"{name:<24} {status:<10} {seconds:8.0f} {tests:9.0f}")
    lines.append(f"{'sum of envs':<35} {sum(row[2] for row in found):8.0f}")
    if wall is not None:
        lines.append(f"{'wall time':<35} {wall:8.0f}  ({wall / 60:.1f} min)")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    if len(argv) not in (2, 3):
        print("usage: tox-times.py REPORT.json [WALL_SECONDS]", file=sys.stderr)
        return 2
    path = Path(argv[1])
    try:
        report = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        print(f"tox-times: no per-env times: cannot read {path} ({exc}); tox may have stopped before writing it",
              file=sys.stderr)
        return 1
    print(table(report, float(argv[2]) if len(argv) == 3 else None))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
