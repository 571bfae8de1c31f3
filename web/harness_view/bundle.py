"""A static, self-contained copy of some runs (or a batch and its runs) to share: HTML pages with their style
inlined and no script, the run logs beside them, every link relative, so it opens from disk with no server.

Knows the pages (`pages.Site`) and the run store's names; nothing of HTTP.
"""

from __future__ import annotations

import os
from pathlib import Path

from harness_core import InvalidSpecError
from harness_core.store import find_run, list_runs, log_path

from harness_view.batches import Batch, discover_batches, read_rows
from harness_view.catalog import Filters
from harness_view.files import own_log, read_log
from harness_view.pages import Site
from harness_view.render import Links
from harness_view.settings import ViewerSettings

__all__ = ["write_bundle"]


def write_bundle(out_dir: Path, runs_dir: Path, run_refs: tuple[str, ...] = (), *,
                 batch: Path | None = None) -> Path:
    """Write the pages of the runs `run_refs` names (ids, unique prefixes, `last`) and/or of `batch` (a results
    file: its page and its tasks' runs) into `out_dir`; the path of its `index.html`.

    Raises:
        InvalidSpecError: nothing chosen, a run not found, a results file missing, `out_dir` not empty.
    """
    if not run_refs and batch is None:
        raise InvalidSpecError("name what to bundle: run ids (or `last`), or --batch RESULTS; e.g. "
                           "`harness view --bundle out/ last`")
    if batch is not None and not batch.is_file():
        raise InvalidSpecError(f"no results file {batch}; a batch's results are in TASKS.results.jsonl (or its "
                           "--results FILE)")
    if out_dir.exists() and (not out_dir.is_dir() or any(out_dir.iterdir())):
        raise InvalidSpecError(f"{out_dir} is not an empty directory; give a new one (the bundle overwrites nothing)")
    site = Site(ViewerSettings(runs_dir, batches=(batch,) if batch is not None else ()))
    chosen = [find_run(runs_dir, ref) for ref in run_refs]
    for run_id in chosen:
        if own_log(runs_dir, run_id) is None:
            raise InvalidSpecError(f"{log_path(runs_dir, run_id)} is not a run's own log (a symbolic link, or not a "
                                   "regular file of yours), so it is not copied; bundle other runs, or remove it")
    the_batch: Batch | None = None
    if batch is not None:
        the_batch = discover_batches((batch,), Path.cwd())[0]
        for row in read_rows(the_batch.path).rows:
            chosen.extend(rid for rid in (row.result.run_id, *row.result.run_ids) if _has_log(runs_dir, rid))
    ids = list(dict.fromkeys(chosen))
    (out_dir / "runs").mkdir(parents=True, exist_ok=True)
    runs = [r for r in list_runs(runs_dir) if r.run_id in set(ids) and own_log(runs_dir, r.run_id) is not None]
    nav = [the_batch] if the_batch is not None else []
    _write(out_dir / "index.html", site.runs(Filters(), links=Links(bundle=True), runs=runs, nav_batches=nav))
    for run_id in ids:
        page = site.run_page(run_id)
        page.linkable &= set(ids)
        page.turns = [t for t in page.turns if t.run_id in page.linkable]  # only the chosen runs' own content
        log = read_log(runs_dir, run_id)
        if log is None:
            raise InvalidSpecError(f"the log of run {run_id} changed into something not a run's own file while it was "
                                   "copied; run the bundle again into a new directory")
        _write(out_dir / "runs" / f"{run_id}.html", site.html("run.html", Links(bundle=True, depth=1), page=page,
                                                               nav_batches=nav))
        _write(out_dir / "runs" / f"{run_id}.jsonl", log)
    if the_batch is not None:
        _write(out_dir / f"batch-{the_batch.key}.html",
               site.batch_page(the_batch, links=Links(bundle=True), linkable=set(ids)))
    return out_dir / "index.html"


def _has_log(runs_dir: Path, run_id: str) -> bool:
    return own_log(runs_dir, run_id) is not None


def _write(path: Path, content: str | bytes) -> None:
    data = content.encode() if isinstance(content, str) else content
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
