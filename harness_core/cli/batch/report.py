"""`harness report`'s body: the report of results files (`harness_core.batch.report`) as tables fitted to the terminal
(a block per group when narrow), `--json` (the `Report` model) or `--markdown`.

Layer: CLI, loaded when the command runs; knows the batch report, nothing of providers or runs.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

import click

from harness_core.batch.report import GroupReport, Report, TaskRow, report as build
from harness_core.cli.output import dumps
from harness_core.cli.render import terminal as term
from harness_core.cli.render.format import format_cost, format_duration
from harness_core.cli.render.layout import Column, fit_parts, fit_table, fit_text, output_width, table

__all__ = ["format_report", "markdown_report", "report"]

NONE = "—"
"""A figure that has no value (no verifier, no cost reported, pass@k undefined)."""


def report(files: Sequence[str], as_json: bool, markdown: bool) -> None:
    if as_json and markdown:
        raise click.UsageError("--json and --markdown are two forms of the same report: pass one of them")
    found = build(*files)
    if as_json:
        click.echo(dumps(found.model_dump(mode="json")))
    elif markdown:
        click.echo(markdown_report(found))
    else:
        click.echo(format_report(found, output_width(sys.stdout)))


def _plain(text: str) -> str:
    """Text of a results file (a task id, a provider, an error code: anyone may have written it) on one line, none
    of its control characters sent raw to the terminal."""
    return text.translate(term.UNSAFE).replace("\n", " ").replace("\t", " ")


def _percent(value: float | None) -> str:
    return NONE if value is None else f"{value * 100:.1f}%"


def _count(number: int) -> str:
    """``980``, ``12.3k``, ``4.56M``: token counts of a whole batch, short."""
    if number < 10_000:
        return f"{number:,}"
    if number < 1_000_000:
        return f"{number / 1000:.1f}k"
    return f"{number / 1_000_000:.2f}M"


def _pass_k(groups: Sequence[GroupReport]) -> int | None:
    """The k of the pass@k column: the groups' most attempts when all agree, 0 when they differ, None when no
    group has more than one attempt (pass@1 alone)."""
    ks = {group.attempts for group in groups if group.attempts > 1}
    return None if not ks else ks.pop() if len(ks) == 1 else 0


def _columns(groups: Sequence[GroupReport]) -> tuple[list[Column], list[list[str]]]:
    k = _pass_k(groups)
    columns = [Column("GROUP", title=True), Column("TASKS"), Column("RUNS"), Column("OK"), Column("INT"),
               Column("SOLVED"), Column("PASS"), Column("95% CI"), Column("PASS@1"),
               *([Column("PASS@K" if k == 0 else f"PASS@{k}")] if k is not None else []), Column("REWARD"),
               Column("COST"), Column("$/SOLVED"), Column("TOKENS IN/OUT"), Column("P50"), Column("P95"),
               Column("FAILURES", "wrap", least=16, under=True)]
    rows = []
    for group in groups:
        passing = (NONE if group.pass_rate is None else
                   f"{group.passed}/{group.verified_runs} {_percent(group.pass_rate)}")
        interval = (NONE if group.pass_rate_low is None or group.pass_rate_high is None else
                    f"{group.pass_rate_low * 100:.1f}–{_percent(group.pass_rate_high)}")
        at_k = []
        if k is not None:
            value = group.pass_at_k.get(group.attempts) if group.attempts > 1 else None
            at_k = [_percent(value) + (f" (k={group.attempts})" if k == 0 and value is not None else "")]
        rows.append([
            group.label, str(group.tasks), str(group.runs), str(group.succeeded), str(group.interrupted),
            str(group.solved), passing, interval, _percent(group.pass_at_k.get(1)), *at_k,
            NONE if group.mean_reward is None else f"{group.mean_reward:.3f}",
            NONE if group.cost_usd is None else format_cost(group.cost_usd),
            NONE if group.cost_per_solved_usd is None else format_cost(group.cost_per_solved_usd),
            f"{_count(group.input_tokens)}/{_count(group.output_tokens)}",
            _duration(group.duration_p50_ms), _duration(group.duration_p95_ms),
            ", ".join(f"{code} {count}" for code, count in group.errors.items()) or NONE,
        ])
    return columns, [[_plain(text) for text in row] for row in rows]


_SOLVED_BY = {"verifier": "verified by the task's verifier", "status": "the run succeeded (no verifier)",
              "mixed": "verified where a task has a verifier, else the run succeeded"}


def _legend(groups: Sequence[GroupReport]) -> list[str]:
    """What SOLVED counts in each group, and what the columns mean."""
    by: dict[str, list[str]] = {}
    for group in groups:
        by.setdefault(group.solved_by, []).append(group.label)
    solved = "; ".join(f"{_SOLVED_BY[how]} ({_plain(', '.join(labels))})" for how, labels in by.items())
    return [f"solved: {solved}.",
            "OK: runs that succeeded; INT: interrupted (not counted in rates, rewards or times); PASS: verified runs "
            "that passed, with the Wilson 95% CI; PASS@k: unbiased, averaged over tasks; $/SOLVED: cost per solved "
            "run; P50/P95: time per run."]


def _blocks(groups: Sequence[GroupReport], width: int) -> list[str]:
    """A block per group, for a terminal too narrow for the table: its name and runs, then a line per figure."""
    lines: list[str] = []
    for group in groups:
        interval = ("" if group.pass_rate_low is None or group.pass_rate_high is None else
                    f" (95% CI {group.pass_rate_low * 100:.1f}–{_percent(group.pass_rate_high)})")
        passing = (f"{group.passed}/{group.verified_runs} {_percent(group.pass_rate)}{interval}"
                   if group.pass_rate is not None else f"{NONE} (no verifier)")
        at_k = [f"pass@{k} {_percent(value)}" for k, value in sorted(group.pass_at_k.items())
                if k in (1, group.attempts)] or [f"pass@k {NONE}"]
        cost = NONE if group.cost_usd is None else format_cost(group.cost_usd)
        per = "" if group.cost_per_solved_usd is None else f", {format_cost(group.cost_per_solved_usd)} per solved run"
        figures = [
            ("pass", [passing, *at_k]),
            ("solved", [f"{group.solved} of {group.runs} runs ({_SOLVED_BY[group.solved_by]})"]),
            ("reward", [NONE if group.mean_reward is None else f"{group.mean_reward:.3f} mean"]),
            ("cost", [f"{cost} total{per}"]),
            ("tokens", [f"{group.input_tokens:,} in", f"{group.output_tokens:,} out"]),
            ("time", [f"p50 {_duration(group.duration_p50_ms)}", f"p95 {_duration(group.duration_p95_ms)}"]),
            ("failures", [f"{_plain(code)} {count}" for code, count in group.errors.items()] or [NONE]),
        ]
        lines += fit_text(f"{_plain(group.label)}: {group.tasks} tasks, {group.runs} runs: {group.succeeded} "
                          f"succeeded, {group.failed} failed, {group.interrupted} interrupted", width)
        for name, parts in figures:
            lines += fit_parts([f"  {name:<9} {parts[0]}", *parts[1:]], width, sep=", ", indent=" " * 12)
    return lines


def _duration(ms: int | None) -> str:
    return NONE if ms is None else format_duration(ms)


def _cell(row: TaskRow, label: str) -> str:
    for cells in row.groups:
        if cells.group == label:
            extra = f" ({cells.interrupted} int)" if cells.interrupted else ""
            return f"{cells.solved}/{cells.cells}{extra}"
    return "-"


def _grid(found: Report) -> tuple[list[str], list[list[str]]]:
    """The per-task grid: the groups' labels (its columns), and a row per task of `solved/cells` per group."""
    labels = [group.label for group in found.groups]
    grid = [[_plain(row.id), *(_cell(row, label) for label in labels)] for row in found.tasks]
    return [_plain(label) for label in labels], grid


def _grouped_by(groups: Sequence[GroupReport]) -> str:
    """What a group is: a provider/model, or one file's where several results files have that provider/model."""
    per_file = len({(group.provider, group.model) for group in groups}) < len(groups)
    return "provider/model, per file where files share one" if per_file else "provider/model"


def format_report(found: Report, width: int | None) -> str:
    """The report as text: the groups' table and what its columns count (a block per group when it does not fit
    `width`), the per-task grid (solved runs / runs of each task in each group), then the notes. None: whole lines."""
    files = _plain(", ".join(found.files))
    if not found.groups:
        return "\n".join(fit_text(f"no results in {files} yet (a batch writes a line as each task ends)", width))
    lines = fit_text(f"{files}: {found.cells} runs of {len(found.tasks)} tasks in {len(found.groups)} "
                     f"group(s) ({_grouped_by(found.groups)})", width)
    columns, rows = _columns(found.groups)
    wide = table([[column.name for column in columns], *rows])
    if width is None or max(len(line) for line in wide) <= width:
        lines += ["", *wide]
        for line in _legend(found.groups):
            lines += fit_text(line, width)
    else:
        lines += ["", *_blocks(found.groups, width)]
    labels, grid = _grid(found)
    lines += ["", *fit_text("solved runs per task:", width),
              *fit_table([Column("TASK", title=True), *(Column(label) for label in labels)], grid, width)]
    if found.notes:
        lines.append("")
        for note in found.notes:
            lines += fit_text(f"note: {_plain(note)}", width)
    return "\n".join(lines)


def _markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(_plain(cell).replace("|", "\\|") for cell in cells) + " |"

    return [line(header), "|" + "|".join("---" for _ in header) + "|", *(line(row) for row in rows)]


def markdown_report(found: Report) -> str:
    """The report as Markdown: the groups' table, what SOLVED counts, the per-task grid, the notes as a list."""
    files = _plain(", ".join(found.files))
    if not found.groups:
        return f"No results in {files} yet."
    columns, rows = _columns(found.groups)
    lines = [f"**{files}**: {found.cells} runs of {len(found.tasks)} tasks", "",
             *_markdown_table([column.name for column in columns], rows), ""]
    for line in _legend(found.groups):
        lines += [line, ""]
    labels, grid = _grid(found)
    lines += ["Solved runs per task:", "", *_markdown_table(["task", *labels], grid)]
    if found.notes:
        lines += ["", *(f"- {_plain(note)}" for note in found.notes)]
    return "\n".join(lines)
