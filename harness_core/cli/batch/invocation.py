"""`harness batch`'s body: many runs from TASKS.jsonl, at most N at once, each result in a results file (which
makes a re-run resume), optionally each in its own git worktree with its patch written, here or on Ray.

Layer: CLI, loaded when the command runs; knows nothing of any concrete provider or engine.
"""

from __future__ import annotations

import functools
import signal
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import click

from harness_core.batch import Batch, BatchStats, TaskFileError, WorktreePlan, load_tasks
from harness_core.batch.harbor import harbor_tasks
from harness_core.batch.tasks import with_tool_fields
from harness_core.cli.batch.progress import BatchView, clock
from harness_core.cli.event_loop import run_async
from harness_core.cli.flags.option_pairs import OptionSyntaxError, parse_option_pairs
from harness_core.cli.flags.otel_flag import otel_from_config
from harness_core.cli.flags.tool_checks import load_cli_tools
from harness_core.cli.settings.loader import ConfigError, load_config
from harness_core.errors import HarnessError
from harness_core.plugins import PluginHost, get_host

__all__ = ["batch", "default_results"]

_EXIT_OK, _EXIT_FAILED, _EXIT_INTERRUPTED = 0, 1, 130  # = harness_core.errors (not imported: start-up time)


def default_results(tasks: str) -> Path | None:
    """`--results` when not given: beside the tasks file, `NAME.results.jsonl` (None for `-`)."""
    if tasks == "-":
        return None
    path = Path(tasks)
    stem = path.name[: -len(".jsonl")] if path.name.endswith(".jsonl") else path.name
    return path.with_name(f"{stem}.results.jsonl")


def batch(tasks: str | None, concurrency: int, providers: tuple[str, ...], models: tuple[str, ...], attempts: int,
          verify: str | None, verify_timeout: float | None, results: Path | None, runs_dir: Path | None,
          offline: bool, scenario: str, retry: int, retry_backoff: float, max_cost_usd: float | None,
          repo: Path | None, ref: str, worktrees_dir: Path | None, keep_worktrees: bool, patches: Path | None,
          trajectories: Path | None,
          engine: str, address: str | None, engine_options: tuple[str, ...], rerun_failed: bool, record_wire: bool,
          as_json: bool, verbose: bool, spec_fields: dict[str, Any] | None = None,
          tool_refs: tuple[str, ...] = (), harbor: Path | None = None) -> None:
    """`harness batch` (its help: `commands.batch`)."""
    # --harbor TASKS_DIR (ev-harbor): Harbor task directories instead of a tasks file
    if (tasks is None) == (harbor is None):
        raise click.UsageError("give TASKS.jsonl or --harbor TASKS_DIR (one of them)")
    source_path = tasks if tasks is not None else str(harbor.resolve()) if harbor is not None else "-"
    if patches is not None and repo is None:
        raise click.UsageError("--patches needs --worktrees REPO: a task's patch is the diff of its own worktree")
    if repo is None and (worktrees_dir is not None or ref != "HEAD"):
        raise click.UsageError("--ref and --worktrees-dir apply with --worktrees REPO")
    scenario_given = click.get_current_context().get_parameter_source("scenario") is not _DEFAULT
    if scenario_given and not offline:
        raise click.UsageError("--scenario applies with --offline")
    if verify is not None and harbor is not None:
        raise click.UsageError("each Harbor task has its own verifier (its tests/test.sh): --verify does not apply "
                               "with --harbor")
    if verify is not None and not verify.strip():
        raise click.BadParameter("give a shell command (for example --verify 'pytest -q')", param_hint="--verify")
    try:
        options: dict[str, Any] = parse_option_pairs(engine_options)
    except OptionSyntaxError as exc:
        raise click.BadParameter(str(exc), param_hint="-E/--engine-option") from None
    if address is not None:
        options["address"] = address
    results = results or default_results(source_path)
    if results is None:
        raise click.UsageError("with tasks from stdin (`-`), pass --results FILE: it is what lets a re-run resume")
    _configured_otel()
    host = get_host()
    early: list[tuple[int | None, str]] = []
    try:
        check = functools.partial(_provider_problem, host)
        loaded = harbor_tasks(harbor) if harbor is not None else load_tasks(source_path, offline=offline,
                                                                            check_provider=check)
    except TaskFileError as exc:  # checked further with the good lines: every problem is said in one go
        if harbor is not None:  # a Harbor directory's problems are said at once, with their own advice
            raise
        loaded, early = exc.tasks, exc.problems
    tools = load_cli_tools(tool_refs)  # runs the user's module here once; each attempt imports it again
    if spec_fields:  # the tool flags: for every task, under what its own line sets
        loaded = [with_tool_fields(task, spec_fields) for task in loaded]
    plan = WorktreePlan(repo.absolute(), ref, worktrees_dir) if repo is not None else None
    job = Batch(loaded, host=host, providers=providers, models=models, attempts=attempts, verify=verify,
                verify_timeout=verify_timeout, concurrency=concurrency, executor=engine,
                executor_options=options, runs_dir=runs_dir, results=results, retry=retry,
                retry_backoff=retry_backoff, offline=offline, scenario=scenario, worktrees=plan, patches=patches,
                trajectories=trajectories,
                keep=keep_worktrees, max_cost_usd=max_cost_usd, record_wire=record_wire, rerun_failed=rerun_failed,
                tools=tools)
    source = "<stdin>" if source_path == "-" else source_path
    sys.exit(run_async(_play, job, results, patches, as_json, verbose, source, early))


_DEFAULT = click.core.ParameterSource.DEFAULT


def _configured_otel() -> None:
    """Config `otel = true` turns tracing on as `--otel` does (before the plugin host loads). A batch reads no other
    setting of the files: one that does not load is not this command's to report."""
    try:
        found = load_config(warn=lambda _: None).values.get("otel")
    except ConfigError:
        return
    if found is not None:
        otel_from_config(found.value, found.source)


def _provider_problem(host: PluginHost, name: str) -> str | None:
    """A task's `provider` that is not installed: the host's message (did you mean, the installed ones)."""

    try:
        host.get(name)
    except HarnessError as exc:
        return exc.message
    return None


async def _play(job: Batch, results: Path, patches: Path | None, as_json: bool, verbose: bool, source: str,
                early: list[tuple[int | None, str]]) -> int:
    await job.check(early, source)  # every problem of every line (reading it too), before anything starts
    view = BatchView(job.stats, engine=job.executor.describe(), verbose=verbose)
    job.on_update = view.update
    async with anyio.create_task_group() as tg:
        hard_stop = tg.cancel_scope
        tg.start_soon(_watch_signals, job, view, hard_stop)
        with view:
            tg.start_soon(_tick, view)
            try:
                async for result in job.results():
                    if as_json:
                        print(result.model_dump_json(), flush=True)
            finally:  # also after a second Ctrl-C: what was done, and what is left
                _summary(job, view, results, patches)
        tg.cancel_scope.cancel()
    if job.interrupted:
        return _EXIT_INTERRUPTED
    stats = job.stats
    clean = stats.failed == 0 and stats.failed_earlier == 0 and stats.not_started == 0 and stats.interrupted == 0
    return _EXIT_OK if clean else _EXIT_FAILED


async def _tick(view: BatchView) -> None:
    while True:
        view.refresh()
        await anyio.sleep(0.25)


async def _watch_signals(job: Batch, view: BatchView, hard_stop: Any) -> None:
    """First SIGINT/SIGTERM/SIGHUP: interrupt every live run cleanly, start nothing more. Second: stop now."""

    watched = [signal.SIGINT, signal.SIGTERM]
    if signal.getsignal(signal.SIGHUP) is not signal.SIG_IGN:  # under nohup a hang-up stays ignored
        watched.append(signal.SIGHUP)
    with anyio.open_signal_receiver(*watched) as signals:
        count = 0
        async for _ in signals:
            count += 1
            if count == 1:
                job.interrupt()
                view.say(f"interrupting {job.stats.running} live run(s)… (press Ctrl-C again to stop at once; run "
                         "the same command again to resume)")
            elif count == 2:
                view.say("stopping now")
                hard_stop.cancel()


def _summary(job: Batch, view: BatchView, results: Path, patches: Path | None) -> None:
    s = job.stats
    if job.swept:
        size = sum(leftover.size for leftover in job.swept) / 2**20
        view.say(f"removed {len(job.swept)} temporary director{'y' if len(job.swept) == 1 else 'ies'} a killed "
                 f"Harness left ({size:.1f} MiB)")
    parts = [f"{s.succeeded} succeeded", f"{s.failed} failed"]
    if s.interrupted:
        parts.append(f"{s.interrupted} interrupted")
    if s.not_started:
        parts.append(f"{s.not_started} not started")
    if s.skipped:
        failed = f", {s.failed_earlier} of them failed: --rerun-failed plays those again" if s.failed_earlier else ""
        parts.append(f"{s.skipped} skipped (finished earlier{failed})")
    cost = f", ${s.cost_usd:.4f}" if s.cost_usd else ""
    what = "task(s)" if s.total == s.tasks else f"cells ({s.tasks} task(s) x providers, models, attempts)"
    if s.skipped == s.total:
        failed = f", {s.failed_earlier} of them failed (--rerun-failed plays those again)" if s.failed_earlier else ""
        view.say(f"batch: nothing to run: all {s.total} {what} finished earlier{failed}; results in {results}")
        _earlier_verdicts(view, s)
        return
    of = "" if s.total == s.tasks else f" of {s.total} {what}"
    view.say(f"batch: {', '.join(parts)}{of} in {clock(time.monotonic() - s.started)} on {view.engine} (at most "
             f"{s.peak_running} live at once{cost}); results in {results}")
    if s.verifiers and (s.passed or s.not_passed or s.passed_earlier):
        earlier = f" (and {s.passed_earlier} that passed earlier)" if s.passed_earlier else ""
        view.say(f"verified: {s.passed} of {s.passed + s.not_passed} cell(s) passed{earlier}; `harness report "
                 f"{results}` compares them")
        _earlier_verdicts(view, s)
    if patches is not None:
        view.say(f"patches in {patches} (predictions.jsonl for evaluators)")
    if job.trajectories_dir is not None:
        view.say(f"trajectories (ATIF) in {job.trajectories_dir}")
    if job.budget_reached:
        view.say(f"the batch reached --max-cost-usd (${s.cost_usd:.4f}): {s.not_started} task(s) not started; run "
                 "again with a higher limit to play them")
    elif s.not_started or s.interrupted:
        view.say("run the same command again to play the tasks left")
    kept = job.workspaces.kept_where if job.workspaces.keep else None
    if kept is not None:
        view.say(f"kept the workspaces in {kept}")


def _earlier_verdicts(view: BatchView, s: BatchStats) -> None:
    """What the skipped cells lack: a verdict (their verifier gave none), or any verification at all."""
    if s.no_verdict_earlier:
        view.say(f"{s.no_verdict_earlier} cell(s) finished earlier with no verdict from their verifier: "
                 "--rerun-failed plays them again")
    if s.unjudged_earlier:
        view.say(f"{s.unjudged_earlier} cell(s) finished earlier without a verifier: not judged (use a new "
                 "--results to judge them)")
