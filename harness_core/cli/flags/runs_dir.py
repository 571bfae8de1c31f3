"""`--runs-dir`, as the commands that read runs, `harness doctor`, and `harness run` / `harness chat` take it
(the first two filled in from the configuration found from the current directory).

Layer: CLI start-up (click only at the top; the settings loader when the option is parsed); nothing of runs.
"""

from __future__ import annotations

import functools
from pathlib import Path

import click

from harness_core.cli.exits import fail

__all__ = ["CHECK_RUNS_DIR_OPTION", "RUNS_DIR_OPTION", "RUN_RUNS_DIR_OPTION"]


_RUNS_DIR_HELP = ("Where run logs live (default: $HARNESS_RUNS_DIR, else `runs_dir` in .harness.toml or the user's "
                  "config.toml, else $XDG_STATE_HOME/harness/runs).")


def _configured_runs_dir(ctx: click.Context, param: click.Parameter, value: Path | None, *,
                         tolerant: bool = False) -> Path | None:
    """`--runs-dir` as given, else the parent command's (`harness runs --runs-dir D prune`), else the configured
    one (`$HARNESS_RUNS_DIR` > project > user), else None: the run store's default. A configuration that does
    not load stops the command, unless `tolerant` (the command reports it itself) or completing (nothing may
    print then): None."""
    if value is not None or param.name is None:
        return value
    parent = ctx.parent.params if ctx.parent is not None else {}
    if parent.get(param.name) is not None:
        return Path(parent[param.name])
    from harness_core.cli.settings.loader import ConfigError, load_config

    quiet = tolerant or ctx.resilient_parsing
    try:
        configured = load_config(warn=(lambda _: None) if quiet else None)
    except ConfigError as exc:
        if quiet:
            return None
        fail(exc.message, exc.exit_status)
    found = configured.get("runs_dir")
    return found if isinstance(found, Path) else None


RUNS_DIR_OPTION = click.option(
    "--runs-dir", type=click.Path(file_okay=False, path_type=Path), default=None, callback=_configured_runs_dir,
    help=_RUNS_DIR_HELP,
)
"""`--runs-dir` of the commands that read runs (`runs`, `show`, `attach`, `cancel`, `approve`, `doctor`): the
configuration found from the current directory fills it in."""


CHECK_RUNS_DIR_OPTION = click.option(
    "--runs-dir", type=click.Path(file_okay=False, path_type=Path), default=None, help=_RUNS_DIR_HELP,
    callback=functools.partial(_configured_runs_dir, tolerant=True),
)
"""`--runs-dir` of `harness doctor`, which reports a configuration that does not load as one of its problems."""


RUN_RUNS_DIR_OPTION = click.option(
    "--runs-dir", type=click.Path(file_okay=False, path_type=Path), default=None, help=_RUNS_DIR_HELP,
)
"""`--runs-dir` of `harness run` and `harness chat`, which apply the configuration found from their `--cwd`."""
