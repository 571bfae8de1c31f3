"""The configuration files of the `harness` command: the user's `$XDG_CONFIG_HOME/harness/config.toml` and a
project's `.harness.toml` (found upward from the working directory), read, checked and layered with the
environment: command line > environment > project > user > built-in default.

Layer: CLI support, pure: the standard library, pydantic and `tomllib` (`tomli` on 3.10); no click. Imported
only when a command runs (never at start-up). Knows the spec's field names and the environment variables the CLI
reads (`HARNESS_PROVIDER`, `HARNESS_RUNS_DIR`); nothing of any provider: a `[providers.NAME]` table's options are
checked by that provider's options model when a run uses them, as `-o KEY=VALUE` options are.

A project file comes with the project, so it may not widen what the agent can do or run: `sandbox =
"danger-full-access"` and provider options (which can name programs to run) are refused in it unless the user's
file lists the project under `trusted_projects`.
"""

from __future__ import annotations

import difflib
import math
import os
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from harness_core.errors import EXIT_USAGE, HarnessError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib  # type: ignore[import-not-found, unused-ignore]  # not installed on 3.11+

__all__ = ["PROJECT_FILE", "Config", "ConfigError", "Looked", "Value", "load_config", "user_config_path"]

PROJECT_FILE = ".harness.toml"
ENV_PROVIDER = "HARNESS_PROVIDER"  # = harness_core.plugins.ENV_PROVIDER
ENV_RUNS_DIR = "HARNESS_RUNS_DIR"  # = harness_core.store.ENV_RUNS_DIR
Scope = Literal["user", "project"]


class ConfigError(HarnessError):
    """A configuration file that does not read or check: the message names the file and line."""

    code = "invalid_config"
    exit_status = EXIT_USAGE


class ConfigFile(BaseModel):
    """What a configuration file may hold (every key optional, unknown keys refused)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    provider: str | None = Field(default=None, min_length=1)
    model: str | None = Field(default=None, min_length=1)
    sandbox: Literal["read-only", "workspace-write", "danger-full-access"] | None = None
    approval: Literal["never", "on-request", "untrusted"] | None = None
    idle_timeout: float | None = Field(default=None, gt=0)
    """Seconds; `"inf"` (math.inf here) says no idle timeout."""
    runs_dir: str | None = Field(default=None, min_length=1)
    effort: str | None = Field(default=None, min_length=1)
    max_turns: int | None = Field(default=None, ge=1)
    max_cost_usd: float | None = Field(default=None, gt=0)
    max_output_tokens: int | None = Field(default=None, ge=1)
    trusted_projects: list[str] | None = None
    providers: dict[str, dict[str, Any]] = Field(default_factory=dict)

    @field_validator("idle_timeout", mode="before")
    @classmethod
    def _infinity(cls, value: Any) -> Any:
        if isinstance(value, str) and value.strip().lower() in ("inf", "infinity"):
            return math.inf
        if isinstance(value, str):
            raise ValueError(f"{value!r} is not a number of seconds: give e.g. 300, or \"inf\" for no idle timeout")
        return value

    @field_validator("providers")
    @classmethod
    def _models_are_names(cls, value: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        for name, table in value.items():
            if "model" in table and not (isinstance(table["model"], str) and table["model"]):
                raise ValueError(f"providers.{name}.model must be a model name (a non-empty string)")
        return value


KEYS: tuple[str, ...] = tuple(k for k in ConfigFile.model_fields if k not in ("providers", "trusted_projects"))
"""The top-level settings, in the order `harness config` shows them."""
SPEC_KEYS = ("model", "sandbox", "approval", "idle_timeout", "effort", "max_turns", "max_cost_usd",
             "max_output_tokens")
"""The settings that are `AgentRunSpec` fields of the same name."""


@dataclass(frozen=True)
class Looked:
    """A configuration file looked for: its scope, where, and whether it was there."""

    scope: Scope
    path: Path
    """The file; for a project file not found, the directory the search started from."""
    found: bool


@dataclass(frozen=True)
class Value:
    """A setting's value and where it came from: ``default``, ``$HARNESS_PROVIDER``, ``project /p/.harness.toml:3``."""

    value: Any
    source: str


@dataclass(frozen=True)
class Config:
    """The settings found in the environment and the configuration files (not the command line, not the built-in
    defaults: a key set nowhere is absent)."""

    files: tuple[Looked, ...]
    values: Mapping[str, Value] = field(default_factory=dict)
    providers: Mapping[str, Mapping[tuple[str, ...], Value]] = field(default_factory=dict)
    """Per provider name: each option's key path (``("config", "effort")``; ``("model",)`` is the provider's
    model, not an option) and value."""
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


def project_config_path(start: Path, home: Path | None = None) -> Path | None:
    """The nearest `.harness.toml` in `start` or a directory above it. Below the home directory the search stops
    at it (files above it belong to other users or the system); elsewhere it goes up to the filesystem root."""
    here = start.resolve()
    home = (home or Path.home()).resolve()
    for directory in (here, *here.parents):
        candidate = directory / PROJECT_FILE
        if candidate.is_file():
            return candidate
        if directory == home:
            return None
    return None


def load_config(cwd: Path | None = None, env: Mapping[str, str] | None = None) -> Config:
    """The user file, the project file found upward from `cwd` (default: the current directory) and the
    environment, layered (environment > project > user).

    Raises:
        ConfigError: a file that is not TOML, holds an unknown key or a wrong value, or (a project file) widens
            what the agent may do without being trusted; the message names the file and line.
    """
    environ = os.environ if env is None else env
    user = user_config_path(environ)
    project = project_config_path(cwd if cwd is not None else Path.cwd())
    looked = [Looked("user", user, user.is_file())]
    layers: list[tuple[Scope, Path, ConfigFile, dict[tuple[str, ...], int]]] = []
    if user.is_file():
        layers.append(("user", user, *_read(user)))
    trusted = [_resolved(user, p) for p in (layers[0][2].trusted_projects or ())] if layers else []
    if project is not None:
        looked.append(Looked("project", project, True))
        data, lines = _read(project)
        _check_project(project, data, lines, trusted, user)
        layers.append(("project", project, data, lines))
    else:
        looked.append(Looked("project", (cwd if cwd is not None else Path.cwd()).resolve(), False))
    values: dict[str, Value] = {}
    providers: dict[str, dict[tuple[str, ...], Value]] = {}
    for scope, path, data, lines in layers:
        where = f"{scope} {path}"
        for key in KEYS:
            value = getattr(data, key)
            if value is not None:
                if key == "runs_dir":
                    value = _resolved(path, value)
                values[key] = Value(value, f"{where}:{_line(lines, (key,))}")
        for name, table in data.providers.items():
            for leaf, value in _leaves(table, ()):
                line = _line(lines, ("providers", name, *leaf))
                providers.setdefault(name, {})[leaf] = Value(value, f"{where}:{line}")
    if environ.get(ENV_PROVIDER):
        values["provider"] = Value(environ[ENV_PROVIDER], f"${ENV_PROVIDER}")
    if environ.get(ENV_RUNS_DIR):
        values["runs_dir"] = Value(Path(environ[ENV_RUNS_DIR]).expanduser(), f"${ENV_RUNS_DIR}")
    return Config(files=tuple(looked), values=values, providers=providers)


def _read(path: Path) -> tuple[ConfigFile, dict[tuple[str, ...], int]]:
    """A file's checked contents and the line of each key in it."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}; fix or remove the file",
                          path=str(path)) from None
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        where = re.search(r"\(at line (\d+), column (\d+)\)", str(exc))
        problem = re.sub(r"\s*\(at (line \d+, column \d+|end of document)\)", "", str(exc))
        line = f":{where[1]}" if where else ""
        raise ConfigError(f"{path}{line}: not valid TOML: {problem}"
                          f"{f' (column {where[2]})' if where else ''}", path=str(path)) from None
    lines = _key_lines(text)
    try:
        return ConfigFile.model_validate(raw), lines
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = tuple(str(p) for p in err["loc"])
        raise ConfigError(f"{path}:{_line(lines, loc)}: {_problem(err, loc)}", path=str(path)) from None


def _problem(err: Any, loc: tuple[str, ...]) -> str:
    """One pydantic error as what is wrong and what is allowed."""
    key = ".".join(loc) or "the file"
    if err["type"] == "extra_forbidden":
        allowed = [k for k in ConfigFile.model_fields]
        close = difflib.get_close_matches(loc[-1], allowed, n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        return (f"unknown key {key!r}; {hint}allowed keys: {', '.join(allowed)} (provider options go in a "
                f"[providers.NAME] table)")
    message = str(err["msg"]).removeprefix("Value error, ")
    return f"{key} = {_toml(err.get('input'))}: {message}"


def _check_project(path: Path, data: ConfigFile, lines: dict[tuple[str, ...], int], trusted: list[Path],
                   user: Path) -> None:
    """Refuse what an untrusted project file may not set (it comes with the project's files)."""
    if any(path.parent == t or t in path.parent.parents for t in trusted):
        return
    trust = (f"to let this project's file set it, add its directory to trusted_projects in {user} "
             f"(trusted_projects = [\"{path.parent}\"])")
    if data.trusted_projects is not None:
        raise ConfigError(f"{path}:{_line(lines, ('trusted_projects',))}: trusted_projects belongs in the user "
                          f"file, {user}, not in a project file", path=str(path))
    if data.sandbox == "danger-full-access":
        raise ConfigError(f"{path}:{_line(lines, ('sandbox',))}: a project file may not choose sandbox = "
                          f"\"danger-full-access\": pass -s danger-full-access, or {trust}", path=str(path))
    for name, table in data.providers.items():
        for leaf, _ in _leaves(table, ()):
            if leaf != ("model",):
                raise ConfigError(f"{path}:{_line(lines, ('providers', name, *leaf))}: a project file may not set "
                                  f"provider options (they can name programs to run): providers.{name}."
                                  f"{'.'.join(leaf)}; pass -o {'.'.join(leaf)}=VALUE, or {trust}", path=str(path))


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


_BARE = r"[A-Za-z0-9_-]+|\"(?:[^\"\\]|\\.)*\"|'[^']*'"
_DOTTED = rf"(?:{_BARE})(?:\s*\.\s*(?:{_BARE}))*"
_TABLE = re.compile(rf"\[\[?\s*({_DOTTED})\s*\]\]?")
_KEY = re.compile(rf"({_DOTTED})\s*=")


def _key_lines(text: str) -> dict[tuple[str, ...], int]:
    """The first line of each table header and key (as its full key path) in a TOML text: where an error is."""
    lines: dict[tuple[str, ...], int] = {}
    table: tuple[str, ...] = ()
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if header := _TABLE.match(line):
            table = _split(header[1])
            lines.setdefault(table, number)
        elif key := _KEY.match(line):
            lines.setdefault((*table, *_split(key[1])), number)
    return lines


def _split(dotted: str) -> tuple[str, ...]:
    parts = re.findall(_BARE, dotted)
    return tuple(p[1:-1] if p[:1] in "\"'" else p for p in parts)


def _line(lines: Mapping[tuple[str, ...], int], loc: tuple[str, ...]) -> int:
    """The line of the longest prefix of `loc` the file names (1 when none: an empty file)."""
    for end in range(len(loc), 0, -1):
        if loc[:end] in lines:
            return lines[loc[:end]]
    return 1


def _toml(value: Any) -> str:
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value)
