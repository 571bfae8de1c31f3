"""The configuration files (the user's config.toml, a project's .harness.toml found upward), read, checked and
layered: command line > environment > project > user > default; what an untrusted project file may not set is
`Config.refused` (docs/sessions.md).
Layer: CLI, pure (pydantic, `tomllib`), no click; knows the spec's field names and the CLI's environment
variables, nothing of any provider or of the plugin host (`settings.checks` checks those).
"""

from __future__ import annotations

import difflib
import math
import os
import re
import stat
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from harness_core.cli.settings.toml_lines import key_lines, line_of, toml_value
from harness_core.errors import EXIT_USAGE, HarnessError
from harness_core.files.inputs import InputFileError, read_input
from harness_core.mcp import McpServer

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib  # type: ignore[import-not-found, unused-ignore]  # not installed on 3.11+

__all__ = ["PROJECT_FILE", "Config", "ConfigError", "ConfiguredServer", "Looked", "Value", "load_config",
           "user_config_path"]

PROJECT_FILE = ".harness.toml"
ENV_PROVIDER = "HARNESS_PROVIDER"  # = harness_core.plugins.ENV_PROVIDER
ENV_RUNS_DIR = "HARNESS_RUNS_DIR"  # = harness_core.store.ENV_RUNS_DIR
ENV_OTEL = "HARNESS_OTEL"  # = harness_core.cli.flags.otel_flag.ENV_OTEL
_TRUE = frozenset({"1", "true", "yes", "on"})
Scope = Literal["user", "project"]


class ConfigError(HarnessError):
    """A configuration file that does not read or check: the message names the file and line."""

    code = "invalid_config"
    exit_status = EXIT_USAGE
    names_fields = True  # the file's keys are the spec's fields


# The file models are built when a file is read (defer_build), not by every command of a machine that has none.
class ProviderTable(BaseModel):
    """A `[providers.NAME]` table: the provider's `model`, and its options (any other key, checked against the
    provider's options model by `settings.checks`)."""

    model_config = ConfigDict(extra="allow", strict=True, defer_build=True)

    model: str | None = Field(default=None, min_length=1)

    def as_dict(self) -> dict[str, Any]:
        return self.model_dump(exclude_unset=True)


class McpServerTable(BaseModel):
    """An `[mcp_servers.NAME]` table: an `McpServer` without its name (checked as one when the file is read)."""

    model_config = ConfigDict(extra="forbid", strict=True, defer_build=True)

    transport: Literal["stdio", "http", "sse"] | None = None
    command: str | None = Field(default=None, min_length=1)
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = Field(default=None, min_length=1)
    url: str | None = Field(default=None, min_length=1)
    headers: dict[str, str] = Field(default_factory=dict)


class ConfigFile(BaseModel):
    """What a configuration file may hold (every key optional, unknown keys refused)."""

    model_config = ConfigDict(extra="forbid", strict=True, defer_build=True)

    provider: str | None = Field(default=None, min_length=1)
    model: str | None = Field(default=None, min_length=1)
    sandbox: Literal["read-only", "workspace-write", "danger-full-access"] | None = None
    approval: Literal["never", "on-request", "untrusted"] | None = None
    idle_timeout: float | None = Field(default=None, gt=0)
    """Seconds; `"inf"` (math.inf here) says no idle timeout."""
    runs_dir: str | None = Field(default=None, min_length=1)
    effort: str | None = Field(default=None, min_length=1)
    max_turns: int | None = Field(default=None, ge=1)
    max_cost_usd: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    max_output_tokens: int | None = Field(default=None, ge=1)
    otel: bool | None = None
    """Trace runs with the OpenTelemetry observer (harness-otel), as `--otel` does."""
    trusted_projects: list[str] | None = None
    providers: dict[str, ProviderTable] = Field(default_factory=dict)
    mcp_servers: dict[str, McpServerTable] = Field(default_factory=dict)

    @field_validator("idle_timeout", mode="before")
    @classmethod
    def _infinity(cls, value: Any) -> Any:
        if isinstance(value, str) and value.strip().lower() in ("inf", "infinity"):
            return math.inf
        if isinstance(value, str):
            raise ValueError(f"{value!r} is not a number of seconds: give e.g. 300, or \"inf\" for no idle timeout")
        return value


KEYS: tuple[str, ...] = tuple(k for k in ConfigFile.model_fields
                              if k not in ("providers", "trusted_projects", "mcp_servers"))
"""The top-level settings, in the order `harness config` shows them."""
SPEC_KEYS = ("model", "sandbox", "approval", "idle_timeout", "effort", "max_turns", "max_cost_usd",
             "max_output_tokens")
"""The settings that are `AgentRunSpec` fields of the same name."""


@dataclass(frozen=True)
class Looked:
    """A configuration file looked for: its scope, where, and whether it was there."""

    scope: Scope
    path: Path  # the file; for a project file not found, the directory the search started from
    found: bool
    ignored: str | None = None  # why a project file found is not used (it is not the user's own), or None


@dataclass(frozen=True)
class Value:
    """A setting's value and where it came from: ``default``, ``$HARNESS_PROVIDER``, ``project /p/.harness.toml:3``."""

    value: Any
    source: str

    @property
    def place(self) -> str:
        """The source without its scope: ``/p/.harness.toml:3``, ``$HARNESS_PROVIDER``, ``default``."""
        scope, _, rest = self.source.partition(" ")
        return rest if scope in ("user", "project") and rest else self.source

    @property
    def in_file(self) -> bool:
        return self.source.startswith(("user ", "project "))


@dataclass(frozen=True)
class ConfiguredServer:
    """One `[mcp_servers.NAME]` table as a file has it, applied or not (`harness config` lists each)."""

    name: str
    found: Value
    """Its `McpServer` fields (`cwd` resolved against its file) and where it is (``user /u/config.toml:4``)."""
    refused: str | None = None
    """Why it is not applied, as `Config.refused` says it (an untrusted project file's), or None."""


@dataclass(frozen=True)
class Config:
    """The settings found in the environment and the configuration files (not the command line, not the built-in
    defaults: a key set nowhere is absent)."""

    files: tuple[Looked, ...]
    values: Mapping[str, Value] = field(default_factory=dict)
    providers: Mapping[str, Mapping[tuple[str, ...], Value]] = field(default_factory=dict)
    """Per provider name: each option's key path (``("config", "effort")``; ``("model",)`` is the provider's
    model, not an option) and value."""
    refused: Mapping[tuple[str, ...], str] = field(default_factory=dict)  # see `_check_project`
    trusted: tuple[Path, ...] = ()
    """The user file's `trusted_projects`, resolved (`~` expanded, relative to the file)."""
    mcp_servers: Mapping[str, Value] = field(default_factory=dict)
    """Per server name, its `McpServer` fields (`cwd` resolved against its file); a project's over the user's."""
    server_tables: tuple[ConfiguredServer, ...] = ()
    """Every `[mcp_servers.NAME]` of the files read, in their order (the user's first), the refused ones too: a
    table not in `mcp_servers` is refused, or replaced by the project's table of that name."""
    DEFAULTS: ClassVar[Mapping[str, str]] = {
        "sandbox": "workspace-write", "approval": "never", "idle_timeout": "inf",
    }

    def named(self, resolve: Callable[[str], str]) -> Config:
        """This configuration with each `[providers.NAME]` table under the provider name NAME stands for (an alias
        resolved by `resolve`); tables naming one provider are merged, its own name's table winning."""
        providers: dict[str, dict[tuple[str, ...], Value]] = {}
        for name, table in sorted(self.providers.items(), key=lambda item: resolve(item[0]) == item[0]):
            providers.setdefault(resolve(name), {}).update(table)
        return replace(self, providers=providers)

    def trusts(self, directory: Path) -> bool:
        """Whether `directory` is a trusted project: it is, or is inside, one of `trusted` (symlinks resolved)."""
        here = directory.expanduser().resolve()
        return any(here == t or t in here.parents for t in self.trusted)

    def get(self, key: str) -> Any:
        """The value of top-level setting `key` (`runs_dir` a `Path`), or None when nothing sets it."""
        found = self.values.get(key)
        return None if found is None else found.value

    def model_for(self, provider: str) -> Value | None:
        """The model for runs of `provider`: its table's `model`, else the top-level `model`, else None."""
        return self.providers.get(provider, {}).get(("model",)) or self.values.get("model")

    def spec_fields(self, provider: str, given: set[str]) -> dict[str, Any]:
        """The spec fields the configuration sets for a run of `provider` and the command line did not (`given`:
        the fields it did); `idle_timeout = "inf"` is None (no idle timeout)."""
        fields: dict[str, Any] = {}
        for key in SPEC_KEYS:
            found = self.model_for(provider) if key == "model" else self.values.get(key)
            if key not in given and found is not None:
                fields[key] = None if found.value == math.inf else found.value
        return fields

    def provider_options(self, provider: str, given: Mapping[str, Any]) -> dict[str, Any]:
        """`provider`'s options from its `[providers.NAME]` tables with `given` (the `-o` options, nested as
        `parse_option_pairs` makes them) over them key by key."""
        options: dict[str, Any] = {}
        for path, found in self.providers.get(provider, {}).items():
            if path != ("model",):
                _put(options, path, found.value)
        return _merged(options, given)


def user_config_path(env: Mapping[str, str] | None = None) -> Path:
    """`$XDG_CONFIG_HOME/harness/config.toml` (default `~/.config/harness/config.toml`)."""
    environ = os.environ if env is None else env
    base = environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base).expanduser() / "harness" / "config.toml"


def search_stop(start: Path, home: Path | None = None) -> Path:
    """Where the search for a project file from `start` ends: the home directory when `start` is inside it
    (files above it belong to other users or the system), else the filesystem root."""
    here = start.resolve()
    home = (home or Path.home()).resolve()
    return home if here == home or home in here.parents else Path(here.anchor)


def project_config_path(start: Path, home: Path | None = None) -> Path | None:
    """The nearest `.harness.toml` in `start` or a directory above it, up to `search_stop(start, home)`."""
    here = start.resolve()
    stop = search_stop(here, home)
    for directory in (here, *here.parents):
        candidate = directory / PROJECT_FILE
        if candidate.is_file():
            return candidate
        if directory == stop:
            return None
    return None


def load_config(cwd: Path | None = None, env: Mapping[str, str] | None = None,
                warn: Callable[[str], None] | None = None) -> Config:
    """The user file, the project file found upward from `cwd` (default: the current directory) and the
    environment, layered (environment > project > user).

    A project file that is not the user's own (owned by another user, or in a directory every user may write,
    such as /tmp) is ignored, with a warning passed to `warn` (default: one `harness: warning:` line on stderr),
    unless `trusted_projects` lists it.

    Raises:
        ConfigError: a file that is not TOML, holds an unknown key or a wrong value, or (a project file) widens
            what the agent may do without being trusted; the message names the file and line.
    """
    environ = os.environ if env is None else env
    user = user_config_path(environ)
    start = (cwd if cwd is not None else Path.cwd()).resolve()
    project = project_config_path(start)
    looked = [Looked("user", user, user.is_file())]
    refused: dict[tuple[str, ...], str] = {}
    layers: list[tuple[Scope, Path, ConfigFile, dict[tuple[str, ...], int]]] = []
    if user.is_file():
        layers.append(("user", user, *_read(user)))
    trusted = [_resolved(user, p) for p in (layers[0][2].trusted_projects or ())] if layers else []
    if project is None:
        looked.append(Looked("project", start, False))
    elif not (is_trusted := any(project.parent == t or t in project.parent.parents for t in trusted)) and (
            why := _not_own(project)):
        looked.append(Looked("project", project, True, ignored=why))
        (warn or _warning)(f"ignoring {project}: {why}; if you trust it, add its directory to trusted_projects "
                           f"in {user}")
    else:
        looked.append(Looked("project", project, True))
        data, lines = _read(project)
        if not is_trusted:
            refused = _check_project(project, data, lines, user, layers[0][2] if layers else None)
        layers.append(("project", project, data, lines))
    values: dict[str, Value] = {}
    providers: dict[str, dict[tuple[str, ...], Value]] = {}
    servers: dict[str, Value] = {}
    tables: list[ConfiguredServer] = []
    for scope, path, data, lines in layers:
        where = f"{scope} {path}"
        for key in KEYS:
            value = getattr(data, key)
            if value is not None and (scope != "project" or (key,) not in refused):
                if key == "runs_dir":
                    value = _resolved(path, value)
                values[key] = Value(value, f"{where}:{line_of(lines, (key,))}")
        for name, server in data.mcp_servers.items():
            why = refused.get(("mcp_servers", name)) if scope == "project" else None
            found = Value(_server_fields(path, lines, name, server, check=why is None),
                          f"{where}:{line_of(lines, ('mcp_servers', name))}")
            tables.append(ConfiguredServer(name, found, why))
            if why is None:
                servers[name] = found
        for name, table in data.providers.items():
            for leaf, value in _leaves(table.as_dict(), ()):
                if scope == "project" and ("providers", name, *leaf) in refused:
                    continue
                line = line_of(lines, ("providers", name, *leaf))
                providers.setdefault(name, {})[leaf] = Value(value, f"{where}:{line}")
    if environ.get(ENV_PROVIDER):
        values["provider"] = Value(environ[ENV_PROVIDER], f"${ENV_PROVIDER}")
    if environ.get(ENV_RUNS_DIR):
        values["runs_dir"] = Value(Path(environ[ENV_RUNS_DIR]).expanduser(), f"${ENV_RUNS_DIR}")
    if environ.get(ENV_OTEL, "").strip():
        values["otel"] = Value(environ[ENV_OTEL].strip().lower() in _TRUE, f"${ENV_OTEL}")
    return Config(files=tuple(looked), values=values, providers=providers, refused=refused, trusted=tuple(trusted),
                  mcp_servers=servers, server_tables=tuple(tables))


def _server_fields(path: Path, lines: dict[tuple[str, ...], int], name: str, table: McpServerTable, *,
                   check: bool = True) -> dict[str, Any]:
    """An `[mcp_servers.NAME]` table as `McpServer` fields, checked as one when `check` (a refused table is not: it
    is only shown; `cwd` taken from the file's directory).

    Raises:
        ConfigError: it is not a server (both a command and a url, neither, a bad name...), naming the line.
    """

    fields: dict[str, Any] = {"name": name, **table.model_dump(exclude_defaults=True)}
    if table.cwd is not None:
        fields["cwd"] = str(_resolved(path, table.cwd))
    if not check:
        return fields
    try:
        McpServer.model_validate(fields)
    except ValidationError as exc:
        problem = "; ".join(str(e["msg"]).removeprefix("Value error, ") for e in exc.errors())
        raise ConfigError(f"{path}:{line_of(lines, ('mcp_servers', name))}: {problem}", path=str(path)) from None
    return fields


def _warning(message: str) -> None:
    print(f"harness: warning: {message}", file=sys.stderr)


def _not_own(path: Path) -> str | None:
    """Why a project file may not be the user's own (as git's safe.directory asks), or None."""
    try:
        owner, folder = path.stat().st_uid, path.parent.stat().st_mode
    except OSError:
        return None  # reading it says what is wrong
    getuid = getattr(os, "geteuid", None)  # POSIX only (the owner of what this process creates)
    if getuid is not None and owner != getuid():
        return f"it is owned by another user (uid {owner})"
    if folder & stat.S_IWOTH:
        return f"its directory {path.parent} is writable by every user"
    return None


CONFIG_LIMIT = 1 << 20
"""A config file holds at most this many bytes (a few lines are usual; a device never ends)."""

def _read(path: Path) -> tuple[ConfigFile, dict[tuple[str, ...], int]]:
    """A file's checked contents and the line of each key in it."""
    try:
        text = read_input(path, what="the config file", limit=CONFIG_LIMIT).decode("utf-8")
    except InputFileError as exc:
        raise ConfigError(f"{exc.message}; fix or remove the file", path=str(path)) from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"cannot read {path}: it is not UTF-8 text ({exc.reason}); fix or remove the file",
                          path=str(path)) from None
    try:
        raw = tomllib.loads(text)
    except RecursionError:
        raise ConfigError(f"{path}: its tables and arrays nest too deep to read; fix or remove the file",
                          path=str(path)) from None
    except tomllib.TOMLDecodeError as exc:
        where = re.search(r"\(at line (\d+), column (\d+)\)", str(exc))
        problem = re.sub(r"\s*\(at (line \d+, column \d+|end of document)\)", "", str(exc))
        line = f":{where[1]}" if where else ""
        raise ConfigError(f"{path}{line}: not valid TOML: {problem}"
                          f"{f' (column {where[2]})' if where else ''}", path=str(path)) from None
    lines = key_lines(text)
    try:
        return ConfigFile.model_validate(raw), lines
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = tuple(str(p) for p in err["loc"])
        raise ConfigError(f"{path}:{line_of(lines, loc)}: {_problem(err, loc)}", path=str(path)) from None


def _problem(err: Any, loc: tuple[str, ...]) -> str:
    """One pydantic error as what is wrong and what is allowed."""
    key = ".".join(loc) or "the file"
    if err["type"] == "extra_forbidden":
        allowed = [k for k in ConfigFile.model_fields]
        close = difflib.get_close_matches(loc[-1], allowed, n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        return (f"unknown key {key!r}; {hint}allowed keys: {', '.join(allowed)} (provider options go in a "
                f"[providers.NAME] table)")
    if err["type"] in ("model_type", "dict_type"):
        return f"{key} must be a table ([{key}] and keys below it), not {toml_value(err.get('input'))}"
    message = str(err["msg"]).removeprefix("Value error, ")
    return f"{key} = {toml_value(err.get('input'))}: {message}"


_UNTRUSTED = ("model", "effort", "max_turns", "max_output_tokens", "idle_timeout")
"""What an untrusted project file may set freely: how the agent works, not what it may do or where."""
_WIDER = {"sandbox": ("read-only", "workspace-write", "danger-full-access"),
          "approval": ("untrusted", "on-request", "never")}
"""Narrowest first: a sandbox that allows more, an approval policy that asks less."""
_NEEDS_TRUST = {"provider": ("-p NAME", "it chooses which agent CLI runs"),
                "runs_dir": ("--runs-dir DIR", "it chooses where run logs are written"),
                "max_cost_usd": ("--max-cost-usd USD", "it can raise your spending limit")}
_TURNS_ON = {"otel": ("--otel", "it sends every run's trace to the OTLP endpoint",
                      "; or run with HARNESS_OTEL=0 to keep it off")}
"""Switches an untrusted project file may turn off (`false`), not on."""


def _check_project(path: Path, data: ConfigFile, lines: dict[tuple[str, ...], int], user: Path,
                   mine: ConfigFile | None) -> dict[tuple[str, ...], str]:
    """What an untrusted project file may not set (it comes with the project's files), each key path with its
    `FILE:LINE` error (`Config.refused`: not applied; a run taking it from the file fails, `settings.layering`):
    anything but `_UNTRUSTED` and `[providers.NAME].model`, except a sandbox or approval no wider than the user
    file's (else the default's). Raises ConfigError for `trusted_projects` in a project file (a mistake)."""
    trust = (f"to let this project's file set it, add its directory to trusted_projects in {user} "
             f"(trusted_projects = [\"{path.parent}\"])")

    refused: dict[tuple[str, ...], str] = {}

    def refuse(loc: tuple[str, ...], what: str) -> None:
        refused[loc] = f"{path}:{line_of(lines, loc)}: {what}"

    if data.trusted_projects is not None:
        raise ConfigError(f"{path}:{line_of(lines, ('trusted_projects',))}: trusted_projects belongs in the user "
                          f"file, {user}, not in a project file", path=str(path))
    for key, (flag, why) in _NEEDS_TRUST.items():
        if getattr(data, key) is not None:
            refuse((key,), f"an untrusted project file may not set {key} ({why}): pass {flag}, or {trust}")
    for key, order in _WIDER.items():
        value, own = getattr(data, key), getattr(mine, key, None)
        base = own or Config.DEFAULTS[key]
        if value is not None and order.index(value) > order.index(base):
            origin = f"your {user}" if own else "the default"
            refuse((key,), f"an untrusted project file may not choose {key} = \"{value}\", wider than "
                           f"{base!r} ({origin}): pass {'-s' if key == 'sandbox' else '-a'} {value}, or {trust}")
    for key, (flag, why, off) in _TURNS_ON.items():
        if getattr(data, key) is True:
            refuse((key,), f"an untrusted project file may not turn on {key} ({why}): pass {flag}, or {trust}{off}")
    for name in data.mcp_servers:
        refuse(("mcp_servers", name), f"an untrusted project file may not add MCP servers (they run programs, or "
                                      f"send your prompts somewhere): mcp_servers.{name}; pass --mcp-server "
                                      f"{name}=..., or {trust}")
    for name, table in data.providers.items():
        for leaf, _ in _leaves(table.as_dict(), ()):
            if leaf != ("model",):
                refuse(("providers", name, *leaf),
                       f"an untrusted project file may not set provider options (they can name programs to "
                       f"run): providers.{name}.{'.'.join(leaf)}; pass -o {'.'.join(leaf)}=VALUE, or {trust}")
    return refused


def _resolved(base: Path, value: str) -> Path:
    """A path from a file: `~` expanded, a relative one taken from the file's directory."""
    path = Path(value).expanduser()
    return (path if path.is_absolute() else base.parent / path).resolve()


def _leaves(table: Mapping[str, Any], prefix: tuple[str, ...]) -> list[tuple[tuple[str, ...], Any]]:
    """A nested table as (key path, value) pairs, in the file's order."""
    found: list[tuple[tuple[str, ...], Any]] = []
    for key, value in table.items():
        if isinstance(value, Mapping):
            found.extend(_leaves(value, (*prefix, key)))
        else:
            found.append(((*prefix, key), value))
    return found


def _put(options: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    for part in path[:-1]:
        options = options.setdefault(part, {})
    options[path[-1]] = value


def _merged(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """`over` laid on `base` key by key (tables merged, any other value replaced)."""
    merged = dict(base)
    for key, value in over.items():
        below = merged.get(key)
        merged[key] = _merged(below, value) if isinstance(below, Mapping) and isinstance(value, Mapping) else value
    return merged
