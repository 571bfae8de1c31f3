"""The reports behind `harness runs`, `harness runs prune` and `harness show` (and `run --diff`): past runs read
back from their logs, typed, with their `--json` form and their text.

Layer: CLI, loaded when one of those commands runs; knows the run store and the event models; nothing of providers
or of the runner.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness_core import (
    ApprovalRequested,
    ApprovalResolved,
    ContextUsage,
    Done,
    ErrorEvent,
    ErrorInfo,
    HarnessResult,
    HarnessToolDetails,
    InvalidSpecError,
    RunStarted,
    RunStatus,
    SessionStarted,
    TextDelta,
    ToolResult,
    ToolUse,
    Usage,
)
from harness_core.cli.render import terminal as term
from harness_core.cli.render.format import excerpt, format_duration, format_tokens, tool_line
from harness_core.cli.render.layout import Column, fit_table, fit_text
from harness_core.cli.render.tools import ToolBook
from harness_core.events import FileChange, FilesChanged
from harness_core.store import (
    TRUNCATED,
    WORKER_LOG_SUFFIX,
    BadLine,
    RunSummary,
    log_path,
    read_events,
    summarize,
    validate_run_id,
)

__all__ = ["RunDetails", "format_age", "format_bytes", "format_runs", "format_show", "run_details",
           "turn_mark"]


@dataclass(frozen=True)
class RunDetails:
    """`harness show`: a run's summary plus what happened in it, gathered from its whole log."""

    summary: RunSummary
    model: str | None
    started: RunStarted | None
    usage: Usage | None
    tools: tuple[HarnessToolDetails, ...]
    final_text: str
    error: ErrorInfo | None
    events: int = 0
    """How many events of the log were readable."""
    bad_lines: tuple[BadLine, ...] = ()
    """Complete lines that are not Harness events (corrupt, or from a newer Harness): skipped, and named."""
    changes: tuple[FileChange, ...] | None = None
    """The run's `files_changed` (each file before the run against after it, with its diff); None when the log
    has none (no tool announced a file change, or an older Harness wrote it)."""
    not_run: tuple[str | None, ...] = ()
    """For each of `tools`: why it never ran (its approval was not given: "denied", "aborted", "interrupted", ""
    when not known), or None when it may have run — as the live view says it (`render.tools.ToolBook`)."""

    @property
    def duration_ms(self) -> int | None:
        return self.summary.done.result.duration_ms if self.summary.done else None

    @property
    def files_changed(self) -> tuple[str, ...]:
        """The files the run changed, from its `files_changed` record; for a log without one, the paths its
        completed write and edit tools touched, each once, in order (files a shell command changed are not known)."""
        if self.changes is not None:
            return tuple(c.path for c in self.changes)
        changed = [t.path for t in self.tools
                   if t.path and t.kind.value in ("write", "edit") and t.status.value == "completed"]
        return tuple(dict.fromkeys(changed))

    def _not_run(self) -> tuple[str | None, ...]:
        return self.not_run if len(self.not_run) == len(self.tools) else (None,) * len(self.tools)

    @property
    def cwd(self) -> str | None:
        """The run's workspace, as its `run_started` recorded it."""
        cwd = self.started.spec.get("cwd") if self.started else None
        return cwd if isinstance(cwd, str) else None

    def as_json(self) -> dict[str, Any]:
        """The summary's fields (`RunSummary.as_json`), `cli_version` and `cwd` when the log has its
        `run_started`, then usage, tools (without their raw provider fields), the files changed, final text,
        error and bad lines."""
        found = self.summary.as_json()
        found["model"] = self.model
        if self.started is not None:
            found.update(cli_version=self.started.cli_version, cwd=self.started.spec.get("cwd"))
        found.update(
            usage=self.usage.model_dump(mode="json") if self.usage else None,
            tools=[{**t.model_dump(mode="json", exclude={"raw"}), **({"not_run": why} if why is not None else {})}
                   for t, why in zip(self.tools, self._not_run(), strict=True)],
            files_changed=list(self.files_changed),
            changes=[c.model_dump(mode="json") for c in self.changes] if self.changes is not None else None,
            final_text=self.final_text,
            error=self.error.model_dump(mode="json") if self.error else None,
            bad_lines=[bad.as_json() for bad in self.bad_lines],
        )
        return found


def run_details(runs_dir: Path, run_id: str) -> RunDetails:
    """Read run `run_id` back from its log: whatever is readable; bad lines are skipped and listed in
    `bad_lines` (`harness show` names them and fails only when no line at all is readable).

    Raises:
        InvalidSpecError: a malformed id or no such run (both messages point to `harness runs`).
    """
    path = log_path(runs_dir, validate_run_id(run_id))
    if not path.is_file():
        raise InvalidSpecError(
            f"no run {run_id!r} in {runs_dir}; see `harness runs` for the ids of your runs", run_id=run_id
        )
    summary = summarize(path)
    model = summary.started.spec.get("model") if summary.started else None
    started: RunStarted | None = None
    tools: dict[str, HarnessToolDetails] = {}
    text: list[str] = []
    usage: Usage | None = None
    errors: list[ErrorInfo] = []
    result: HarnessResult | None = None
    changes: tuple[FileChange, ...] | None = None
    bad: list[BadLine] = []
    book, not_run = ToolBook(), dict[str, str | None]()
    count = 0
    for event in read_events(path, on_bad_line=bad.append):
        count += 1
        if isinstance(event, (ToolUse, ToolResult)):
            tools[event.tool_id] = event.display
            if isinstance(event, ToolResult):
                not_run[event.tool_id] = book.finished(event)
        elif isinstance(event, ApprovalRequested):
            book.asked(event)
        elif isinstance(event, ApprovalResolved):
            book.resolved(event)
        elif isinstance(event, TextDelta):
            text.append(event.text)
        elif isinstance(event, ContextUsage) and not event.cumulative:
            usage = event.usage
        elif isinstance(event, SessionStarted) and event.model and not model:
            model = event.model
        elif isinstance(event, ErrorEvent):
            errors.append(event.error)
        elif isinstance(event, Done):
            result = event.result
        elif isinstance(event, RunStarted):
            started = event
        elif isinstance(event, FilesChanged):
            changes = event.files
    if result is not None and (result.usage.input_tokens or result.usage.output_tokens):
        usage = result.usage
    if result is not None and result.status is RunStatus.INTERRUPTED:  # a question the interrupt cut short
        not_run = {tool_id: "interrupted" if why == "" else why for tool_id, why in not_run.items()}
    return RunDetails(
        summary=summary,
        model=model,
        started=started,
        usage=usage,
        tools=tuple(tools.values()),
        not_run=tuple(not_run.get(tool_id) for tool_id in tools),
        final_text=result.final_text if result and result.final_text else "".join(text),
        error=result.error if result and result.error else (errors[-1] if errors else None),
        events=count,
        bad_lines=tuple(bad),
        changes=changes,
    )


def _duration(ms: int | None) -> str:
    return format_duration(ms) if ms is not None else "-"


def format_runs(runs: list[RunSummary], runs_dir: Path, width: int | None = None) -> str:
    """The text of `harness runs`: a row per run, fitted to `width` (the terminal's; None: whole rows): the model
    and the prompt cut, then the prompt on a line of its own under its row, then a block per run; run ids are
    never cut (they are what `harness show` takes)."""
    if not runs:
        return "\n".join(fit_text(f"no runs in {runs_dir} yet; start one with `harness run PROMPT`", width))
    now = time.time()
    costs = [_cost(run) for run in runs]
    columns = [Column("RUN", title=True), Column("PROVIDER"), Column("MODEL", "cut", least=10),
               Column("STATUS", title=True), Column("AGE"), Column("DURATION"),
               *([Column("COST")] if any(costs) else []), Column("PROMPT", "cut", least=16, under=True)]
    rows = []
    for run, cost in zip(runs, costs, strict=True):
        started, done = run.started, run.done
        rows.append([
            run.run_id,
            (started.provider if started else None) or "?",
            (run.model or "default").translate(term.UNSAFE),
            run.status,
            format_age(now - started.ts) if started else "-",
            _duration(done.result.duration_ms if done else None),
            *([cost or "-"] if any(costs) else []),
            turn_mark(run) + excerpt(started.spec.get("prompt") if started else None),
        ])
    return "\n".join(fit_table(columns, rows, width))


def turn_mark(run: RunSummary) -> str:
    """``[turn 2] `` for the second turn of a session (counted from 1, as people do; `--json` has the index)."""
    return f"[turn {run.turn + 1}] " if run.turn is not None else ""


def _cost(run: RunSummary) -> str:
    usage = run.done.result.usage if run.done else None
    return f"${usage.cost_usd:.4f}" if usage is not None and usage.cost_usd is not None else ""


def _relative(path: str, cwd: str | None) -> str:
    """`path` relative to the run's workspace when it is inside it (as the live view shows paths)."""
    if cwd and path.startswith(cwd.rstrip("/") + "/"):
        return path[len(cwd.rstrip("/")) + 1:]
    return path


def format_show(details: RunDetails) -> str:
    summary = details.summary
    started = summary.started
    session_id = summary.provider_session
    lines = [
        f"run       {summary.run_id}",
        f"provider  {(started.provider if started else None) or '?'}",
        f"model     {details.model or 'default'}",
        f"status    {summary.status}",
    ]
    if summary.status == "lost":
        lines.append("          (its Harness ended before the run did: killed, or the machine went down; the agent's "
                     "processes ended with it, as each runs under a supervisor)")
        worker_log = summary.path.with_name(f"{summary.run_id}{WORKER_LOG_SUFFIX}")
        if worker_log.is_file() and worker_log.stat().st_size:
            lines.append(f"          its background worker's last words: {str(worker_log).translate(term.UNSAFE)}")
    elif summary.status == TRUNCATED:
        lines.append("          (writing its log failed, a full disk or an I/O error, so the run was stopped "
                     "(log_write_failed); the log holds its events up to the failure, without its result)")
    if started is not None:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(started.ts))
        lines.append(f"started   {when}")
    lines.append(f"duration  {_duration(details.duration_ms)}")
    if details.cwd:
        lines.append(f"directory {details.cwd.translate(term.UNSAFE)}")
    if details.usage:
        cost = f" · ${details.usage.cost_usd:.4f}" if details.usage.cost_usd is not None else ""
        lines.append(f"usage     {format_tokens(details.usage)}{cost}")
    if summary.session is not None and summary.turn is not None:
        live = " (one live agent process)" if started and started.session_turn and started.session_turn.live else ""
        lines.append(f"turn      {summary.turn + 1} of session {summary.session}{live}")
    if session_id:
        lines.append(f"session   {session_id}")
    prompt = started.spec.get("prompt") if started else None
    safe = prompt.translate(term.UNSAFE) if isinstance(prompt, str) else None  # no escape sequences from a log
    first, *rest = (safe.splitlines() or [""]) if safe is not None else [excerpt(None)]
    lines.append(f"prompt    {first}")
    lines += [f"          {line}" for line in rest]
    if details.files_changed:
        changed = ", ".join(_relative(p, details.cwd) for p in details.files_changed)
        lines.append(f"changed   {changed.translate(term.UNSAFE)}")
    if details.tools:
        lines.append("tools")  # paths inside the run's workspace read as in the live view: relative
        lines += [f"  {tool_line(t, cwd=details.cwd, not_run=why)}"
                  for t, why in zip(details.tools, details._not_run(), strict=True)]
    if details.error:
        lines.append(f"error     {details.error.code}: {details.error.message}")
    for bad in details.bad_lines:
        lines.append(f"skipped   {bad.describe()}")
    if details.final_text:
        lines += ["", details.final_text.rstrip()]
    return "\n".join(lines)


def format_age(seconds: float) -> str:
    """``45 s``, ``90 m``, ``12 h``, ``41 d``: the largest unit that keeps a whole number of at least 1 (at
    most 3 digits of minutes and hours)."""
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= 2 * size or (unit == "d" and seconds >= size):
            return f"{int(seconds // size)} {unit}"
    return f"{max(0, int(seconds))} s"


def format_bytes(size: int) -> str:
    """``512 B``, ``1.5 KiB``, ``20.0 MiB``, ``1.2 GiB``."""
    if size < 1024:
        return f"{size} B"
    value = size / 1024
    for unit in ("KiB", "MiB"):
        if value < 1024:
            return f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GiB"
