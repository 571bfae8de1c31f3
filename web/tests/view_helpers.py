"""What the viewer's tests share: real runs made offline with the real pinned CLIs (`Corpus`), `harness view` in
a subprocess (`Viewer`), a browser tab with its console (`Tab`), the hostile texts. Named apart from the core's
`tests` package, as each provider's test helpers are.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
HARNESS = [sys.executable, "-m", "harness_core"]
CHROMIUM = os.environ.get("HARNESS_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run", "--disable-sync"]
DEADLINE = 120.0
HOSTILE_SAY = ('<script>window.__pwned = "say"</script> <img src=x onerror="window.__pwned = \'img\'"> '
               '<a href="javascript:window.__pwned = \'link\'">click me</a> [md](javascript:alert(1))')
HOSTILE_PROMPT = "<script>window.__pwned = 'prompt'</script><b>bold?</b>"
HOSTILE_COMMAND = "echo '<img src=x onerror=window.__pwned=1>'"


def tools_bin() -> Path:
    return Path(os.environ.get("HARNESS_TOOLS_DIR", ROOT / ".tools")) / "bin"


def harness_env(home: Path) -> dict[str, str]:
    """The environment of a `harness` subprocess: the pinned CLIs on PATH, this test's own config and state."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("HARNESS_") or k == "HARNESS_TOOLS_DIR"}
    env["PATH"] = f"{tools_bin()}{os.pathsep}{env.get('PATH', '')}"
    for name in ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME"):
        env[name] = str(home / name.lower())
    env["PYTHONUNBUFFERED"] = "1"
    return env


def harness(args: list[str], env: dict[str, str], *, cwd: Path, stdin: str | None = None,
            timeout: float = DEADLINE) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*HARNESS, *args], env=env, cwd=cwd, input=stdin, capture_output=True, text=True,
                          timeout=timeout)


@dataclass
class Corpus:
    """A runs directory as a user of every feature has one."""

    root: Path
    runs_dir: Path
    env: dict[str, str]
    demo: dict[str, str] = field(default_factory=dict)
    """provider → its demo run id."""
    chat: list[str] = field(default_factory=list)
    """The chat's turns' run ids."""
    batch: Path = Path()
    hostile_batch: Path = Path()
    hostile_run: str = ""

    def run(self, *args: str, stdin: str | None = None, timeout: float = DEADLINE) -> str:
        done = harness([*args, "--runs-dir", str(self.runs_dir)], self.env, cwd=self.root, stdin=stdin,
                       timeout=timeout)
        assert done.returncode in (0, 1), done.stderr
        return done.stdout

    started: list[str] = field(default_factory=list)

    def background(self, *args: str) -> str:
        """Start `harness run --offline --background ARGS`; its run id (cancelled at the end of the session if a
        test left it running)."""
        out = self.run("run", "--offline", "--background", *args)
        run_id = out.strip().splitlines()[-1]
        self.started.append(run_id)
        return run_id

    def cancel_leftovers(self) -> None:
        live = {r["run_id"] for r in json.loads(self.run("runs", "--json"))
                if r["status"] in ("running", "waiting for approval")}
        for run_id in set(self.started) & live:
            self.run("cancel", run_id)

    def wait_status(self, run_id: str, *statuses: str, timeout: float = DEADLINE) -> str:
        deadline = time.monotonic() + timeout
        while True:
            found = json.loads(self.run("runs", "--json"))
            status = next((r["status"] for r in found if r["run_id"] == run_id), None)
            if status in statuses:
                return status
            assert time.monotonic() < deadline, f"run {run_id} is {status}, not {statuses}"
            time.sleep(0.2)


def batch_tasks() -> list[dict[str, Any]]:
    tasks: list[dict[str, Any]] = []
    for provider in ("claude", "codex-appserver"):
        short = provider.split("-")[0]
        tasks.append({"id": f"hello-{short}", "provider": provider, "scenario": "say"})
        tasks.append({"id": f"edit-{short}", "provider": provider, "scenario": "tools"})
        tasks.append({"id": f"broken-{short}", "provider": provider, "scenario": "fail_500"})
    tasks.append({"id": "hostile", "provider": "claude", "prompt": HOSTILE_PROMPT, "scenario": {"steps": [
        {"run": HOSTILE_COMMAND},
        {"write": "evil.html", "content": "<script>window.__pwned = 'diff'</script>\n"},
        {"say": HOSTILE_SAY}]}})
    return tasks


def hostile_results(path: Path, run_id: str) -> None:
    """A hand-edited results file: its task id, provider and error are hostile too (only Harness writes ids that
    are safe; a file anyone edits is not)."""
    line = {"id": "<script>window.__pwned='task'</script>", "run_id": run_id, "status": "failed",
            "provider": "<img src=x onerror=window.__pwned='provider'>", "error_code": "<b>code</b>",
            "error": "<script>window.__pwned='error'</script>", "run_ids": [run_id], "duration_ms": 1200}
    path.write_text(json.dumps(line) + "\n" + '{"not": "a result"}\n')


@dataclass
class Viewer:
    """`harness view` running in a subprocess (its stderr goes to a file: a viewer that logs much never blocks)."""

    url: str
    """With the token."""
    proc: subprocess.Popen[str]
    stderr: Path = Path()

    @property
    def base(self) -> str:
        return self.url.split("/?", 1)[0]

    @property
    def token(self) -> str:
        return self.url.split("token=", 1)[1]

    @property
    def port(self) -> int:
        return int(self.base.rsplit(":", 1)[1])


def start_viewer(args: list[str], env: dict[str, str], cwd: Path, *, deadline: float = 30.0) -> Viewer:
    """Start `harness view ARGS` and wait (at most `deadline` s, even if it prints nothing) for its URL."""
    fd, name = tempfile.mkstemp(prefix="harness-view-", suffix=".stderr")
    with os.fdopen(fd, "w") as err:
        proc = subprocess.Popen([*HARNESS, "view", *args], env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=err,
                                text=True)
    assert proc.stdout is not None
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lines_of, args=(proc, lines), daemon=True).start()
    end = time.monotonic() + deadline
    seen = []
    while (left := end - time.monotonic()) > 0:
        try:
            line = lines.get(timeout=left)
        except queue.Empty:
            break
        if not line:
            break
        seen.append(line)
        found = re.search(r"(http://127\.0\.0\.\d+:\d+/\?token=\S+)", line)
        if found:
            return Viewer(found.group(1), proc, Path(name))
    proc.kill()
    proc.wait()
    raise AssertionError(f"harness view printed no URL in {deadline:.0f} s: {''.join(seen)} "
                         f"{Path(name).read_text()}")


def lines_of(proc: subprocess.Popen[str], lines: queue.Queue[str]) -> None:
    """Hand the viewer's stdout lines to the test until its URL (then the rest is read after it stops)."""
    assert proc.stdout is not None
    while True:
        line = proc.stdout.readline()
        lines.put(line)
        if not line or "token=" in line:
            return


def stop_viewer(viewer: Viewer) -> int:
    """Ctrl-C, as a user stops it; its exit status."""
    viewer.proc.send_signal(signal.SIGINT)
    try:
        return viewer.proc.wait(timeout=15)
    finally:
        if viewer.proc.poll() is None:
            viewer.proc.kill()
            viewer.proc.wait()


@dataclass
class Tab:
    """A browser page, with the console messages it logged (a CSP violation shows there)."""

    page: Any
    console: list[str]




def release(pipe: Path) -> None:
    """Remove a FIFO made for a test, first opening it for writing once: a reader stuck on it (a viewer without
    the guard) is let go, so one failure does not hang every later test."""
    with contextlib.suppress(OSError):  # ENXIO: no reader waits on it, as it should be
        os.close(os.open(pipe, os.O_WRONLY | os.O_NONBLOCK))
    pipe.unlink()
