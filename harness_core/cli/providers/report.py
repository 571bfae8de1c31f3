"""The reports behind `harness providers` and `harness doctor`: typed models, gathered (every provider probed
concurrently, each under a deadline), with their `--json` form and their text.

Layer: CLI, loaded when one of those commands runs; knows the plugin host, the provider interface and the runs
dir; no concrete provider (it names only the default one).
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

from harness_core import HarnessError
from harness_core.cli.render.layout import Column, fit_table, fit_text
from harness_core.plugins import DEFAULT_PROVIDER, ENV_PROVIDER, BrokenPlugin, PluginHost, RegisteredProvider
from harness_core.provider import CliInfo, Provider

__all__ = [
    "AUTH_DEADLINE",
    "INSTALL_HINT",
    "PROBE_DEADLINE",
    "CredentialsOutcome",
    "DoctorReport",
    "ProbeOutcome",
    "ProviderReport",
    "ProvidersReport",
    "RunsDirReport",
    "doctor_report",
    "format_doctor",
    "format_providers",
    "probe_outcome",
    "provider_entry",
    "provider_report",
]

PROBE_DEADLINE = 10.0
"""Seconds each provider's probe may take before it is reported as unavailable."""
AUTH_DEADLINE = 15.0
"""Seconds each provider's credentials check (`Provider.check_auth`) may take in `harness doctor`."""
INSTALL_HINT = f"pip install harness-{DEFAULT_PROVIDER}"
"""How to install the default provider's distribution (named `harness-<provider>`)."""


@dataclass(frozen=True)
class ProbeOutcome:
    """Whether a provider can run here: its CLI's path and version, or why not (and the error's code)."""

    available: bool
    reason: str | None = None
    cli_path: str | None = None
    cli_version: str | None = None
    error_code: str | None = None


@dataclass(frozen=True)
class CredentialsOutcome:
    """What `harness doctor` found out about a provider's credentials (`Provider.check_auth`), without a model
    call. `checked` is False when the provider has no check, or its CLI is not available (`detail` says which)."""

    checked: bool
    logged_in: bool | None = None
    detail: str = ""
    next_step: str | None = None

    @property
    def problem(self) -> str | None:
        """What is wrong, with the next step, or None."""
        if not self.checked or self.logged_in:
            return None
        return f"{self.detail}; {self.next_step}" if self.next_step else self.detail

    def as_json(self) -> dict[str, Any]:
        return {"checked": self.checked, "logged_in": self.logged_in, "detail": self.detail,
                "next_step": self.next_step}


@dataclass(frozen=True)
class ProviderReport:
    """One installed provider: where it comes from, what it can do, whether its CLI is available."""

    name: str
    distribution: str | None
    version: str
    default: bool
    capabilities: tuple[str, ...]
    description: str
    probe: ProbeOutcome
    cli_name: str | None
    min_cli_version: str | None
    aliases: tuple[str, ...] = ()

    def as_json(self) -> dict[str, Any]:
        """The provider's `--json` object; `error_code` only when the probe failed with a `HarnessError`."""
        found: dict[str, Any] = {
            "name": self.name, "aliases": list(self.aliases), "distribution": self.distribution,
            "version": self.version,
            "default": self.default, "capabilities": list(self.capabilities), "description": self.description,
            "available": self.probe.available, "reason": self.probe.reason, "cli_path": self.probe.cli_path,
            "cli_version": self.probe.cli_version,
        }
        if self.probe.error_code is not None:
            found["error_code"] = self.probe.error_code
        found.update(cli_name=self.cli_name, min_cli_version=self.min_cli_version)
        return found


@dataclass(frozen=True)
class ProvidersReport:
    """`harness providers`: every registered provider (sorted by name) and every plugin that failed to load."""

    default: str
    providers: tuple[ProviderReport, ...]
    broken_plugins: tuple[BrokenPlugin, ...]
    default_source: str = "default"
    """Where the default came from: ``default`` (built in), ``$HARNESS_PROVIDER``, ``user FILE:LINE``, ...; the
    text names it when it is a configuration file."""

    def as_json(self) -> dict[str, Any]:
        return {
            "default": self.default,
            "providers": [p.as_json() for p in self.providers],
            "broken_plugins": [dataclasses.asdict(b) for b in self.broken_plugins],
        }


@dataclass(frozen=True)
class RunsDirReport:
    """The runs dir: whether it exists, and whether a run could write its log there (and why not)."""

    path: Path
    exists: bool
    writable: bool
    reason: str | None

    def as_json(self) -> dict[str, Any]:
        return {"path": str(self.path), "exists": self.exists, "writable": self.writable, "reason": self.reason}


@dataclass(frozen=True)
class DoctorReport:
    """`harness doctor`: the providers report, each provider's credentials, and the runs dir; `ok` only when
    nothing is wrong (a provider that is not logged in is a problem)."""

    providers: ProvidersReport
    runs_dir: RunsDirReport
    credentials: dict[str, CredentialsOutcome] = dataclasses.field(default_factory=dict)
    config_problems: tuple[str, ...] = ()
    """The configuration files' errors (each `FILE:LINE: ...`): problems, as `harness run` would stop on them."""
    config_warnings: tuple[str, ...] = ()
    """What is odd in them (an ignored project file, a table for a provider not installed): in the text only."""

    def credentials_of(self, name: str) -> CredentialsOutcome:
        return self.credentials.get(name) or CredentialsOutcome(False, detail="not checked")

    @property
    def problems(self) -> list[str]:
        """One line per problem, each naming what is wrong."""
        found = [f"config: {problem}" for problem in self.config_problems]
        for p in self.providers.providers:
            if not p.probe.available and p.probe.error_code == "invalid_spec":
                continue  # it needs options to run at all (the agent to drive): nothing is wrong with this machine
            if not p.probe.available:
                found.append(f"provider {p.name}: {p.probe.reason}")
            elif (problem := self.credentials_of(p.name).problem) is not None:
                found.append(f"provider {p.name}: {problem}")
        found += [f"plugin {b.plugin} is broken: {b.error}" for b in self.providers.broken_plugins]
        if not self.providers.providers:
            found.append(f"no providers installed; install one, e.g. `{INSTALL_HINT}`")
        if not self.runs_dir.writable:
            found.append(f"runs dir: {self.runs_dir.reason}")
        return found

    @property
    def ok(self) -> bool:
        return not self.problems

    def as_json(self) -> dict[str, Any]:
        credentials = {p.name: self.credentials_of(p.name).as_json() for p in self.providers.providers}
        return {**self.providers.as_json(), "credentials": credentials, "runs_dir": self.runs_dir.as_json(),
                "problems": self.problems, "ok": self.ok}


# --- gathering ---------------------------------------------------------------------------------------------

async def probe_outcome(registered: RegisteredProvider, deadline: float = PROBE_DEADLINE) -> ProbeOutcome:
    """Whether `registered` can run here (its probe, under `deadline`); never raises."""
    try:
        instance = registered.cls()
        with anyio.fail_after(deadline):
            cli = await instance.probe(instance.parse_options({}))
    except TimeoutError:
        return ProbeOutcome(False, reason=f"the availability probe took longer than {deadline:g} s")
    except HarnessError as exc:  # a CLI found but too old says where it is and which version it has
        path, found = exc.details.get("path"), exc.details.get("found")
        return ProbeOutcome(False, reason=exc.message, error_code=exc.code,
                            cli_path=path if isinstance(path, str) else None,
                            cli_version=found if isinstance(found, str) else None)
    except Exception as exc:  # noqa: BLE001 - a buggy probe is reported, never fatal to the listing
        return ProbeOutcome(False, reason=f"the provider's probe crashed: {type(exc).__name__}: {exc}")
    return ProbeOutcome(True, cli_path=cli.path, cli_version=cli.version)


async def provider_report(host: PluginHost, deadline: float = PROBE_DEADLINE, *, default: str | None = None,
                          default_source: str | None = None) -> ProvidersReport:
    """Every registered provider (probed concurrently, each under `deadline`) and every broken plugin; `default`
    (from `default_source`) is the provider a run without --provider uses (None: the host's default)."""
    if default is None:
        default_source = f"${ENV_PROVIDER}" if os.environ.get(ENV_PROVIDER) else "default"
    default = host.resolve(default or host.default_name())
    probes: dict[str, ProbeOutcome] = {}

    async def probe_one(registered: RegisteredProvider) -> None:
        probes[registered.name] = await probe_outcome(registered, deadline)

    async with anyio.create_task_group() as tg:
        for registered in host.providers.values():
            tg.start_soon(probe_one, registered)
    providers = tuple(provider_entry(host, host.providers[name], probes[name], default) for name in host.names())
    return ProvidersReport(default=default, providers=providers, broken_plugins=tuple(host.broken),
                           default_source=default_source or "default")


def provider_entry(host: PluginHost, registered: RegisteredProvider, probe: ProbeOutcome,
                   default: str | None = None) -> ProviderReport:
    """The report of one registered provider, given what its probe found (`default`: the default provider's
    name, None for the host's)."""
    info = registered.cls.info
    return ProviderReport(
        name=registered.name,
        distribution=registered.distribution,
        version=registered.distribution_version or info.version,
        default=registered.name == host.resolve(default or host.default_name()),
        capabilities=tuple(sorted(cap.value for cap in info.capabilities)),
        description=info.description,
        probe=probe,
        cli_name=info.cli_name,
        min_cli_version=info.min_cli_version,
        aliases=tuple(host.aliases_of(registered.name)),
    )


def _writable(directory: Path) -> tuple[bool, str | None]:
    probe = directory
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    if not probe.is_dir():
        return False, f"{probe} is not a directory"
    if not os.access(probe, os.W_OK | os.X_OK):
        return False, f"{probe} is not writable; pass --runs-dir DIR or set HARNESS_RUNS_DIR"
    return True, None


async def _credentials(registered: RegisteredProvider, probe: ProbeOutcome, deadline: float) -> CredentialsOutcome:
    if getattr(registered.cls, "check_auth", Provider.check_auth) is Provider.check_auth:
        return CredentialsOutcome(False, detail="not checked (the provider has no credentials check)")
    if not probe.available:
        return CredentialsOutcome(False, detail="not checked (its CLI is not available)")
    try:
        instance = registered.cls()
        with anyio.fail_after(deadline):
            status = await instance.check_auth(instance.parse_options({}),
                                               CliInfo(path=probe.cli_path, version=probe.cli_version))
    except TimeoutError:
        return CredentialsOutcome(False, detail=f"not checked (the check took longer than {deadline:g} s)")
    except HarnessError as exc:
        return CredentialsOutcome(False, detail=f"not checked ({exc.message})")
    except Exception as exc:  # noqa: BLE001 - a buggy check is reported, never fatal to the report
        return CredentialsOutcome(False, detail=f"not checked (the check crashed: {type(exc).__name__}: {exc})")
    if status is None:
        return CredentialsOutcome(False, detail="not checked (the provider cannot tell)")
    return CredentialsOutcome(True, logged_in=status.logged_in, detail=status.detail, next_step=status.next_step)


async def doctor_report(host: PluginHost, runs_dir: Path, auth_deadline: float = AUTH_DEADLINE, *,
                        default: str | None = None, default_source: str | None = None) -> DoctorReport:
    """`provider_report` (`default` as there), each available provider's credentials (checked concurrently,
    each under `auth_deadline`), and the state of `runs_dir`."""
    providers = await provider_report(host, default=default, default_source=default_source)
    credentials: dict[str, CredentialsOutcome] = {}

    async def check_one(report: ProviderReport) -> None:
        credentials[report.name] = await _credentials(host.providers[report.name], report.probe, auth_deadline)

    async with anyio.create_task_group() as tg:
        for report in providers.providers:
            tg.start_soon(check_one, report)
    writable, why = _writable(runs_dir)
    exists = runs_dir.is_dir()  # noqa: ASYNC240 - one stat, no event loop to starve in a CLI command
    return DoctorReport(providers, RunsDirReport(path=runs_dir, exists=exists, writable=writable, reason=why),
                        credentials)


# --- text ---------------------------------------------------------------------------------------------------

def format_providers(report: ProvidersReport, width: int | None = None) -> str:
    """The text of `harness providers`: a row per provider, fitted to `width` (the terminal's; None: whole rows):
    capabilities and availability wrapped in their columns, or one block per provider when that is too narrow."""
    lines: list[str] = []
    if report.providers:
        rows = []
        for p in report.providers:
            marks = [m for m in ("default" if p.default else "", "also: " + ", ".join(p.aliases) if p.aliases else "")
                     if m]
            name = p.name + (f" ({'; '.join(marks)})" if marks else "")
            if p.probe.available:
                cli = " ".join(x for x in (p.cli_name, p.probe.cli_version) if x)
                available = f"yes ({cli})" if cli else "yes"
            else:
                available = f"no: {p.probe.reason}"
            rows.append([name, p.version, ", ".join(p.capabilities) or "-", available])
        names = max(len(p.name) for p in report.providers)  # a provider's name is never broken
        columns = (Column("PROVIDER", "wrap", least=names, title=True), Column("VERSION"),
                   Column("CAPABILITIES", "wrap", least=24), Column("AVAILABLE", "wrap", least=30))
        lines += fit_table(columns, rows, width)
    else:
        lines.append(f"no providers installed (e.g. `{INSTALL_HINT}`)")
    notes = []
    if report.default_source.startswith(("user ", "project ")):
        installed = any(p.default for p in report.providers)
        notes.append(f"default provider: {report.default} (from {report.default_source})"
                     + ("" if installed else "; it is not installed"))
    lines += [line for note in notes for line in fit_text(note, width)]
    if report.broken_plugins:
        lines += ["", "broken plugins (not loaded):"]
        lines += [line for b in report.broken_plugins for line in
                  fit_text(f"  {b.plugin} ({b.distribution or 'no distribution'}): {b.error}", width, "    ")]
    return "\n".join(lines)


def _cli_found(p: ProviderReport) -> str:
    if p.probe.cli_path:
        return p.probe.cli_path + ("" if p.probe.available else " (found)")
    if p.probe.error_code == "cli_not_found":
        return f"{p.cli_name} not found"
    return f"{p.cli_name} (not located: see below)"


def format_doctor(report: DoctorReport) -> str:
    lines = [f"!! config: {problem}" for problem in report.config_problems]
    lines += [f"   config: warning: {warning}" for warning in report.config_warnings]
    for p in report.providers.providers:
        mark = "ok " if p.probe.available and report.credentials_of(p.name).problem is None else "!! "
        if p.probe.error_code == "invalid_spec":
            mark = "-- "  # needs options to run (e.g. the agent's command): not a problem
        lines.append(f"{mark}{p.name} {p.version}" + (" (default)" if p.default else ""))
        if p.cli_name:
            lines.append(f"     cli: {_cli_found(p)}")
            too_old = " — too old" if p.probe.error_code == "cli_version_unsupported" else ""
            lines.append(f"     version: {p.probe.cli_version or '?'}{too_old} "
                         f"(minimum {p.min_cli_version or 'none'})")
        lines.append(f"     supported: {'yes' if p.probe.available else 'no: ' + str(p.probe.reason)}")
        credentials = report.credentials_of(p.name)
        if not credentials.checked:
            lines.append(f"     credentials: {credentials.detail}")
        elif credentials.logged_in:
            lines.append(f"     credentials: ok ({credentials.detail})")
        else:
            lines.append(f"     credentials: {credentials.problem}")
    for b in report.providers.broken_plugins:
        lines.append(f"!! plugin {b.plugin} ({b.distribution or 'no distribution'}): {b.error}")
    runs = report.runs_dir
    lines.append(f"{'ok ' if runs.writable else '!! '}runs dir: {runs.path}"
                 + ("" if runs.writable else f" ({runs.reason})"))
    problems = report.problems
    lines.append(f"{len(problems)} problem(s) found" if problems else "everything looks fine")
    return "\n".join(lines)
