"""The viewer's pages as HTML, the same for the server and a bundle: the runs list, a run, a live section of a
run, the batches, a batch (its report, charts, tasks and patches).

Reads runs through `harness_core.store` and batches through `batches`; knows nothing of HTTP (the caller
turns a missing run into its 404) or of where the HTML goes.
"""

from __future__ import annotations

import os
import stat
import time
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from harness_core import FileChange, FilesChanged, HarnessError
from harness_core.store import (
    ANSWERS_SUFFIX,
    WAITING_FOR_APPROVAL,
    WORKER_LOG_SUFFIX,
    BadLine,
    RunSummary,
    list_runs,
    read_events,
    summarize,
    validate_run_id,
    wire_path,
)
from markupsafe import Markup

from harness_view import charts
from harness_view.batch_report import Report, report
from harness_view.batches import Batch, BatchRow, discover_batches, read_rows
from harness_view.catalog import LIMIT, Filters, RunRow, in_session, rows, turn_number
from harness_view.files import is_run_file, own_log
from harness_view.render import Links, render
from harness_view.settings import ViewerSettings
from harness_view.timeline import Timeline

__all__ = ["FILES", "NoSuchPage", "Patch", "RunPage", "Site"]

FILES = "files"
"""The key of a run page's list of its files (the run log, the wire log, the worker's output): a live section."""

_LIVE = ("running", WAITING_FOR_APPROVAL)
_PATCHES_SHOWN = 200


class NoSuchPage(LookupError):
    """No run (or batch) by that name: the server answers 404 with this message."""


@dataclass
class RunPage:
    """What a run's page shows: its timeline folded from the log, and what the viewer may do with it."""

    run_id: str
    timeline: Timeline
    summary: RunSummary
    answerable: bool
    turns: list[RunRow] = field(default_factory=list)
    linkable: set[str] = field(default_factory=set)
    has_wire: bool = False
    has_worker_log: bool = False
    bad_lines: list[BadLine] = field(default_factory=list)

    @property
    def status(self) -> str:
        return self.summary.status

    @property
    def live(self) -> bool:
        return self.status in _LIVE

    @property
    def cancellable(self) -> bool:
        return self.live

    @property
    def session(self) -> str | None:
        return self.summary.session

    @property
    def turn(self) -> int | None:
        return self.summary.turn

    @property
    def turn_number(self) -> int | None:
        return turn_number(self.turn)

    @property
    def provider_session(self) -> str | None:
        return self.summary.provider_session


@dataclass(frozen=True)
class Patch:
    """What one task cell changed (its last run's `files_changed`)."""

    task_id: str
    label: str
    files: tuple[FileChange, ...]
    patch_file: str | None


def _css() -> Markup:
    """The package's own style sheet, inlined in a bundle's pages (ours, not a log's: not escaped, so its quotes
    stay quotes inside `<style>`)."""
    return Markup(resources.files("harness_view").joinpath("static/style.css").read_text(encoding="utf-8"))


class Site:
    """The pages of one runs directory and its batches."""

    def __init__(self, settings: ViewerSettings, cwd: Path | None = None) -> None:
        self.settings = settings
        self.cwd = cwd or Path.cwd()

    @property
    def runs_dir(self) -> Path:
        return self.settings.runs_dir

    def batches(self) -> list[Batch]:
        return discover_batches(self.settings.batches, self.cwd)

    def batch(self, key: str) -> Batch:
        found = next((b for b in self.batches() if b.key == key), None)
        if found is None:
            raise NoSuchPage(f"no batch {key!r} here; the Batches page lists those this viewer knows")
        return found

    def html(self, template: str, links: Links, **context: Any) -> str:
        """`template` with what every page has: links, the CSRF token, the runs dir, the batches, the time."""
        base: dict[str, Any] = {"links": links, "csrf": self.settings.csrf, "runs_dir": self.runs_dir,
                                "nav_batches": [], "notice": None, "problem": None, "now": time.time(),
                                "made": time.time(), "css": _css() if links.bundle else ""}
        return render(template, **{**base, **context})

    def runs(self, filters: Filters, batch_key: str = "", *, links: Links, query: str = "",
             runs: list[RunSummary] | None = None, fragment: bool = False,
             nav_batches: list[Batch] | None = None, every: bool = False) -> str:
        """The runs list (or only its table: `fragment`); `runs` instead of the directory's (a bundle's)."""
        batches = [] if links.bundle else self.batches()
        if batch_key:
            chosen = next((b for b in batches if b.key == batch_key), None)
            found = read_rows(chosen.path).rows if chosen is not None else []
            ids = frozenset(rid for row in found for rid in (row.result.run_id, *row.result.run_ids))
            filters = Filters(filters.status, filters.provider, filters.session, filters.q, ids)
        snapshot = rows(self.runs_dir, filters, runs=runs, limit=None if every or links.bundle else LIMIT)
        template = "runs_fragment.html" if fragment else "runs.html"
        return self.html(template, links, snapshot=snapshot, filters=filters, batches=batches, batch_key=batch_key,
                         query=query, nav_batches=nav_batches or [])

    def run_page(self, run_id: str) -> RunPage:
        """Raises NoSuchPage: no such run (or not a run id)."""
        try:
            validate_run_id(run_id)
        except HarnessError:
            raise NoSuchPage(f"{run_id!r} is not a run id") from None
        path = own_log(self.runs_dir, run_id)
        if path is None:  # missing, or a link or another's file named like a log: nothing of it is read
            raise NoSuchPage(f"no run {run_id} in {self.runs_dir}")
        bad: list[BadLine] = []
        page = self.page_of(run_id, Timeline.of(list(read_events(path, on_bad_line=bad.append))), summarize(path))
        page.bad_lines = bad
        summary = page.summary
        if summary.session is not None:
            turns = [r for r in list_runs(self.runs_dir) if in_session(r, summary.session) and is_run_file(r.path)]
            page.turns = sorted((RunRow.of(r) for r in turns), key=lambda r: (r.turn or 0, r.started or 0))
            page.linkable = {r.run_id for r in page.turns}
        return page

    def page_of(self, run_id: str, timeline: Timeline, summary: RunSummary) -> RunPage:
        """The page of a run from its timeline so far and its summary (status, writer)."""
        has_wire, has_worker_log = self.files_of(run_id)
        page = RunPage(run_id, timeline, summary, answerable=False, has_wire=has_wire, has_worker_log=has_worker_log)
        page.answerable = page.live and (self.runs_dir / f"{run_id}{ANSWERS_SUFFIX}").is_file()
        return page

    def files_of(self, run_id: str) -> tuple[bool, bool]:
        """Whether run `run_id`'s page links its wire log, and its worker's output (a live page looks again)."""
        # a worker's output is an empty file while it plays, removed when the run ends empty: linked only once it
        # holds something (then it stays), never as a link about to die
        return (_plain_file(wire_path(self.runs_dir, run_id)),
                _plain_file(self.runs_dir / f"{run_id}{WORKER_LOG_SUFFIX}", empty=False))

    def run(self, run_id: str, *, links: Links, notice: str | None = None, problem: str | None = None,
            page: RunPage | None = None) -> str:
        page = page or self.run_page(run_id)
        return self.html("run.html", links, page=page, notice=notice, problem=problem)

    def section(self, page: RunPage, key: str, *, links: Links) -> str:
        """One section of a run's page (`timeline.HEAD`, a block's key, ...), as a live page replaces it."""
        return self.html("section.html", links, page=page, key=key).strip()

    def batches_page(self, *, links: Links) -> str:
        return self.html("batches.html", links, batches=self.batches(), cwd=self.cwd)

    def batch_page(self, batch: Batch, *, links: Links, linkable: set[str] | None = None) -> str:
        """A batch's page; `linkable` limits the runs linked to (a bundle's), else every run with a log."""
        read = read_rows(batch.path)
        summaries = self._summaries({rid for row in read.rows for rid in (row.result.run_id, *row.result.run_ids)})
        models = {rid: s.model for rid, s in summaries.items()}
        rep = report(read.rows, models)
        links_to = set(summaries) if linkable is None else linkable & set(summaries)
        shown = {"pass_rate": charts.pass_rate_chart(rep.groups), "cost": charts.cost_chart(rep.groups),
                 "time": charts.time_chart(rep.groups)}
        return self.html("batch.html", links, batch=batch, rep=rep, rows=read.rows, problems=read.problems,
                         charts=shown, linkable=links_to, patches=self._patches(rep, summaries),
                         show_pass_k=any(g.pass_k for g in rep.groups), nav_batches=[batch] if links.bundle else [])

    def _summaries(self, run_ids: set[str]) -> dict[str, RunSummary]:
        found: dict[str, RunSummary] = {}
        for run_id in run_ids:
            path = own_log(self.runs_dir, run_id)  # None: not a run id (a hand-edited results file), a link, a FIFO
            if path is not None:
                found[run_id] = summarize(path)
        return found

    def _patches(self, rep: Report, summaries: dict[str, RunSummary]) -> list[Patch]:
        patches: list[Patch] = []
        for line in rep.tasks:
            for label, cell in line.cells.items():
                last: BatchRow = cell.rows[-1]
                summary = summaries.get(last.result.run_id)
                files = _files_changed(summary.path) if summary is not None else ()
                if files or last.result.patch:
                    patches.append(Patch(line.task_id, label, files, last.result.patch))
                if len(patches) >= _PATCHES_SHOWN:
                    return patches
        return patches


def _files_changed(path: Path) -> tuple[FileChange, ...]:
    found: tuple[FileChange, ...] = ()
    try:
        for event in read_events(path, on_bad_line=lambda _bad: None):
            if isinstance(event, FilesChanged):
                found = event.files
    except OSError:
        return ()
    return found


def _plain_file(path: Path, *, empty: bool = True) -> bool:
    """Whether `path` is a regular file and not a link (the page links only to what the file route serves), and
    not empty unless `empty`."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISREG(st.st_mode) and (empty or st.st_size > 0)
