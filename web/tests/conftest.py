"""Fixtures of the viewer's tests: real runs made offline with the real pinned CLIs (the demo's runs of every
provider, a chat, a batch over two providers, the hostile-text run), `harness view` itself in a subprocess, and
headless Chromium from the system packages driven by Playwright (never a downloaded browser).

Screenshots go to `$HARNESS_VIEW_SCREENSHOTS` (e.g. docs/images, to refresh the README's), else a temporary dir.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

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


def _batch_tasks() -> list[dict[str, Any]]:
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


def _hostile_results(path: Path, run_id: str) -> None:
    """A hand-edited results file: its task id, provider and error are hostile too (only Harness writes ids that
    are safe; a file anyone edits is not)."""
    line = {"id": "<script>window.__pwned='task'</script>", "run_id": run_id, "status": "failed",
            "provider": "<img src=x onerror=window.__pwned='provider'>", "error_code": "<b>code</b>",
            "error": "<script>window.__pwned='error'</script>", "run_ids": [run_id], "duration_ms": 1200}
    path.write_text(json.dumps(line) + "\n" + '{"not": "a result"}\n')


@pytest.fixture(scope="session")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Corpus]:
    """Real runs, made once per session: the demo (every installed provider that runs offline), a chat of two
    turns, a batch of 7 tasks over two providers (one hostile), a hand-edited hostile results file."""
    if not (tools_bin() / "claude").exists() or not (tools_bin() / "codex").exists():
        if os.environ.get("HARNESS_REQUIRE_REAL_CLIS"):
            pytest.fail(f"the pinned CLIs are not in {tools_bin()}: run scripts/install-clis.sh")
        pytest.skip(f"the pinned CLIs are not in {tools_bin()} (scripts/install-clis.sh)")
    root = tmp_path_factory.mktemp("corpus")
    runs_dir = root / "runs"
    runs_dir.mkdir(mode=0o700)
    corpus = Corpus(root, runs_dir, harness_env(root))
    tasks = root / "tasks.jsonl"
    tasks.write_text("".join(json.dumps(t) + "\n" for t in _batch_tasks()))
    corpus.batch = root / "tasks.results.jsonl"
    base = [*HARNESS]
    procs = {
        "demo": subprocess.Popen([*base, "demo", "--json", "--runs-dir", str(runs_dir)], env=corpus.env, cwd=root,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True),
        "batch": subprocess.Popen([*base, "batch", str(tasks), "--offline", "-j", "2", "--runs-dir", str(runs_dir)],
                                  env=corpus.env, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True),
    }
    corpus.run("chat", "--offline", "-p", "claude", stdin="hello\nand once more\n")
    outputs = {name: proc.communicate(timeout=600) for name, proc in procs.items()}
    demo = json.loads(outputs["demo"][0])
    corpus.demo = {entry["provider"]: entry["run_id"] for entry in demo if entry.get("run_id")}
    assert {"claude", "codex-appserver"} <= set(corpus.demo), outputs["demo"][1]
    results = [json.loads(line) for line in corpus.batch.read_text().splitlines()]
    assert len(results) == 7, outputs["batch"][1]
    corpus.hostile_run = next(r["run_id"] for r in results if r["id"] == "hostile")
    runs = json.loads(corpus.run("runs", "--json"))
    corpus.chat = sorted((r["run_id"] for r in runs if r["session"] is not None), key=lambda rid: rid)
    assert len(corpus.chat) == 2
    corpus.hostile_batch = root / "hostile.results.jsonl"
    _hostile_results(corpus.hostile_batch, corpus.hostile_run)
    yield corpus
    corpus.cancel_leftovers()


@dataclass
class Viewer:
    """`harness view` running in a subprocess."""

    url: str
    """With the token."""
    proc: subprocess.Popen[str]

    @property
    def base(self) -> str:
        return self.url.split("/?", 1)[0]

    @property
    def token(self) -> str:
        return self.url.split("token=", 1)[1]

    @property
    def port(self) -> int:
        return int(self.base.rsplit(":", 1)[1])


def start_viewer(args: list[str], env: dict[str, str], cwd: Path) -> Viewer:
    proc = subprocess.Popen([*HARNESS, "view", *args], env=env, cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    deadline = time.monotonic() + 30
    seen = []
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        seen.append(line)
        found = re.search(r"(http://127\.0\.0\.1:\d+/\?token=\S+)", line)
        if found:
            return Viewer(found.group(1), proc)
    proc.kill()
    raise AssertionError(f"harness view printed no URL: {''.join(seen)} {proc.stderr.read() if proc.stderr else ''}")


def stop_viewer(viewer: Viewer) -> int:
    """Ctrl-C, as a user stops it; its exit status."""
    viewer.proc.send_signal(signal.SIGINT)
    try:
        return viewer.proc.wait(timeout=15)
    finally:
        if viewer.proc.poll() is None:
            viewer.proc.kill()
            viewer.proc.wait()


@pytest.fixture(scope="session")
def viewer(corpus: Corpus) -> Iterator[Viewer]:
    found = start_viewer(["--runs-dir", str(corpus.runs_dir), "--batch", str(corpus.batch),
                          "--batch", str(corpus.hostile_batch)], corpus.env, corpus.root)
    yield found
    assert stop_viewer(found) == 0


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    if not Path(CHROMIUM).exists():
        hint = f"no Chromium at {CHROMIUM}: run `bash scripts/system-packages.sh` (apt-get install chromium)"
        if os.environ.get("HARNESS_REQUIRE_REAL_CLIS") or os.environ.get("CI"):
            pytest.fail(hint)
        pytest.skip(hint)
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=DEADLINE * 1000)  # a loaded machine: every wait has this deadline
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@dataclass
class Tab:
    """A browser page, with the console messages it logged (a CSP violation shows there)."""

    page: Any
    console: list[str]


@pytest.fixture
def tab(browser: Any) -> Iterator[Tab]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(DEADLINE * 1000)
    console: list[str] = []
    page.on("console", lambda message: console.append(message.text))
    page.on("pageerror", lambda error: console.append(f"pageerror: {error}"))
    yield Tab(page, console)
    context.close()


@pytest.fixture(scope="session")
def screenshots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    chosen = os.environ.get("HARNESS_VIEW_SCREENSHOTS")
    where = Path(chosen) if chosen else tmp_path_factory.mktemp("screenshots")
    where.mkdir(parents=True, exist_ok=True)
    return where

