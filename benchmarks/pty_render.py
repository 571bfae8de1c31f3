#!/usr/bin/env python3
"""`harness run` rendering to a terminal: per-delta cost under a real pty, next to the raw parsing limit.

    .venv/bin/python benchmarks/pty_render.py            # 5,000 and 200,000 deltas, median of 3
    .venv/bin/python benchmarks/pty_render.py --quick    # 2,000 and 50,000
    .venv/bin/python benchmarks/pty_render.py --json     # one JSON object per row (for bench.py)

The stream comes from benchmarks/flood_codex.py (a `codex app-server` stand-in, through a sh wrapper given as
`-o codex_bin=`). `harness run --cwd WS -o codex_bin=WRAPPER PROMPT` runs as a child whose stdin, stdout and
stderr are the slave side of a pty (TERM=xterm-256color, a 120x40 window set with TIOCSWINSZ); this process
drains the master side as fast as it can, as a terminal emulator would, and keeps every byte. Each run's
output, with control sequences stripped, must contain the whole answer (every delta's text, in order).

Reference: a child writing the same stream (FLOOD_RAW=1) read line by line with `json.loads` per line. Per-delta
cost is the slope between a small and a large run (it cancels start-up, imports and the handshake); the
whole-process time of the large run is printed too. Contenders are interleaved (raw, harness, raw, ...).
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import re
import select
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
FLOOD = HERE / "flood_codex.py"
HARNESS = Path(sys.executable).with_name("harness")
COLUMNS, ROWS = 120, 40
DEADLINE = 300.0  # seconds one run may take before it is killed (and the benchmark fails)
TARGET = 1.5
_ANSI = re.compile(rb"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[@-Z\\-_]|\r")


def raw_seconds(deltas: int) -> float:
    """The reference: read the stand-in's lines and `json.loads` each; wall time of the whole child."""
    env = {**os.environ, "FLOOD_RAW": "1", "FLOOD_DELTAS": str(deltas)}
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, str(FLOOD)], stdout=subprocess.PIPE, env=env)
    assert proc.stdout is not None
    loads = json.loads
    count = 0
    for raw in proc.stdout:
        loads(raw)
        count += 1
    proc.wait(timeout=DEADLINE)
    elapsed = time.perf_counter() - started
    assert count >= deltas, (count, deltas)
    return elapsed


def _wrapper(directory: Path, deltas: int) -> Path:
    path = directory / "codex"
    path.write_text(f"#!/bin/sh\nexport FLOOD_DELTAS={deltas}\nexec {sys.executable} {FLOOD} \"$@\"\n")
    path.chmod(0o755)
    return path


def _drain(master: int, proc: subprocess.Popen[bytes], deadline: float) -> bytes:
    """Everything the child writes to the pty until it has exited and the slave side is closed."""
    chunks: list[bytes] = []
    while True:
        remaining = deadline - time.perf_counter()
        if remaining <= 0:
            proc.kill()
            proc.wait()
            raise TimeoutError(f"harness run did not finish within {DEADLINE:g} s")
        ready, _, _ = select.select([master], [], [], min(remaining, 1.0))
        if not ready:
            if proc.poll() is not None:
                break
            continue
        try:
            data = os.read(master, 1 << 16)
        except OSError:  # EIO: every slave descriptor is closed
            break
        if not data:
            break
        chunks.append(data)
    return b"".join(chunks)


def harness_run(deltas: int, harness: Path = HARNESS) -> tuple[float, bytes, int]:
    """(wall seconds, bytes the terminal received, exit status) of one `harness run` under a pty."""
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "ws"
        ws.mkdir()
        wrapper = _wrapper(Path(tmp), deltas)
        env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": str(COLUMNS), "LINES": str(ROWS),
               "HARNESS_RUNS_DIR": str(Path(tmp) / "runs"), "XDG_CONFIG_HOME": str(Path(tmp) / "config")}
        env.pop("NO_COLOR", None)
        env.pop("PYTHONUNBUFFERED", None)  # as in a user's terminal: stdout line-buffered, not written through
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLUMNS, 0, 0))
        started = time.perf_counter()
        try:
            proc = subprocess.Popen(
                [str(harness), "run", "--cwd", str(ws), "-p", "codex-appserver", "-o", f"codex_bin={wrapper}",
                 "bench"],
                stdin=slave, stdout=slave, stderr=slave, env=env, cwd=tmp, start_new_session=True,
            )
            os.close(slave)
            slave = -1
            output = _drain(master, proc, started + DEADLINE)
            status = proc.wait(timeout=DEADLINE)
        finally:
            if slave >= 0:
                os.close(slave)
            os.close(master)
        return time.perf_counter() - started, output, status


_ANSWERS: dict[int, str] = {}


def expected_answer(deltas: int) -> str:
    """The text of every `item/agentMessage/delta` the stand-in streams, joined (read from its raw stream, so
    it follows whatever lines the stand-in writes)."""
    if deltas not in _ANSWERS:
        env = {**os.environ, "FLOOD_RAW": "1", "FLOOD_DELTAS": str(deltas)}
        out = subprocess.run([sys.executable, str(FLOOD)], capture_output=True, env=env, check=True,
                             timeout=DEADLINE).stdout
        pieces = []
        for raw in out.splitlines():
            msg = json.loads(raw)
            if msg.get("method") == "item/agentMessage/delta":
                pieces.append(msg["params"]["delta"])
        assert len(pieces) == deltas, (len(pieces), deltas)
        _ANSWERS[deltas] = "".join(pieces)
    return _ANSWERS[deltas]


def check_output(output: bytes, deltas: int) -> None:
    """The terminal got the whole answer: every delta's text, in order, and the final line."""
    text = _ANSI.sub(b"", output).decode("utf-8", "replace")
    answer = expected_answer(deltas)
    if answer.strip() not in text:
        raise AssertionError(f"the rendered output lacks the answer ({deltas:,} deltas): {text[-400:]!r}")
    if "success" not in text.rsplit(answer.strip(), 1)[-1]:
        raise AssertionError(f"no final success line after the answer: {text[-400:]!r}")


def harness_seconds(deltas: int, harness: Path = HARNESS) -> float:
    elapsed, output, status = harness_run(deltas, harness)
    if status != 0:
        raise AssertionError(f"harness run exited {status}: {_ANSI.sub(b'', output)[-600:]!r}")
    check_output(output, deltas)
    return elapsed


def rows(small: int, large: int, repeats: int, harness: Path = HARNESS) -> list[dict[str, object]]:
    raw_t: dict[int, list[float]] = {small: [], large: []}
    har_t: dict[int, list[float]] = {small: [], large: []}
    raw_seconds(small)  # warm the page cache and the interpreter's files
    harness_seconds(small, harness)
    for _ in range(repeats):  # interleaved: noise from other work on the machine hits both alike
        for n in (small, large):
            raw_t[n].append(raw_seconds(n))
            har_t[n].append(harness_seconds(n, harness))

    def slope(times: dict[int, list[float]]) -> float:
        return statistics.median((b - a) / (large - small) for a, b in zip(times[small], times[large], strict=True))

    def spread(times: dict[int, list[float]]) -> str:
        samples = [(b - a) / (large - small) * 1e6 for a, b in zip(times[small], times[large], strict=True)]
        return f"{min(samples):.2f}–{max(samples):.2f}"

    raw, har = slope(raw_t), slope(har_t)
    whole_raw, whole_har = statistics.median(raw_t[large]), statistics.median(har_t[large])
    small_raw, small_har = statistics.median(raw_t[small]), statistics.median(har_t[small])
    table = "pty_render"
    return [
        {"table": table, "name": "raw: readline + json.loads (reference), per delta", "value": raw * 1e6,
         "unit": "µs", "reference": None, "ratio": 1.0, "target": None, "ok": None, "spread": spread(raw_t)},
        {"table": table, "name": "harness run on a pty (120x40), per delta", "value": har * 1e6, "unit": "µs",
         "reference": raw * 1e6, "ratio": har / raw, "target": TARGET, "ok": har / raw <= TARGET,
         "spread": spread(har_t)},
        {"table": table, "name": f"raw whole process, {large:,} deltas", "value": whole_raw, "unit": "s",
         "reference": None, "ratio": 1.0, "target": None, "ok": None},
        {"table": table, "name": f"harness run on a pty whole process, {large:,} deltas", "value": whole_har,
         "unit": "s", "reference": whole_raw, "ratio": whole_har / whole_raw, "target": None, "ok": None},
        {"table": table, "name": f"raw whole process, {small:,} deltas", "value": small_raw, "unit": "s",
         "reference": None, "ratio": 1.0, "target": None, "ok": None},
        {"table": table, "name": f"harness run on a pty whole process, {small:,} deltas", "value": small_har,
         "unit": "s", "reference": small_raw, "ratio": small_har / small_raw, "target": None, "ok": None},
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="2,000 and 50,000 deltas")
    parser.add_argument("--json", action="store_true", help="one JSON object per row")
    parser.add_argument("--sizes", nargs=2, type=int, metavar=("SMALL", "LARGE"))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--harness", type=Path, default=HARNESS, help="the harness command (default: %(default)s)")
    args = parser.parse_args()
    small, large = args.sizes or ((2_000, 50_000) if args.quick else (5_000, 200_000))
    result = rows(small, large, args.repeats, args.harness)
    if args.json:
        for row in result:
            print(json.dumps(row, ensure_ascii=False))
        return 0
    print(f"harness run rendering to a pty ({COLUMNS}x{ROWS}, TERM=xterm-256color), codex stream; slope "
          f"{small:,} → {large:,} deltas, median of {args.repeats} (range in brackets)")
    for row in result:
        value = f"{row['value']:8.2f} {row['unit']}"
        ratio = f"{row['ratio']:5.2f}× raw" if row["reference"] is not None else ""
        target = f"  (target ≤ {row['target']:g}×: {'ok' if row['ok'] else 'MISSED'})" if row["target"] else ""
        spread = f"  [{row['spread']}]" if "spread" in row else ""
        print(f"  {row['name']:58} {value}  {ratio}{target}{spread}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
