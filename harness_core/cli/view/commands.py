"""`harness view`'s click definition; the body (`view.serving`) needs the viewer, its own distribution
(`harness-view`, `web/` in a checkout): without it the command says how to install it.

Layer: CLI start-up (click and the standard library at the top, one import when the command runs).
"""

from __future__ import annotations

from pathlib import Path

import click

from harness_core.cli.complete import complete_run_id
from harness_core.cli.exits import EXIT_USAGE, fail, harness_command
from harness_core.cli.flags.numbers import Number
from harness_core.cli.flags.runs_dir import RUNS_DIR_OPTION

__all__ = ["INSTALL_HINT", "view"]

INSTALL_HINT = ("`harness view` needs the harness-view package, which is not installed: from a checkout of Harness "
                "run `bash scripts/setup.sh` (or `.venv/bin/pip install -e web`)")


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
        from harness_core.cli.view.serving import view as implementation
    except ModuleNotFoundError as exc:
        if exc.name != "harness_view":
            raise  # the viewer is there but broken: its own error says more
        fail(INSTALL_HINT, EXIT_USAGE)

    implementation(run_ids=run_ids, port=port, open_browser=open_browser, batches=batches, bundle=bundle, host=host,
                   runs_dir=runs_dir)
