"""`harness view`: the local web viewer of runs, sessions and batches (or `--bundle`: a static copy to share).

Layer: CLI, imported at start-up: click at the top. The viewer is its own distribution (`harness-view`,
`web/` in a checkout), imported when the command runs; without it the command says how to install it.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from harness_core.cli.common import EXIT_USAGE, RUNS_DIR_OPTION, fail, harness_command, say
from harness_core.cli.complete import complete_run_id
from harness_core.cli.numbers import Number

__all__ = ["INSTALL_HINT", "view"]

INSTALL_HINT = ("`harness view` needs the harness-view package, which is not installed: from a checkout of Harness "
                "run `bash scripts/setup.sh` (or `.venv/bin/pip install -e web`)")
_LOOPBACK = ("127.0.0.1", "localhost", "::1")


@click.command(short_help="Look at runs, sessions and batches in your browser (live, with approvals).")
@click.argument("run_ids", nargs=-1, metavar="[RUN_IDS]...", shell_complete=complete_run_id)
@click.option("--port", type=Number(low=0, high=65535), default=0, show_default=False,
              help="Port to listen on (default: a free one).")
@click.option("--open", "open_browser", is_flag=True, help="Open the viewer in your browser.")
@click.option("--batch", "batches", multiple=True, type=click.Path(dir_okay=False, path_type=Path),
              metavar="RESULTS", help="A batch's results file to show (repeatable; default: the *.results.jsonl "
              "files of the current directory). With --bundle: the batch to copy.")
@click.option("--bundle", type=click.Path(file_okay=False, path_type=Path), metavar="OUT_DIR",
              help="Write a static copy of RUN_IDS (or of --batch and its runs) to OUT_DIR, to share: it opens "
              "from disk, no server, no token.")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on. Another than this machine's loopback lets others on your network "
              "reach the viewer over plain HTTP: the token travels unencrypted (prefer `ssh -L`).")
@RUNS_DIR_OPTION
@harness_command
def view(run_ids: tuple[str, ...], port: int, open_browser: bool, batches: tuple[Path, ...], bundle: Path | None,
         host: str, runs_dir: Path | None) -> None:
    """Serve a web viewer of your runs on 127.0.0.1 and print its URL (with a random token, as Jupyter does);
    Ctrl-C stops it. The runs list updates live; a run's page follows it until it ends, shows its tools, diffs
    and cost, and answers a background run's approvals or cancels it; a batch's page has its report and charts.

    With --bundle OUT_DIR, write a static copy of RUN_IDS (or of a --batch and its runs) instead.
    """
    try:
        import harness_view
    except ModuleNotFoundError as exc:
        if exc.name != "harness_view":
            raise  # the viewer is there but broken: its own error says more
        fail(INSTALL_HINT, EXIT_USAGE)
    from harness_core.store import check_runs_dir, resolve_runs_dir

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
    import html
    import os
    import tempfile
    import webbrowser

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
