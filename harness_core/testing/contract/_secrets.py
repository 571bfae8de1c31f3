"""The secrets the contract holds every played run to: which values of its environment are secrets, the ones the
suite plants itself, and the checks that no event and no file the run wrote carries one.
Layer: testing (private helper of the contract suite). Knows events and the redaction policy's notion of a
secret-looking variable (`harness_core.redaction`); knows no provider. What counts as a secret and where a short
one is looked for: docs/providers.md (the contract suite, no secret in an event or a file).
"""

from __future__ import annotations

import contextlib
import functools
import json
import re
import secrets
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness_core.events import HarnessEvent
from harness_core.redaction import MIN_SECRET, REDACTED, environment_secrets, redact, scrub

__all__ = ["PLANTED_ENV", "PLANTED_SPEC_ENV", "Secret", "SecretLeak", "assert_no_secrets_in_events",
           "assert_no_secrets_in_files", "find_secrets", "plant_secrets", "secrets_of"]

PLANTED_SPEC_ENV = ("HARNESS_CONTRACT_SECRET", "HARNESS_CONTRACT_API_KEY")
"""The variables the suite puts in every played run's `spec.env` (random values: one long, one of 3 characters)."""
PLANTED_ENV = ("HARNESS_CONTRACT_TOKEN", "HARNESS_CONTRACT_SHORT_TOKEN")
"""The variables the suite puts in the process environment for every played run (the same two lengths)."""


@dataclass(frozen=True)
class Secret:
    """One secret of a run: the variable holding it, its value, and where it was set."""

    name: str
    value: str = field(repr=False)  # a failure report must not print a real secret
    origin: str
    """"spec.env" or "the process environment"."""

    @property
    def short(self) -> bool:
        return len(self.value) < MIN_SECRET

    def describe(self) -> str:
        size = f", a {len(self.value)}-character value" if self.short else ""
        return f"{self.name} (from {self.origin}{size})"


def plant_secrets() -> tuple[dict[str, str], dict[str, str]]:
    """Fresh random values for `PLANTED_SPEC_ENV` and `PLANTED_ENV`: (spec env, process env)."""
    long_spec, short_spec = PLANTED_SPEC_ENV
    long_env, short_env = PLANTED_ENV
    return ({long_spec: f"hcs-{secrets.token_hex(12)}", short_spec: _short()},
            {long_env: f"hct-{secrets.token_hex(12)}", short_env: _short()})


def _short() -> str:
    return "".join(secrets.choice("abcdefghjkmnpqrstuvwxyz") for _ in range(3))


def _secret_name(name: str) -> bool:
    """Whether the run log's redaction takes a variable called `name` for a secret."""
    return bool(environment_secrets({name: "x"}))


def secrets_of(spec_env: Mapping[str, str], environ: Mapping[str, str]) -> list[Secret]:
    """The secrets of a run with `spec_env` under the process environment `environ`: every variable whose name
    looks secret or whose value has a credential's shape (empty values aside)."""
    found: list[Secret] = []
    for origin, variables in (("spec.env", spec_env), ("the process environment", environ)):
        for name, value in variables.items():
            if value and value != REDACTED and (_secret_name(name) or scrub(value) != value):
                found.append(Secret(name, value, origin))
    return found


def _forms(value: str) -> set[str]:
    """`value` as it is and as it appears inside a JSON string (an event's JSON, a log line)."""
    return {value, json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1]}


@functools.lru_cache(maxsize=256)
def _beside_name(name: str, value: str) -> re.Pattern[str]:
    """The value right after its variable's name: `NAME=value`, `NAME: value`, `"NAME": "value"` (also with the
    quotes escaped, inside a JSON string), and no longer value going on."""
    values = "|".join(re.escape(form) for form in sorted(_forms(value), key=len, reverse=True))
    return re.compile(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?:\\?[\"'])?\s*[:=]\s*(?:\\?[\"'])?"
                      rf"(?:{values})(?![A-Za-z0-9_])")


def _secret_fields(value: Any, wanted: str, path: str = "") -> list[str]:
    """The fields of a JSON-shaped `value` (JSON documents inside strings included) whose name looks secret and
    whose value is `wanted`."""
    hits: list[str] = []
    if isinstance(value, dict):
        for key, inner in value.items():
            where = f"{path}.{key}" if path else str(key)
            if inner == wanted and redact({str(key): inner}) != {str(key): inner}:
                hits.append(where)
            else:
                hits.extend(_secret_fields(inner, wanted, where))
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            hits.extend(_secret_fields(inner, wanted, f"{path}[{index}]"))
    elif isinstance(value, str) and value.lstrip().startswith(("{", "[")):
        with contextlib.suppress(ValueError):
            hits.extend(_secret_fields(json.loads(value), wanted, path))
    return hits


@dataclass(frozen=True)
class SecretLeak:
    """A secret found where it must not be: `secret`, and how it shows (`how`: the field, or "its value")."""

    secret: Secret
    how: str


def find_secrets(text: str, data: Any, run_secrets: Iterable[Secret]) -> list[SecretLeak]:
    """The secrets `text` (and, when given, its parsed JSON `data`) carries."""
    leaks: list[SecretLeak] = []
    for secret in run_secrets:
        if not secret.short:
            if any(form in text for form in _forms(secret.value)):
                leaks.append(SecretLeak(secret, "its value"))
            continue
        if _beside_name(secret.name, secret.value).search(text):
            leaks.append(SecretLeak(secret, f"`{secret.name}=…` (its value right after its name)"))
            continue
        fields = _secret_fields(data, secret.value) if data is not None else []
        if fields:
            leaks.append(SecretLeak(secret, f"the secret-looking field `{fields[0]}`"))
    return leaks


def _report(leaks: Sequence[SecretLeak]) -> str:
    names = ", ".join(f"{leak.secret.describe()} as {leak.how}" for leak in leaks)
    return f"the value of the secret{'s' if len(leaks) > 1 else ''} {names}"


def assert_no_secrets_in_events(events: Iterable[HarnessEvent], run_secrets: Sequence[Secret]) -> None:
    """No delivered event (as the consumer received it, before the run log's scrubbing) carries a secret."""
    for event in events:
        leaks = find_secrets(event.model_dump_json(), event.model_dump(mode="json"), run_secrets)
        assert not leaks, (
            f"event #{event.seq} ({event.type}) carries {_report(leaks)}: a provider must never put a secret of "
            "its environment (an API key, a token: any secret-looking variable of `spec.env` or of the process "
            "environment, however short) into an event; consumers print events as they are")


def assert_no_secrets_in_files(paths: Iterable[Path], run_secrets: Sequence[Secret]) -> None:
    """No file (the run log, the wire log, anything the run wrote beside them) holds a secret."""
    for path in paths:
        text = path.read_bytes().decode("utf-8", "replace")
        leaks = find_secrets(text, None, run_secrets)
        short = [s for s in run_secrets if s.short]
        for number, line in enumerate(text.splitlines(), 1):
            if leaks or not short:
                break
            if line.startswith("{"):  # a JSON line: its secret-looking fields, JSON inside its strings included
                try:
                    data = json.loads(line)
                except ValueError:
                    continue
                leaks = [SecretLeak(leak.secret, f"{leak.how} of line {number}")
                         for leak in find_secrets("", data, short)]
        assert not leaks, (
            f"{path.name} holds {_report(leaks)}: every file Harness writes must be scrubbed of the run's secrets "
            "(the run log masks every `spec.env` value but the provider's `public_env` and the secret-looking "
            f"variables of the environment, from {MIN_SECRET} characters on; a shorter one must never reach an event)")
