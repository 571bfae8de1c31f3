"""The configuration checked against what is installed: a `provider` none is, `[providers.NAME]` options the
provider's `Options` model refuses (errors naming file and line), a table for a provider not installed (a warning).

Layer: CLI, loaded when a command runs; knows the plugin host and the provider interface; no click, no concrete
provider.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from harness_core.cli.settings.loader import Config, Value
from harness_core.cli.settings.toml_lines import toml_value
from harness_core.plugins import PluginHost

__all__ = ["ConfigProblems", "check_config"]


@dataclass(frozen=True)
class ConfigProblems:
    """What is wrong (`errors`: stops a run) and what is only odd (`warnings`), one line each, file:line first."""

    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def check_config(config: Config, host: PluginHost, provider: str | None = None, *,
                 check_provider: bool = True) -> ConfigProblems:
    """`config`'s provider name (when `check_provider` and a file set it) and its `[providers.NAME]` tables
    against the providers `host` has: a table naming no installed provider is a warning; the options of those
    naming `provider` (every installed one when None) must check."""
    problems = ConfigProblems()
    chosen = config.values.get("provider")
    if check_provider and chosen is not None and chosen.in_file and host.resolve(chosen.value) not in host.providers:
        problems.errors.append(f"{chosen.place}: provider = {toml_value(chosen.value)}: "
                               f"{_unknown(host, str(chosen.value))}")
    for name, table in config.providers.items():
        target = host.resolve(name)
        if target not in host.providers:
            first = next(iter(table.values()), None)
            if first is not None:
                problems.warnings.append(f"{first.place}: [providers.{name}] is not used: "
                                         f"{_unknown(host, name)}")
            continue
        if provider is not None and target != host.resolve(provider):
            continue
        if (error := _options_error(host, target, name, table)) is not None:
            problems.errors.append(error)
    return problems


def _unknown(host: PluginHost, name: str) -> str:
    """`no provider named NAME is installed`, the closest name (aliases too), and what is installed."""
    known = [*host.names(), *(a for a, target in host.aliases.items() if target is not None)]
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    broken = next((b for b in host.broken if b.plugin == name), None)
    if broken is not None:
        return f"provider {name!r} failed to load ({broken.error}); `harness doctor` shows details"
    hint = f"did you mean {close[0]!r}? " if close else ""
    return (f"no provider named {name!r} is installed; {hint}installed: {', '.join(host.names()) or 'none'} "
            "(`harness providers` lists them with their aliases)")


def _options_error(host: PluginHost, target: str, name: str, table: Mapping[tuple[str, ...], Value]) -> str | None:
    """The first option of `table` (a `[providers.NAME]` table, NAME naming `target`) that `target`'s options
    model refuses, as `FILE:LINE: ...`; None when they check (an option only `-o` may complete is not missing)."""
    options: dict[str, Any] = {}
    for leaf, found in table.items():
        if leaf != ("model",):
            here = options
            for part in leaf[:-1]:
                here = here.setdefault(part, {})
            here[leaf[-1]] = found.value
    model = host.providers[target].cls.Options
    try:
        model.model_validate(options)
    except ValidationError as exc:
        for err in exc.errors():
            if err["type"] == "missing":
                continue
            loc = tuple(str(p) for p in err["loc"])
            place = next((v.place for leaf, v in table.items() if leaf[:len(loc)] == loc or loc[:len(leaf)] == leaf),
                         next(iter(table.values())).place)
            key = f"providers.{name}.{'.'.join(loc)}"
            if err["type"] == "extra_forbidden":
                valid = sorted(model.model_fields)
                top = len(loc) == 1  # a key of the table itself: `model` is one too
                close = difflib.get_close_matches(loc[-1], ["model", *valid] if top else valid, n=1)
                hint = f"did you mean {close[0]!r}? " if close else ""
                takes = (f"[providers.{name}] takes `model` and {target}'s options: " if top else "its options: ")
                return (f"{place}: {key}: {target} has no option {loc[-1]!r}; {hint}{takes}"
                        f"{', '.join(valid) or 'none'} (`harness providers {target}` says what each does)")
            message = str(err["msg"]).removeprefix("Value error, ")
            return f"{place}: {key} = {toml_value(err.get('input'))}: {message}"
    return None
