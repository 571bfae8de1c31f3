"""`harness view`'s body: the local web viewer of runs, sessions and batches served, or `--bundle` written.

Layer: CLI, loaded when the command runs; imports the viewer (`harness-view`, its own distribution).
"""

from __future__ import annotations

import html
import os
import sys
import tempfile
import webbrowser
from pathlib import Path

import click
import harness_view

from harness_core.cli.exits import EXIT_USAGE, fail
from harness_core.cli.output import say
from harness_core.store import check_runs_dir, resolve_runs_dir

__all__ = ["view"]

_LOOPBACK = ("127.0.0.1", "localhost", "::1")


def view(run_ids: tuple[str, ...], port: int, open_browser: bool, batches: tuple[Path, ...], bundle: Path | None,
         host: str, runs_dir: Path | None) -> None:
    """The body of `harness view` (its flags and help: `view.commands`)."""
    directory = resolve_runs_dir(runs_dir)
    check_runs_dir(directory)
    if bundle is not None:
        if len(batches) > 1:
            raise click.UsageError("--bundle copies one batch: give --batch once")
        index = harness_view.write_bundle(bundle, directory, run_ids, batch=batches[0] if batches else None)
        click.echo(f"wrote {index} (open it in a browser; the directory holds the pages and the run logs, readable "
                   "by every user of this machine: it is made to be shared)")
        return
    if run_ids:
        raise click.UsageError("RUN_IDS choose what --bundle copies; the viewer shows every run (open one at "
                               "/runs/RUN_ID)")
    for results in batches:  # a typo is said now, not as an empty batch page later
        if not results.is_file():
            fail(f"no results file {results} (--batch); a batch's results are in TASKS.results.jsonl (or its "
                 "--results FILE): give that path, or leave --batch out to show the *.results.jsonl files of this "
                 "directory", EXIT_USAGE)
    settings = harness_view.ViewerSettings(directory, batches=batches, host=host)

    def ready(url: str) -> None:
        if host not in _LOOPBACK:  # said once it listens (not when the address cannot be had)
            port_used = url.split("/")[2].rsplit(":", 1)[1]
            say(f"listening on {host} over plain HTTP: the token and its cookie travel unencrypted, so anyone who "
                "can see the traffic can take them, then see your runs and answer their approvals. Prefer the "
                f"default 127.0.0.1 and `ssh -L {port_used}:127.0.0.1:{port_used} HOST` from your machine")
        click.echo(f"harness view: {directory} at\n\n    {url}\n\nCtrl-C stops it.")
        sys.stdout.flush()  # a pipe (a script waiting for the URL) gets it now, not when the viewer stops
        if open_browser and not _open(url):
            port_used = url.split("/")[2].rsplit(":", 1)[1]
            say("no browser to open here (no display?): open the URL above in yours (over ssh: "
                f"`ssh -L {port_used}:127.0.0.1:{port_used} HOST`, then the same URL on your machine)")

    harness_view.serve(settings, port=port, on_ready=ready)
    click.echo("harness view: stopped")


def _open(url: str) -> bool:
    """Open `url` in the user's browser through a 0600 file that redirects to it (as Jupyter does): the token never
    reaches a command line, which every local user can read in `ps`. False when there is no browser to open."""

    folder = Path(tempfile.mkdtemp(prefix="harness-view-"))  # 0700, this user's
    page = folder / "open.html"
    fd = os.open(page, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(f'<!doctype html><meta http-equiv="refresh" content="0;url={html.escape(url)}">'
                 f'<a href="{html.escape(url)}">harness view</a>\n')
    try:
        return webbrowser.open(page.as_uri())
    except webbrowser.Error:
        return False
