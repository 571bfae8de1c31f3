#!/usr/bin/env python3
"""Harness next to the official Python SDKs (openai-codex, claude-agent-sdk) on the same event streams.

    python3.11 -m venv .bench-venv && .bench-venv/bin/pip install openai-codex claude-agent-sdk \\
        -e . -e providers/codex_appserver -e providers/claude
    .bench-venv/bin/python benchmarks/sdk_compare.py            # full run (several minutes)
    .bench-venv/bin/python benchmarks/sdk_compare.py --quick    # smaller sizes, no 1 GiB memory runs

Every contender runs in a fresh child interpreter (the bench venv's python when it exists), with a timeout.
1. Import time: wall time of `python -c "import X"`, median of 5, next to `python -c pass`.
2. Per-event cost: the slope of run time between a small and a large flood (which cancels process start-up,
   handshakes and imports), median of 3. Codex stream: benchmarks/flood_codex.py (`item/agentMessage/delta`
   lines). Claude stream: benchmarks/flood_claude.py (`stream_event` text_delta lines). Reference: readline +
   json.loads of the same lines. The openai-codex SDK is pointed at the stand-in with its supported
   `CodexConfig(codex_bin=...)`; claude-agent-sdk with `ClaudeAgentOptions(cli_path=...)`; harness with
   `-o codex_bin=` / `-o claude_bin=`.
3. Memory: one command printing 1 GiB in 64 KiB output deltas, consumer sleeping 1 ms per event; peak RSS
   (ru_maxrss) of a fresh child per contender. Claude variant: 1 GiB of 64 KiB text deltas (artificial: a
   turn's text is kept as its final text by any consumer, harness included).

The openai-codex SDK validates the `thread/start` response against the current app-server schema, which
needs two fields flood_codex.py does not send (`approvalsReviewer`, `thread.sessionId`); it also wants
`startedAtMs`/`completedAtMs` on items. `--codex-standin` runs flood_codex.py with those fields added to
the handshake and item lines; the flood lines themselves are byte-for-byte the same.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
BENCH_VENV = ROOT / ".bench-venv"
INSTALL_HINT = ("run: python3.11 -m venv .bench-venv && .bench-venv/bin/pip install openai-codex claude-agent-sdk "
                "-e . -e providers/codex_appserver -e providers/claude")
CHILD_TIMEOUT = 600.0

# --- stand-ins ------------------------------------------------------------------------------------------


def codex_standin() -> int:
    """flood_codex.py with the handshake/item fields the openai-codex SDK's schema requires."""
    sys.path.insert(0, str(HERE))
    import flood_codex

    original = flood_codex.line

    def line(obj: dict) -> bytes:
        result = obj.get("result")
        if isinstance(result, dict) and "thread" in result and "approvalPolicy" in result:
            obj = {**obj, "result": {**result, "approvalsReviewer": "user",
                                     "thread": {**result["thread"], "sessionId": "ses_bench"}}}
        method = obj.get("method")
        if method == "item/started":
            obj = {**obj, "params": {**obj["params"], "startedAtMs": 1}}
        elif method == "item/completed":
            obj = {**obj, "params": {**obj["params"], "completedAtMs": 2}}
        return original(obj)

    flood_codex.line = line
    return flood_codex.main()


def wrapper(directory: Path, name: str, target: list[str], env: dict[str, str]) -> Path:
    path = directory / name
    exports = "".join(f"export {k}={v}\n" for k, v in env.items())
    argv = " ".join(f"'{part}'" for part in target)
    path.write_text(f"#!/bin/sh\n{exports}exec {argv} \"$@\"\n")
    path.chmod(0o755)
    return path


def flood_env(deltas: int, output_mb: int, delta_bytes: int = 0) -> dict[str, str]:
    env = {"FLOOD_DELTAS": str(deltas), "FLOOD_OUTPUT_MB": str(output_mb)}
    if delta_bytes:
        env["FLOOD_DELTA_BYTES"] = str(delta_bytes)
    return env


# --- contenders (run inside a child; each returns (seconds, events)) ------------------------------------


def run_raw(stream: str, deltas: int, **_: object) -> tuple[float, int]:
    script = HERE / ("flood_codex.py" if stream == "codex" else "flood_claude.py")
    env = {**os.environ, "FLOOD_RAW": "1", "FLOOD_DELTAS": str(deltas)}
    started = time.perf_counter()
    if stream == "codex":
        proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, env=env)
    else:  # flood_claude.py has no raw mode: it writes the turn after one user line on stdin
        proc = subprocess.Popen([sys.executable, str(script)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                env=env)
        assert proc.stdin is not None
        proc.stdin.write(b'{"type":"user","message":{"role":"user","content":"bench"}}\n')
        proc.stdin.close()
    assert proc.stdout is not None
    loads = json.loads
    count = 0
    for raw in proc.stdout:
        loads(raw)
        count += 1
    proc.wait(timeout=30)
    return time.perf_counter() - started, count


def run_harness_codex(deltas: int, output_mb: int = 0, sleep: float = 0.0, run_log: bool = True,
                      **_: object) -> tuple[float, int]:
    sys.path.insert(0, str(HERE))
    from events import harness_seconds

    return harness_seconds(deltas, run_log=run_log, slow_consumer=sleep, output_mb=output_mb)


def run_harness_claude(deltas: int, sleep: float = 0.0, delta_bytes: int = 0, run_log: bool = True,
                       **_: object) -> tuple[float, int]:
    import anyio

    from harness_core import open_run
    from harness_core.spec import AgentRunSpec

    with tempfile.TemporaryDirectory() as tmp:
        claude = wrapper(Path(tmp), "claude", [sys.executable, str(HERE / "flood_claude.py")],
                         flood_env(deltas, 0, delta_bytes))
        spec = AgentRunSpec(prompt="bench", cwd=tmp, provider_options={"claude_bin": str(claude)})

        async def main() -> tuple[float, int]:
            started = time.perf_counter()
            count = 0
            async with open_run(spec, "claude", runs_dir=Path(tmp) / "runs", run_log=run_log) as live:
                async for _event in live:
                    count += 1
                    if sleep:
                        await anyio.sleep(sleep)
            assert live.result is not None and live.result.status.value == "success", live.result
            return time.perf_counter() - started, count

        return anyio.run(main)


def run_codex_sdk(deltas: int, output_mb: int = 0, sleep: float = 0.0, **_: object) -> tuple[float, int]:
    from openai_codex import Codex, CodexConfig

    with tempfile.TemporaryDirectory() as tmp:
        codex = wrapper(Path(tmp), "codex", [sys.executable, str(Path(__file__).resolve()), "--codex-standin"],
                        flood_env(deltas, output_mb))
        started = time.perf_counter()
        count = 0
        completed = False
        with Codex(CodexConfig(codex_bin=str(codex), cwd=tmp)) as client:
            thread = client.thread_start()
            turn = thread.turn("bench")
            for event in turn.stream():
                count += 1
                if sleep:
                    time.sleep(sleep)
                completed = event.method == "turn/completed"
        assert completed, "the turn did not complete"
        return time.perf_counter() - started, count


def run_codex_sdk_async(deltas: int, output_mb: int = 0, sleep: float = 0.0, **_: object) -> tuple[float, int]:
    import asyncio

    from openai_codex import AsyncCodex, CodexConfig

    with tempfile.TemporaryDirectory() as tmp:
        codex = wrapper(Path(tmp), "codex", [sys.executable, str(Path(__file__).resolve()), "--codex-standin"],
                        flood_env(deltas, output_mb))

        async def main() -> tuple[float, int]:
            started = time.perf_counter()
            count = 0
            completed = False
            async with AsyncCodex(CodexConfig(codex_bin=str(codex), cwd=tmp)) as client:
                thread = await client.thread_start()
                turn = await thread.turn("bench")
                async for event in turn.stream():
                    count += 1
                    if sleep:
                        await asyncio.sleep(sleep)
                    completed = event.method == "turn/completed"
            assert completed, "the turn did not complete"
            return time.perf_counter() - started, count

        return asyncio.run(main())


def run_claude_sdk(deltas: int, sleep: float = 0.0, delta_bytes: int = 0, **_: object) -> tuple[float, int]:
    import anyio
    from claude_agent_sdk import ClaudeAgentOptions, ResultMessage, query

    with tempfile.TemporaryDirectory() as tmp:
        claude = wrapper(Path(tmp), "claude", [sys.executable, str(HERE / "flood_claude.py")],
                         flood_env(deltas, 0, delta_bytes))
        options = ClaudeAgentOptions(cli_path=str(claude), cwd=tmp, include_partial_messages=True)

        async def main() -> tuple[float, int]:
            started = time.perf_counter()
            count = 0
            result = None
            async for message in query(prompt="bench", options=options):
                count += 1
                if sleep:
                    await anyio.sleep(sleep)
                if isinstance(message, ResultMessage):
                    result = message
            assert result is not None and not result.is_error, result
            return time.perf_counter() - started, count

        return anyio.run(main)


CONTENDERS = {
    "raw-codex": (lambda **kw: run_raw("codex", **kw), None),
    "raw-claude": (lambda **kw: run_raw("claude", **kw), None),
    "harness-codex": (run_harness_codex, "harness_codex_appserver"),
    "harness-codex-nolog": (lambda **kw: run_harness_codex(run_log=False, **kw), "harness_codex_appserver"),
    "codex-sdk": (run_codex_sdk, "openai_codex"),
    "codex-sdk-async": (run_codex_sdk_async, "openai_codex"),
    "harness-claude": (run_harness_claude, "harness_claude"),
    "harness-claude-nolog": (lambda **kw: run_harness_claude(run_log=False, **kw), "harness_claude"),
    "claude-sdk": (run_claude_sdk, "claude_agent_sdk"),
}


def child_main(spec: dict) -> None:
    """Runs one contender in this (fresh) interpreter and prints one JSON line."""
    import resource

    run, module = CONTENDERS[spec.pop("contender")]
    if module:
        __import__(module)  # import cost is measured separately
    if spec.pop("preload_runner", False):
        from harness_core import open_run  # noqa: F401
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    seconds, events = run(**spec)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"seconds": seconds, "events": events, "before_kb": before, "peak_kb": peak}))


# --- orchestration ----------------------------------------------------------------------------------------


class ChildFailed(Exception):
    pass


def run_child(argv: list[str], timeout: float = CHILD_TIMEOUT) -> str:
    """Run argv in its own process group; on timeout kill the whole group (stand-ins included)."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, cwd=str(ROOT))
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise ChildFailed(f"timed out after {timeout:.0f} s") from None
    finally:
        with contextlib.suppress(ProcessLookupError):  # anything the child left behind in its group
            os.killpg(proc.pid, signal.SIGKILL)
    if proc.returncode != 0:
        tail = [line for line in err.strip().splitlines() if line.strip()][-1:] or [f"exit {proc.returncode}"]
        raise ChildFailed(tail[0][:300])
    return out


def measure(python: str, contender: str, timeout: float = CHILD_TIMEOUT, **params: object) -> dict:
    spec = json.dumps({"contender": contender, **params})
    out = run_child([python, str(Path(__file__).resolve()), "--child", spec], timeout)
    return json.loads(out.strip().splitlines()[-1])


def importable(python: str, module: str) -> bool:
    probe = f"import importlib.util, sys; sys.exit(0 if importlib.util.find_spec({module!r}) else 1)"
    return subprocess.run([python, "-c", probe], capture_output=True, timeout=60).returncode == 0


def import_times(python: str, runs: int) -> list[tuple[str, str]]:
    cases = [
        ("python -c pass (floor)", "pass", None),
        ("from harness_core import open_run", "from harness_core import open_run",
         "harness_core"),
        ("import openai_codex", "import openai_codex", "openai_codex"),
        ("import claude_agent_sdk", "import claude_agent_sdk", "claude_agent_sdk"),
    ]
    rows = []
    for label, code, module in cases:
        if module and not importable(python, module):
            rows.append((label, f"not installed ({INSTALL_HINT})"))
            continue
        samples = []
        for i in range(runs + 1):  # the first run warms the page cache and .pyc files
            started = time.perf_counter()
            subprocess.run([python, "-c", code], check=True, capture_output=True, timeout=120)
            if i:
                samples.append(time.perf_counter() - started)
        rows.append((label, f"{statistics.median(samples) * 1000:7.0f} ms   "
                            f"(min {min(samples) * 1000:.0f}, max {max(samples) * 1000:.0f})"))
    return rows


def slope(python: str, contender: str, small: int, large: int, repeats: int) -> tuple[float, list[float]]:
    samples = []
    for _ in range(repeats):
        t_small = measure(python, contender, deltas=small)["seconds"]
        t_large = measure(python, contender, deltas=large)["seconds"]
        samples.append((t_large - t_small) / (large - small))
    return statistics.median(samples), samples


def pick_python(explicit: str | None) -> str:
    if explicit:
        return explicit
    candidate = BENCH_VENV / "bin" / "python"
    return str(candidate) if candidate.exists() else sys.executable


def main() -> int:
    if sys.argv[1:2] == ["--codex-standin"]:  # launched by the openai-codex SDK as its codex binary
        sys.argv = [sys.argv[0], *sys.argv[2:]]
        return codex_standin()
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="smaller sizes; memory runs at 128 MiB")
    parser.add_argument("--python", help="interpreter for the children (default: .bench-venv/bin/python)")
    parser.add_argument("--only", choices=["imports", "events", "memory"], action="append",
                        help="run only these sections (repeatable)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--sizes", nargs=2, type=int, metavar=("SMALL", "LARGE"),
                        help="flood sizes for the per-event slope (default 5000 200000; --quick 2000 50000)")
    parser.add_argument("--claude-memory", action="store_true",
                        help="also run the (artificial) Claude memory comparison")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child_main(json.loads(args.child))
        return 0

    python = pick_python(args.python)
    sections = set(args.only or ["imports", "events", "memory"])
    small, large = args.sizes or ((2_000, 50_000) if args.quick else (5_000, 200_000))
    output_mb = 128 if args.quick else 1024
    version = subprocess.run([python, "-c", "import platform; print(platform.python_version())"],
                             capture_output=True, text=True, timeout=60).stdout.strip()
    tree = subprocess.run(["git", "describe", "--always", "--dirty"], capture_output=True, text=True,
                          cwd=str(ROOT), timeout=30).stdout.strip() or "?"
    print(f"interpreter: {python} (Python {version}); {os.cpu_count()} CPUs; tree {tree}; "
          f"{time.strftime('%Y-%m-%d %H:%M')}")
    have = {m: importable(python, m) for m in ("harness_codex_appserver", "harness_claude", "openai_codex",
                                               "claude_agent_sdk")}
    missing = [m for m, ok in have.items() if not ok]
    if missing:
        print(f"not installed in that interpreter: {', '.join(missing)}\n  {INSTALL_HINT}")

    if "imports" in sections:
        print("\nimport time (fresh interpreter, median of 5)")
        for label, value in import_times(python, 5):
            print(f"  {label:52} {value}")

    if "events" in sections:
        print(f"\nper-event cost (slope between {small:,} and {large:,} deltas, median of {args.repeats})")
        rows = [
            ("codex", "raw: readline + json.loads (reference)", "raw-codex", None),
            ("codex", "harness codex-appserver, run log on", "harness-codex", "harness_codex_appserver"),
            ("codex", "harness codex-appserver, run log off", "harness-codex-nolog", "harness_codex_appserver"),
            ("codex", "openai-codex SDK (sync Codex, turn.stream())", "codex-sdk", "openai_codex"),
            ("codex", "openai-codex SDK (AsyncCodex, turn.stream())", "codex-sdk-async", "openai_codex"),
            ("claude", "raw: readline + json.loads (reference)", "raw-claude", None),
            ("claude", "harness claude, run log on", "harness-claude", "harness_claude"),
            ("claude", "harness claude, run log off", "harness-claude-nolog", "harness_claude"),
            ("claude", "claude-agent-sdk (query(), partial messages)", "claude-sdk", "claude_agent_sdk"),
        ]
        raw: dict[str, float] = {}
        for stream, label, contender, module in rows:
            if module and not have[module]:
                print(f"  {stream:6} {label:46} not installed — {INSTALL_HINT}")
                continue
            try:
                value, samples = slope(python, contender, small, large, args.repeats)
            except (ChildFailed, subprocess.SubprocessError) as exc:
                print(f"  {stream:6} {label:46} FAILED: {exc}")
                continue
            if contender.startswith("raw-"):
                raw[stream] = value
            is_ref = contender.startswith("raw-")
            ratio = f"{value / raw[stream]:5.1f}x raw" if stream in raw and not is_ref else ""
            spread = ", ".join(f"{s * 1e6:.1f}" for s in samples)
            print(f"  {stream:6} {label:46} {value * 1e6:6.2f} µs/event  {ratio:10} (samples {spread})",
                  flush=True)

    if "memory" in sections:
        sleep = 0.001
        print(f"\nmemory: one command printing {output_mb} MiB in 64 KiB output deltas, consumer sleeping "
              f"{sleep * 1000:g} ms per event; peak RSS of a fresh child")
        cases = [("harness codex-appserver (run log on)", "harness-codex", "harness_codex_appserver", {}),
                 ("openai-codex SDK (sync)", "codex-sdk", "openai_codex", {})]
        if args.claude_memory:
            cases += [("harness claude (1 GiB of text deltas)", "harness-claude", "harness_claude",
                       {"delta_bytes": 65536}),
                      ("claude-agent-sdk (1 GiB of text deltas)", "claude-sdk", "claude_agent_sdk",
                       {"delta_bytes": 65536})]
        for label, contender, module, extra in cases:
            if not have[module]:
                print(f"  {label:44} not installed — {INSTALL_HINT}")
                continue
            params: dict[str, object] = {"deltas": 0, "output_mb": output_mb, "sleep": sleep, **extra}
            if "delta_bytes" in extra:
                params["deltas"] = output_mb * 16
            try:
                mem = measure(python, contender, timeout=1200, **params)
            except (ChildFailed, subprocess.SubprocessError) as exc:
                print(f"  {label:44} FAILED: {exc}")
                continue
            print(f"  {label:44} peak RSS {mem['peak_kb'] / 1024:7.1f} MB   (after imports "
                  f"{mem['before_kb'] / 1024:.1f} MB; {mem['events']:,} events in {mem['seconds']:.1f} s)",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
