#!/usr/bin/env python3
"""The secret scrubber on big lines: a 10 MB line through every path a line takes to a file, and adversarial shapes
from 1 KB to 10 MB, to show the time grows linearly.

    .venv/bin/python benchmarks/scrubber.py            # a table; --json: bench.py's rows; --quick: 1 repeat
    .venv/bin/python benchmarks/scrubber.py --largest 100000    # up to 100 KB only (its tests)

Benchmarks only (outside the library). Each figure is the median of `--repeats` runs in this process (`scrub` is
pure: nothing to start), in CPU seconds of this process (what the event loop waits for; on a shared machine the
wall time adds whatever the other processes take). The real-shaped line is a tool result holding 10 MB of this
repository's own Python source (as if the agent `cat`-ed it), with a URL with user-info, a credential shape and a
run's secret planted in it; its reference is `json.loads` + `json.dumps` of the same line (what the line costs
without any scrubbing).
Each adversarial shape's reference is ten times its 1 MB figure: a ratio near 1 is linear, a quadratic scrubber
gives 10 (the one before issue 26 took 56 s for 100 KB of letters and hours for 10 MB).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from harness_core.redaction import RunSecrets, scrub

ROOT = Path(__file__).resolve().parent.parent
MB = 1_000_000
SIZES = {1_000: "1 KB", 10_000: "10 KB", 100_000: "100 KB", MB: "1 MB", 10 * MB: "10 MB"}
SECRET = "spec-env-secret-4f2a9c"
PLANTED = f" https://user:pw@example.test/x sk-proj-Zx81Kq0Lm2Nb7Vc4 {SECRET} "
LINEAR_TARGET = 3.0
"""t(10 MB) ÷ 10·t(1 MB): at most 3 (linear is ~1, more when 10 MB leaves the caches; quadratic is 10)."""
LINE_TARGET_S = 1.0
"""A 10 MB line through the run log's scrubbing: at most 1 s (the event loop waits for it)."""
ADVERSARIAL: dict[str, str | None] = {
    "a run of letters": "a",
    "`sk-` repeated": "sk-",
    "`a://` then letters": None,
    "`a://` repeated": "a://",
    "`a:` repeated (no `@`)": "a:",
    "`Bearer ` repeated": "Bearer ",
    "`Bearer tok ` repeated": "Bearer abcdefgh ",
    "`u://a@` repeated": "u://a@",
    "`sk-!` repeated": "sk-!",
    "whitespace": " \t\n",
    "a base64 blob": "Qm9vbXN0aWNr+/=",
}


def adversarial(unit: str | None, size: int) -> str:
    if unit is None:
        return "a://" + "a" * (size - 4)
    return (unit * (size // len(unit) + 1))[:size]


def source_text(size: int) -> str:
    """`size` characters of this repository's Python source, repeated, with `PLANTED` every ~1 MB."""
    files = sorted((ROOT / "harness_core").rglob("*.py"))
    corpus = "".join(path.read_text() for path in files)
    chunk = (corpus * (MB // len(corpus) + 1))[: MB - len(PLANTED)] + PLANTED
    return (chunk * (size // len(chunk) + 1))[:size]


def timed(work: Callable[[], Any], repeats: int) -> float:
    samples = []
    for _ in range(repeats):
        started = time.process_time()
        work()
        samples.append(time.process_time() - started)
    return statistics.median(samples)


def line_rows(size: int, repeats: int) -> list[dict[str, Any]]:
    label = SIZES[size]
    table = f"scrubber: a {label} line (this repository's source, planted secrets; median of {repeats})"
    secrets = RunSecrets([SECRET])
    text = source_text(size)
    line = json.dumps({"type": "tool_result", "run_id": "r", "seq": 7, "ts": 0.0, "tool_id": "t1", "name": "shell",
                       "output": text}, ensure_ascii=False, separators=(",", ":")).encode()
    raw = timed(lambda: json.dumps(json.loads(line), ensure_ascii=False, separators=(",", ":")), repeats)
    out = secrets.json_line(line)
    hidden = all(s.encode() not in out for s in ("user:pw@", "sk-proj-Zx81", SECRET))
    rows = []
    for name, work in ((f"run log: `RunSecrets.json_line`, a {label} tool result", lambda: secrets.json_line(line)),
                       (f"wire log: `RunSecrets.text`, the same {label} line", lambda: secrets.text(line.decode())),
                       (f"`scrub`, the {label} text alone", lambda: scrub(text, secrets.known))):
        value = timed(work, repeats)
        rows.append({"table": table, "name": name, "value": value, "unit": "s", "reference": raw,
                     "ratio": value / raw, "target": f"<= {LINE_TARGET_S:g} s", "ok": value <= LINE_TARGET_S and hidden,
                     "note": "reference: json.loads + json.dumps of the line"
                             + ("" if hidden else "; FAILED: a planted secret was not hidden")})
    return rows


def adversarial_rows(largest: int, repeats: int) -> list[dict[str, Any]]:
    sizes = [size for size in SIZES if size <= largest]
    table = (f"scrubber: adversarial text, 1 KB .. {SIZES[largest]} (`scrub`; median of {repeats}; reference: 10 × "
             f"its {SIZES[sizes[-2]]})")
    rows = []
    for name, unit in ADVERSARIAL.items():
        figures = {size: timed(partial(scrub, adversarial(unit, size), (SECRET,)), repeats if size > MB else 5)
                   for size in sizes}  # small sizes: always 5 runs (they cost nothing, and one is noise)
        value, reference = figures[largest], 10 * figures[sizes[-2]]
        series = " · ".join(f"{SIZES[size]} {figures[size] * 1000:.3g} ms" for size in sizes)
        rows.append({"table": table, "name": f"{SIZES[largest]}: {name}", "value": value, "unit": "s",
                     "reference": reference,
                     "ratio": value / reference, "target": LINEAR_TARGET, "ok": value / reference <= LINEAR_TARGET,
                     "note": series})
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", action="store_true", help="one JSON row per figure (bench.py's protocol)")
    parser.add_argument("--quick", action="store_true", help="one run per figure instead of --repeats")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--largest", type=int, choices=sorted(SIZES)[1:], default=10 * MB,
                        help="the largest size, in characters (default 10,000,000)")
    args = parser.parse_args()
    repeats = 1 if args.quick else args.repeats
    for row in [*line_rows(args.largest, repeats), *adversarial_rows(args.largest, repeats)]:
        if args.json:
            print(json.dumps(row, ensure_ascii=False), flush=True)
        else:
            held = "yes" if row["ok"] else "NO"
            print(f"{row['name']:58} {row['value']:8.3f} s  ref {row['reference']:7.3f} s  {row['ratio']:5.2f}×  "
                  f"holds {held}  {row['note']}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
