"""`harness config`'s click definitions (`config`, `config path`, ...): options and help; the body is
`config.effective`.

Layer: CLI start-up (click and the standard library at the top; each command imports its body when it runs).
"""

from __future__ import annotations

from pathlib import Path

import click

from harness_core.cli.flags.output_flags import JSON_OPTION

__all__ = ["config"]


@click.group(invoke_without_command=True, subcommand_metavar="[path]",
             short_help="Show the effective settings and where each came from (files, environment, defaults).")
@click.option("--cwd", "-C", type=click.Path(exists=True, file_okay=False, path_type=Path), default=None,
              help="Find the project file (.harness.toml) from this directory up (default: the current one).")
@JSON_OPTION
@click.pass_context
def config(ctx: click.Context, cwd: Path | None, as_json: bool) -> None:
    """Show the settings `harness run` and `harness chat` use and where each came from: the command line >
    the environment ($HARNESS_PROVIDER, $HARNESS_RUNS_DIR) > the project's .harness.toml (the nearest one from
    --cwd up) > the user's $XDG_CONFIG_HOME/harness/config.toml > the built-in default; then each file's
    [mcp_servers.NAME] as a TOML table, with its file:line (env and header values masked), commented out
    when no run takes it (an untrusted project's, saying how to trust it; one a project's replaces).
    `harness config path` prints where the files are (to edit them)."""
    from harness_core.cli.config.effective import config as implementation

    implementation(ctx=ctx, cwd=cwd, as_json=as_json)


@config.command(short_help="Print where the configuration files are (the user's, and the project's).")
@click.argument("scope", required=False, type=click.Choice(["user", "project"]))
@click.option("--cwd", "-C", type=click.Path(exists=True, file_okay=False, path_type=Path), default=None,
              help="Find the project file from this directory up (default: the current one).")
@click.pass_context
def path(ctx: click.Context, scope: str | None, cwd: Path | None) -> None:
    """Print where the configuration files are: the user file, $XDG_CONFIG_HOME/harness/config.toml (default
    ~/.config/harness/config.toml), whether or not it exists, and the project file that applies to --cwd (the
    nearest .harness.toml from there up), or where the search went.

    With SCOPE, only that file's path, to edit it: `$EDITOR "$(harness config path user)"`; exit 1 when there is
    no project file (the message says where to create one).
    """
    from harness_core.cli.config.effective import path as implementation

    implementation(ctx=ctx, scope=scope, cwd=cwd)
