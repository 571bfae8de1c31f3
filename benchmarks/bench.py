#!/usr/bin/env python3
"""Every benchmark figure in one table: `tox -e bench` (or `.venv/bin/python benchmarks/bench.py [--quick]`).

Benchmarks only (outside the library): it knows the sub-benchmarks by file name and their `--json` row
protocol (benchmarks/README.md), nothing of harness itself. Each sub-benchmark runs as a child process
(its own process group, killed at its deadline) with `--json` (and `--quick` when given); every stdout line
that is a JSON object with a "table" key is a row, anything else is ignored. A sub-benchmark that does not
exist yet is a row "not available"; one that crashes or times out is a row saying so, and bench.py then
exits 1 naming it; so does a contender that failed (its row says FAILED, and why is printed after the table).
Otherwise it exits 0 whether or not the targets hold: it is a measurement, not a test.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from _child import ChildTimedOut, last_line_of_error, run_child

HERE = Path(__file__).resolve().parent
# (script, what it measures, extra arguments, deadline in seconds)
SUBS: list[tuple[str, str, list[str], float]] = [
    ("sdk_compare.py", "import time next to the SDKs", [], 600.0),
    ("api_events.py", "Python API per delta (raw, harness, SDKs); codex memory", [], 3600.0),
    ("cli_process.py", "harness run --json as a whole process", [], 1800.0),
    ("pty_render.py", "harness run rendering to a pty", [], 1800.0),
    ("concurrent_runs.py", "100 runs at once in one process", [], 1800.0),
    # its codex row would repeat api_events.py's memory row
    ("memory_claude.py", "claude memory, 1 GiB of command output", ["--only", "claude"], 1800.0),
    ("scrubber.py", "the secret scrubber on 10 MB lines", [], 600.0),
]
WIDTH = 120
COLUMNS = (("", 46), ("value", 15), ("reference", 9), ("ratio", 6), ("target", 13), ("ok", 3))


class SubFailed(Exception):
    def __init__(self, message: str, rows: list[dict[str, Any]] | None = None) -> None:
        super().__init__(message)
        self.rows = rows or []  # what it printed before it failed: still shown


def run_sub(script: Path, args: list[str], deadline: float) -> list[dict[str, Any]]:
    """The rows a sub-benchmark prints; SubFailed when it exits non-zero or outlives its deadline."""
    try:
        status, out, err = run_child([sys.executable, str(script), "--json", *args], deadline, cwd=str(HERE.parent))
    except ChildTimedOut as exc:
        raise SubFailed(str(exc)) from None
    rows = parse_rows(out)
    if status != 0:
        raise SubFailed(f"exit {status}" + (f": {last_line_of_error(err, status)}" if err.strip() else ""), rows)
    if not rows:
        raise SubFailed("printed no rows")
    return rows


def parse_rows(text: str) -> list[dict[str, Any]]:
    rows = []
    for line in text.splitlines():
        if not line.startswith("{"):
            continue
        with contextlib.suppress(ValueError):
            obj = json.loads(line)
            if isinstance(obj, dict) and "table" in obj and "name" in obj:
                rows.append(obj)
    return rows


def status_row(script: str, what: str, text: str) -> dict[str, Any]:
    return {"table": f"{script}: {what}", "name": text, "value": None, "unit": "", "reference": None,
            "ratio": None, "target": None, "ok": None}


def number(value: Any) -> str:
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return "" if value is None else str(value)
    size = abs(value)
    if size >= 1000:
        return f"{value:,.0f}"
    return f"{value:.0f}" if size >= 100 else f"{value:.1f}" if size >= 10 else f"{value:.2f}"


def target_text(target: Any, row: dict[str, Any] | None = None) -> str:
    """A number is an upper bound on the ratio, unless the row's own verdict shows it is a lower one."""
    if target is None:
        return ""
    if isinstance(target, (int, float)):
        ratio, ok = (row or {}).get("ratio"), (row or {}).get("ok")
        lower = isinstance(ratio, (int, float)) and isinstance(ok, bool) and ratio != target and (ratio > target) == ok
        return f"{'≥' if lower else '≤'} {target:g}×"
    return re.sub(r"(\d)x\b", "\\1×", str(target).replace("<=", "≤").replace(">=", "≥"))


def holds_text(row: dict[str, Any]) -> str:
    if row.get("target") is None:
        return ""
    return {True: "yes", False: "NO"}.get(row.get("ok"), "?")  # type: ignore[arg-type]


def cell(text: str, width: int, left: bool = False) -> str:
    text = text if len(text) <= width else text[: width - 1] + "…"
    return text.ljust(width) if left else text.rjust(width)


def format_table(rows: Iterable[dict[str, Any]], width: int = WIDTH) -> list[str]:
    """Rows grouped by table, in order of first appearance, as aligned plain-text lines."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault(str(r["table"]), []).append(r)
    rows = list(rows)
    others = sum(w for _, w in COLUMNS[1:]) + len(COLUMNS)
    longest = max((len(str(r["name"])) + 2 for r in rows), default=COLUMNS[0][1])
    columns = (("", max(COLUMNS[0][1], min(longest, width - others - 24))), *COLUMNS[1:])  # names whole if room
    fixed = sum(w for _, w in columns) + len(columns)
    header = " ".join(cell(name, w, i == 0) for i, (name, w) in enumerate(columns)) + " note"
    lines = [header, "-" * min(width, len(header) + 20)]
    for table, members in groups.items():
        lines.append(table)
        for r in members:
            value = r.get("value")
            unit = str(r.get("unit") or "")
            shown = "n/a" if value is None else f"{number(value)} {unit}".strip()
            ratio = r.get("ratio")
            parts = [cell("  " + str(r["name"]), columns[0][1], left=True), cell(shown, COLUMNS[1][1]),
                     cell(number(r.get("reference")), COLUMNS[2][1]),
                     cell("" if ratio is None else f"{number(ratio)}×", COLUMNS[3][1]),
                     cell(target_text(r.get("target"), r), COLUMNS[4][1]), cell(holds_text(r), COLUMNS[5][1])]
            note = str(r.get("note") or r.get("spread") or "")
            line = " ".join(parts)
            if note:
                line += " " + cell(note, max(8, width - fixed), left=True).rstrip()
            lines.append(line.rstrip())
    return lines


def measured(row: dict[str, Any]) -> str:
    if row.get("ratio") is not None:
        return f"{number(row['ratio'])}×"
    if row.get("value") is None:
        return "not measured"
    return f"{number(row['value'])} {row.get('unit') or ''}".strip()


def failures(rows: list[dict[str, Any]]) -> list[str]:
    """Contenders that failed (a row whose note says FAILED), each with its whole note: why."""
    return [f"  {r['name']}: {r['note']}" for r in rows if str(r.get("note") or "").startswith("FAILED")]


def verdict(rows: list[dict[str, Any]]) -> tuple[list[str], str]:
    """(lines about targets not measured and the ones missed, one per line; the last line: a summary)."""
    with_target = [r for r in rows if r.get("target") is not None]
    missed = [r for r in with_target if r.get("ok") is False]
    unknown = [r for r in with_target if r.get("ok") is None]
    notes = [f"{len(unknown)} target{'s' if len(unknown) != 1 else ''} not measured:"] if unknown else []
    notes += [f"  {r['name']}" for r in unknown]
    if missed:
        notes.append(f"{len(missed)} target{'s' if len(missed) != 1 else ''} do{'es' if len(missed) == 1 else ''}"
                     " not hold:")
        notes += [f"  {r['name']}: {measured(r)}, target {target_text(r['target'], r)}" for r in missed]
    if not missed and not unknown:
        return notes, "all targets hold"
    held = len(with_target) - len(missed) - len(unknown)
    return notes, (f"{held} of {len(with_target)} targets hold, {len(missed)} do not, {len(unknown)} not measured"
                   " (see above)")


def header() -> str:
    tree = subprocess.run(["git", "describe", "--always", "--dirty"], capture_output=True, text=True,
                          cwd=str(HERE.parent), timeout=30).stdout.strip() or "?"
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return (f"{time.strftime('%Y-%m-%d %H:%M')}  Python {platform.python_version()}  {os.cpu_count()} CPUs  "
            f"load {load}  tree {tree}  ({sys.executable})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="pass --quick to every sub-benchmark")
    parser.add_argument("--only", action="append", metavar="SCRIPT",
                        help="run only this sub-benchmark (repeatable), e.g. --only api_events.py")
    parser.add_argument("--width", type=int, default=max(WIDTH, shutil.get_terminal_size((WIDTH, 40)).columns),
                        help="the table's width in columns (default: the terminal's, at least 120)")
    args = parser.parse_args()
    known = {n for script, *_ in SUBS for name in script.split("|") for n in (name, name.removesuffix(".py"))}
    unknown = sorted(set(args.only or ()) - known)
    if unknown:
        names = ", ".join(script.split("|")[0] for script, *_ in SUBS)
        parser.error(f"no sub-benchmark named {', '.join(unknown)}; the names are: {names}")
    print(header(), flush=True)
    rows: list[dict[str, Any]] = []
    crashed: list[str] = []
    for script, what, extra, deadline in SUBS:
        names = script.split("|")  # alternative file names, the first that exists
        if args.only and not {n for name in names for n in (name, name.removesuffix(".py"))} & set(args.only):
            continue
        path = next((HERE / name for name in names if (HERE / name).exists()), None)
        if path is None:
            rows.append(status_row(names[0], what, "not available"))
            continue
        script = path.name
        started = time.perf_counter()
        print(f"running {script} ...", end=" ", flush=True)
        try:
            got = run_sub(path, [*extra, *(["--quick"] if args.quick else [])], deadline)
        except SubFailed as exc:
            crashed.append(f"{script} ({exc})")
            rows += exc.rows
            rows.append(status_row(script, what, f"CRASHED: {exc}"))
            print("crashed", flush=True)
            continue
        print(f"{len(got)} rows in {time.perf_counter() - started:.0f} s", flush=True)
        rows += got
    print()
    for line in format_table(rows, args.width):
        print(line)
    notes, last = verdict(rows)
    failed = failures(rows)
    print()
    for line in notes:
        print(line)
    if failed:
        print(f"{len(failed)} contender{'s' if len(failed) != 1 else ''} failed (a measurement could not be taken):")
        for line in failed:
            print(line)
    if crashed:
        print(f"{len(crashed)} benchmarks crashed: " + "; ".join(crashed))
    print(last)
    return 1 if crashed or failed else 0


if __name__ == "__main__":
    sys.exit(main())
