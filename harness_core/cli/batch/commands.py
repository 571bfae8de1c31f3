"""`harness batch`'s click definition: its arguments, options and help; the body is `batch.invocation`.

Layer: CLI start-up (click and the standard library at the top; each command imports its body when it runs).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from harness_core.cli.complete import complete_provider, complete_scenario
from harness_core.cli.exits import harness_command
from harness_core.cli.flags.numbers import Number
from harness_core.cli.flags.scenario_flag import scenario_callback
from harness_core.cli.flags.tool_flags import TOOLS_OPTION, tool_flag_options

__all__ = ["batch"]


@click.command()
@click.argument("tasks", metavar="TASKS.jsonl", required=False, type=click.Path(dir_okay=False, allow_dash=True))
@click.option("--harbor", type=click.Path(file_okay=False, path_type=Path), metavar="TASKS_DIR",
              help="Instead of TASKS.jsonl: the Harbor task directories in TASKS_DIR (or the one it is): "
                   "instruction.md the prompt, tests/test.sh the verifier (run under bubblewrap), each played in a "
                   "copy of what its Dockerfile puts in WORKDIR. A task that needs a container is refused.")
@click.option("--concurrency", "-j", type=Number(low=1, high=10_000, example="4"), default=4, show_default=True,
              help="Tasks live at once, at most.")
@click.option("--provider", "-p", metavar="NAME", shell_complete=complete_provider,
              help="Provider of the tasks that name none (default: $HARNESS_PROVIDER, else the default provider).")
@click.option("--results", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
              help="Results file (JSONL, one line per task as it ends). Tasks it holds as finished (success or "
                   "failed) are not run again. Default: TASKS.results.jsonl beside the tasks file.")
@click.option("--runs-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Where each run's log goes (default: as `harness run`).")
@click.option("--offline", is_flag=True,
              help="Play every task against the embedded scripted model backend (no credentials, no network): "
                   "a task's `scenario` field, else --scenario.")
@click.option("--scenario", default="tools", show_default=True, metavar="NAME", callback=scenario_callback,
              shell_complete=complete_scenario, help="With --offline: the scenario of tasks that name none.")
@click.option("--retry", type=Number(low=0, high=100), default=0, show_default=True, metavar="N",
              help="Play a task again up to N times when it failed for a transient reason (rate limit, HTTP 5xx, "
                   "a crashed CLI or worker), after an exponential backoff with jitter.")
@click.option("--retry-backoff", type=Number(real=True, low=0, high=3600, unit="seconds"), default=2.0,
              show_default=True, metavar="SECONDS",
              help="The first retry's wait, at most (it doubles each time, capped at 60 s).")
@click.option("--max-cost-usd", type=Number(real=True, low=0, low_open=True, high=1_000_000, unit="USD"), metavar="USD",
              help="Start no more tasks once the batch's runs have cost this much (runs already live finish).")
@click.option("--worktrees", "repo", type=click.Path(file_okay=False, path_type=Path), metavar="REPO",
              help="Give each task its own git worktree of REPO (at --ref, or the task's `ref`).")
@click.option("--ref", default="HEAD", show_default=True, metavar="REF",
              help="With --worktrees: the commit to check out.")
@click.option("--worktrees-dir", type=click.Path(file_okay=False, path_type=Path), metavar="DIR",
              help="With --worktrees: where the worktrees are made (default: under ~/.cache/harness/worktrees).")
@click.option("--keep-worktrees", is_flag=True, help="Keep each task's worktree (or offline workspace) afterwards.")
@click.option("--patches", type=click.Path(file_okay=False, path_type=Path), metavar="DIR",
              help="With --worktrees: write each task's diff as DIR/ID.patch, and DIR/predictions.jsonl "
                   "(instance_id, model_patch, model_name_or_path) as SWE-bench-style evaluators read.")
@click.option("--engine", default="local", show_default=True, metavar="NAME",
              help="Where tasks run: `local` (this process) or an installed executor such as `ray` (harness-ray).")
@click.option("--address", metavar="ADDR", help="With --engine ray: the cluster to join (default: start a local one).")
@click.option("-E", "--engine-option", "engine_options", multiple=True, metavar="KEY=VALUE",
              help="An option of the engine (repeatable).")
@click.option("--rerun-failed", is_flag=True,
              help="Play again the tasks whose result in the results file is `failed` (only successes are skipped).")
@click.option("--record-wire", is_flag=True, help="Also log every line to and from each agent CLI.")
@click.option("--json", "as_json", is_flag=True, help="Print each task's result as a JSON line on stdout.")
@click.option("-v", "--verbose", is_flag=True, help="A line for every task (also those that succeeded).")
@TOOLS_OPTION
@tool_flag_options
@harness_command
def batch(tasks: str | None, concurrency: int, provider: str | None, results: Path | None, runs_dir: Path | None,
          offline: bool, scenario: str, retry: int, retry_backoff: float, max_cost_usd: float | None,
          repo: Path | None, ref: str, worktrees_dir: Path | None, keep_worktrees: bool, patches: Path | None,
          engine: str, address: str | None, engine_options: tuple[str, ...], rerun_failed: bool, record_wire: bool,
          as_json: bool, verbose: bool, spec_fields: dict[str, Any] | None = None,
          tool_refs: tuple[str, ...] = (), harbor: Path | None = None) -> None:
    """Run the tasks of TASKS.jsonl (`-`: stdin), one JSON object per line: an `AgentRunSpec`'s fields plus a
    unique `id`, and optionally `provider`, `ref` (with --worktrees) and `scenario` (with --offline).

    Every line is checked before anything starts. Each task's run is logged as `harness run`'s are; its result
    goes to the results file as it ends, so running the same command again finishes only what is left. Ctrl-C
    (or SIGTERM) interrupts the live runs cleanly and records them as interrupted.

    Exit status: 0 every task succeeded, 1 a task failed (or was not started), 2 usage error, 130 interrupted.
    """
    from harness_core.cli.batch.invocation import batch as implementation

    implementation(tasks=tasks, concurrency=concurrency, provider=provider, results=results, runs_dir=runs_dir,
                   offline=offline, scenario=scenario, retry=retry, retry_backoff=retry_backoff,
                   max_cost_usd=max_cost_usd, repo=repo, ref=ref, worktrees_dir=worktrees_dir,
                   keep_worktrees=keep_worktrees, patches=patches, engine=engine, address=address,
                   engine_options=engine_options, rerun_failed=rerun_failed, record_wire=record_wire, as_json=as_json,
                   verbose=verbose, spec_fields=spec_fields, harbor=harbor, tool_refs=tool_refs)
