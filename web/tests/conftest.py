"""Fixtures of the viewer's tests: a corpus of real runs made once per session (the demo's runs of every provider,
a chat, a batch over two providers, the hostile-text run), `harness view` itself in a subprocess, and headless
Chromium from the system packages driven by Playwright (never a downloaded browser). Screenshots go to
`$HARNESS_VIEW_SCREENSHOTS` (e.g. docs/images, to refresh the README's), else a temporary directory.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect, sync_playwright
from view_helpers import (
    CHROMIUM,
    CHROMIUM_ARGS,
    DEADLINE,
    HARNESS,
    Corpus,
    Tab,
    Viewer,
    batch_tasks,
    harness_env,
    hostile_results,
    start_viewer,
    stop_viewer,
    tools_bin,
)


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
    tasks.write_text("".join(json.dumps(t) + "\n" for t in batch_tasks()))
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
    hostile_results(corpus.hostile_batch, corpus.hostile_run)
    yield corpus
    corpus.cancel_leftovers()


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
    expect.set_options(timeout=DEADLINE * 1000)  # a loaded machine: every wait has this deadline
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


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

