"""The click definitions of `providers`, `doctor`, `schema`, `scenarios` and `demo`: arguments, options and
help; each body is in `providers.info`, `flags.scenarios` or `providers.demo`.

Layer: CLI start-up (click and the standard library at the top; each command imports its body when it runs).
"""

from __future__ import annotations

from pathlib import Path

import click

from harness_core.cli.complete import complete_provider
from harness_core.cli.exits import harness_command
from harness_core.cli.flags.output_flags import JSON_OPTION
from harness_core.cli.flags.runs_dir import CHECK_RUNS_DIR_OPTION, RUNS_DIR_OPTION
from harness_core.cli.flags.scenario_flag import DEFAULT_SCENARIO as _DEFAULT_SCENARIO

__all__ = ["demo", "doctor", "providers", "scenarios", "schema"]


@click.command()
@click.argument("name", required=False, shell_complete=complete_provider)
@JSON_OPTION
@harness_command
def providers(name: str | None, as_json: bool) -> None:
    """List installed providers: version, capabilities, whether their CLI is available (and why not). With NAME
    (a provider or an alias of one): that provider in full, with every option `-o KEY=VALUE` takes (its
    type, default and what it does).

    The default is the provider `harness run` uses without --provider: $HARNESS_PROVIDER, else `provider` in the
    configuration files (`harness config`), else the built-in one.

    Exit status: 0; 2 for a NAME that is not installed (the closest names are suggested).
    """
    from harness_core.cli.providers.info import providers as implementation

    implementation(name=name, as_json=as_json)


@click.command()
@CHECK_RUNS_DIR_OPTION
@JSON_OPTION
@harness_command
def doctor(runs_dir: Path | None, as_json: bool) -> None:
    """Check the configuration files, each provider's CLI (path, version, minimum) and credentials, broken
    plugins, the runs dir.

    Credentials are checked without a model call, by providers that can (each asks its CLI's
    login status); others say "not checked". Exit 1 on any problem (a provider that is not logged in is one, a
    mistake in a configuration file another).
    """
    from harness_core.cli.providers.info import doctor as implementation

    implementation(runs_dir=runs_dir, as_json=as_json)


@click.command()
@click.argument("what", type=click.Choice(["spec", "events", "result"]), default="events")
@harness_command
def schema(what: str) -> None:
    """Print the JSON Schema of a run spec, of one run-log line (events, the default) or of a result."""
    from harness_core.cli.providers.info import schema as implementation

    implementation(what=what)


@click.command()
@JSON_OPTION
@harness_command
def scenarios(as_json: bool) -> None:
    """List the offline scenarios (`harness run --offline --scenario NAME`): what the scripted model does, which
    tools it calls and when they ask for an approval."""
    from harness_core.cli.flags.scenarios import scenarios as implementation

    implementation(as_json=as_json)


@click.command()
@click.option("--provider", "-p", "providers", multiple=True, metavar="NAME",
              help="Only these providers (repeatable; default: every installed provider that can run offline).")
@click.option("--scenario", default=_DEFAULT_SCENARIO, show_default=True, metavar="NAME",
              help="What the scripted model does.")
@click.option("--keep-workspace", is_flag=True,
              help="Keep each provider's temporary workspace (removed after its run otherwise).")
@RUNS_DIR_OPTION
@JSON_OPTION
@harness_command
def demo(providers: tuple[str, ...], scenario: str, keep_workspace: bool, runs_dir: Path | None,
         as_json: bool) -> None:
    """Play a short task through every installed provider's real CLI, offline, and compare them side by side.

    Each provider runs against the embedded scripted model backend on 127.0.0.1 (no credentials, no network)
    in its own temporary workspace, removed after its run unless --keep-workspace; the runs are logged as usual
    (`harness show RUN_ID`).
    """
    from harness_core.cli.providers.demo import demo as implementation

    implementation(providers=providers, scenario=scenario, keep_workspace=keep_workspace, runs_dir=runs_dir,
                   as_json=as_json)
