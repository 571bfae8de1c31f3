"""`--scenario NAME|JSON|FILE.json` of `run`, `chat` and `batch` (the offline scenario): checked when given; `help`
lists the scenarios (`flags.scenarios` does the work).

Layer: CLI start-up (click only); knows no scenario itself.
"""

from __future__ import annotations

import click

__all__ = ["DEFAULT_SCENARIO", "scenario_callback"]

DEFAULT_SCENARIO = "tools"  # = harness_core.offline.DEFAULT_SCENARIO (importing it here would slow start-up)


def scenario_callback(ctx: click.Context, param: click.Parameter, value: str) -> str:
    """`--scenario`: `help` prints the list and exits 0; a name no scenario has is a usage error that suggests
    the closest names and `harness scenarios`."""
    if value != "help" and ctx.get_parameter_source(param.name or "") is click.core.ParameterSource.DEFAULT:
        return value  # the default needs no check (nor the scenarios loaded)
    from harness_core.cli.flags import scenarios

    return scenarios.checked_scenario(ctx, param, value)
