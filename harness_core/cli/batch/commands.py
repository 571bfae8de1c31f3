"""The click definitions of `harness batch` (body: `batch.invocation`) and `harness report` (body: `batch.report`):
arguments, options and help.

Layer: CLI start-up (click and the standard library at the top; each command imports its body when it runs).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from harness_core.cli.complete import complete_provider, complete_scenario
from harness_core.cli.exits import harness_command
from harness_core.cli.flags.numbers import Number
from harness_core.cli.flags.otel_flag import OTEL_OPTION
from harness_core.cli.flags.output_flags import JSON_OPTION
from harness_core.cli.flags.scenario_flag import scenario_callback
from harness_core.cli.flags.tool_flags import TOOLS_OPTION, tool_flag_options

__all__ = ["batch", "report"]


@click.command()
@click.argument("tasks", metavar="TASKS.jsonl", required=False, type=click.Path(dir_okay=False, allow_dash=True))
@click.option("--harbor", type=click.Path(file_okay=False, path_type=Path), metavar="TASKS_DIR",
              help="Instead of TASKS.jsonl: the Harbor task directories in TASKS_DIR (or the one it is): "
                   "instruction.md the prompt, tests/test.sh the verifier (run under bubblewrap), each played in a "
                   "copy of what its Dockerfile puts in WORKDIR. A task that needs a container is refused.")
@click.option("--concurrency", "-j", type=Number(low=1, high=10_000, example="4"), default=4, show_default=True,
              help="Tasks live at once, at most.")
@click.option("--provider", "-p", "providers", metavar="NAME", multiple=True, shell_complete=complete_provider,
              help="Provider of the tasks that name none (default: $HARNESS_PROVIDER, else the default provider). "
                   "Repeat it to play each such task with each provider (a cell per provider).")
@click.option("--model", "-m", "models", metavar="M", multiple=True,
              help="Model of the tasks that name none (default: the provider's). Repeat it to play each such task "
                   "with each model (a cell per model).")
@click.option("--attempts", type=Number(low=1, high=1000, example="3"), default=1, show_default=True, metavar="K",
              help="Play each task K times, each attempt in a fresh workspace with its own run and result line "
                   "(`attempt`), for pass@k.")
@click.option("--verify", metavar="CMD",
              help="Run CMD (/bin/sh -c) in each cell's workspace after its agent succeeded, to judge the work: "
                   "reward.json (its `reward`) or reward.txt written in $HARNESS_VERIFIER_DIR, else exit status 0, "
                   "is the reward (1.0 passes). A task's own `verify` wins.")
@click.option("--verify-timeout", type=Number(real=True, low=0, low_open=True, high=7 * 86400, unit="seconds"),
              metavar="SECONDS", help="Seconds a verifier may take before its processes are killed and the cell "
                                      "fails verification (default 600; a task's own `verify_timeout` wins).")
@click.option("--results", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
              help="Results file (JSONL, one line per cell as it ends). Cells it holds as finished (success or "
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
@click.option("--trajectories", type=click.Path(file_okay=False, path_type=Path), metavar="DIR",
              help="Write each cell's run there as an ATIF trajectory (CELL.json, as `harness export RUN --format "
                   "atif` writes it).")
@click.option("--patches", type=click.Path(file_okay=False, path_type=Path), metavar="DIR",
              help="With --worktrees: write each task's diff as DIR/ID.patch (a task of several cells: "
                   "DIR/ID+PROVIDER+MODEL+aN.patch, what varies), and DIR/predictions.jsonl (instance_id, "
                   "model_patch, model_name_or_path) as SWE-bench-style evaluators read.")
@click.option("--engine", default="local", show_default=True, metavar="NAME",
              help="Where tasks run: `local` (this process) or an installed executor such as `ray` (harness-ray).")
@click.option("--address", metavar="ADDR", help="With --engine ray: the cluster to join (default: start a local one).")
@click.option("-E", "--engine-option", "engine_options", multiple=True, metavar="KEY=VALUE",
              help="An option of the engine (repeatable).")
@click.option("--rerun-failed", is_flag=True,
              help="Play again the cells whose result in the results file is `failed`, and those whose verifier gave "
                   "no verdict (timed out, could not start, an unreadable reward); only the rest are skipped.")
@click.option("--record-wire", is_flag=True, help="Also log every line to and from each agent CLI.")
@click.option("--json", "as_json", is_flag=True, help="Print each task's result as a JSON line on stdout.")
@click.option("-v", "--verbose", is_flag=True, help="A line for every task (also those that succeeded).")
@OTEL_OPTION
@TOOLS_OPTION
@tool_flag_options
@harness_command
def batch(tasks: str | None, concurrency: int, providers: tuple[str, ...], models: tuple[str, ...], attempts: int,
          verify: str | None, verify_timeout: float | None, results: Path | None, runs_dir: Path | None,
          offline: bool, scenario: str, retry: int, retry_backoff: float, max_cost_usd: float | None,
          repo: Path | None, ref: str, worktrees_dir: Path | None, keep_worktrees: bool, patches: Path | None,
          trajectories: Path | None,
          engine: str, address: str | None, engine_options: tuple[str, ...], rerun_failed: bool, record_wire: bool,
          as_json: bool, verbose: bool, spec_fields: dict[str, Any] | None = None,
          tool_refs: tuple[str, ...] = (), harbor: Path | None = None) -> None:
    """Run the tasks of TASKS.jsonl (`-`: stdin), one JSON object per line: an `AgentRunSpec`'s fields plus a
    unique `id`, and optionally `provider`, `ref` (with --worktrees), `scenario` (with --offline), and `verify`,
    `verify_timeout`, `verify_env` (the task's verifier).

    Each task is played once per cell: by each --provider and --model (unless its line names its own), each of
    --attempts. Every line is checked before anything starts. Each cell's run is logged as `harness run`'s are;
    its result goes to the results file as it ends, so running the same command again finishes only what is left.
    Ctrl-C (or SIGTERM) interrupts the live runs (and verifiers) cleanly and records them as interrupted.

    Exit status: 0 every cell's run succeeded, 1 a cell's run failed (or was not started), 2 usage error, 130
    interrupted. A verifier's verdict is data (`verified`, `reward` in the results), not the exit status.
    """
    from harness_core.cli.batch.invocation import batch as implementation

    implementation(tasks=tasks, concurrency=concurrency, providers=providers, models=models, attempts=attempts,
                   verify=verify, verify_timeout=verify_timeout, results=results, runs_dir=runs_dir,
                   offline=offline, scenario=scenario, retry=retry, retry_backoff=retry_backoff,
                   max_cost_usd=max_cost_usd, repo=repo, ref=ref, worktrees_dir=worktrees_dir,
                   keep_worktrees=keep_worktrees, patches=patches, trajectories=trajectories, engine=engine,
                   address=address,
                   engine_options=engine_options, rerun_failed=rerun_failed, record_wire=record_wire, as_json=as_json,
                   verbose=verbose, spec_fields=spec_fields, harbor=harbor, tool_refs=tool_refs)


@click.command()
@click.argument("files", metavar="RESULTS.jsonl...", nargs=-1, required=True, type=click.Path(dir_okay=False))
@JSON_OPTION
@click.option("--markdown", is_flag=True, help="Print Markdown tables (for a pull request or a notebook).")
@harness_command
def report(files: tuple[str, ...], as_json: bool, markdown: bool) -> None:
    """Report on what batches came to, from their results files (`harness batch` writes TASKS.results.jsonl): per
    provider and model, the tasks and runs, the runs that succeeded, the verified pass rate with its 95% confidence
    interval, pass@1 and pass@k (the unbiased estimator, when every task has k attempts), the mean reward, the cost
    (total and per solved run), tokens, the median and p95 time and the failures by error code; then, per task, how
    many of its runs were solved in each group.

    The last line of each cell (task, provider, model, attempt) of a file counts: a resumed batch appends. A batch
    still running reports what it has so far. Several files make one report, each file a batch of its own: a
    provider/model in several files is a group per file (FILE-STEM: provider[/model]), so two batches of the same
    tasks (two prompts, say) compare side by side. Formulas: docs/evaluate.md.

    Exit status: 0 reported; 2 a file is missing or is not a results file.
    """
    from harness_core.cli.batch.report import report as implementation

    implementation(files=files, as_json=as_json, markdown=markdown)
