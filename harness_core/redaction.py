"""Secrets out of everything Harness writes: one policy for the run log, the wire log and log messages.

Layer: core utility. Knows strings, JSON-able values and the environment; knows nothing of events, providers
or files. `RunSecrets` scrubs one run's lines on their way to a file, `redact` a value shown whole, `redact_env`
the spec's environment. What counts as a secret: docs/run-store.md.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

__all__ = ["MIN_SECRET", "REDACTED", "RunSecrets", "hidden_values", "public_env_name", "public_env_value", "redact",
           "redact_argv", "redact_env", "scrub"]

REDACTED = "***"
MIN_SECRET = 8
"""Named secret values shorter than this are not searched for in text."""

# Every pattern below runs in time linear in the text (a scrub sees 10 MB tool outputs and prompts): each begins
# with a literal or a small set of first characters (the engine skips ahead to them in C), and each attempt reads at
# most one token or one user-info span, so no character is re-read more than a fixed number of times. A pattern
# that begins with a look-behind, or that must find where a run of letters starts (`[a-z][a-z0-9+.-]*://`), tries
# every position and re-reads the run from each: quadratic (a 100 KB run of letters took 56 s).
_URL_USERINFO_REVERSED = re.compile(r"@[^/\s@]+(?=//:[0-9+.-]*[A-Za-z])")
"""The user-info of a URL (`scheme://user:pw@host`, scheme `[a-z][a-z0-9+.-]*`), matched on the reversed text,
where it begins with a literal `@` and ends at the first `/`: the scheme is only checked to hold a letter."""
_BEARER = re.compile(r"earer (?<=[Bb]earer )(?=[A-Za-z0-9._~+/=-]{8})")
_BEARER_TOKEN = re.compile(r"[A-Za-z0-9._~+/=-]+")
"""A bearer token: the run of token characters after `Bearer ` or `bearer `, if at least 8 long."""
_SHAPES = {
    "sk-": r"sk-(?<![A-Za-z0-9]sk-)[A-Za-z0-9_-]{8,}",
    "gh": r"gh[pousr]_(?<![A-Za-z0-9]gh[pousr]_)[A-Za-z0-9]{16,}",
    "github_pat_": r"github_pat_(?<![A-Za-z0-9]github_pat_)[A-Za-z0-9_]{16,}",
    "xox": r"xox[abprs]-(?<![A-Za-z0-9]xox[abprs]-)[A-Za-z0-9-]{8,}",
    "AKIA": r"AKIA(?<![A-Za-z0-9]AKIA)[0-9A-Z]{16}",
}
"""Well-known credential shapes by the literal they start with, each after a non-alphanumeric character
(`task-list` is not a key). The look-behind follows the literal, so the engine tries only where the literal is."""
_SHAPE_ALONE = {literal: re.compile(pattern) for literal, pattern in _SHAPES.items()}
_SECRET_TEXT = re.compile("|".join(_SHAPES.values()))
"""All shapes at once (leftmost first, as one pattern: one shape can hold another's literal, `xoxb-…-sk-…`); only
for a text holding more than one of the literals, which a substring test finds (~1 ms per 10 MB)."""
# Cheap first look at a JSON line: literal triggers only (a hit sends the line down the exact, slow path).
_TRIGGERS = r"sk-|gh[pousr]_|github_pat_|xox|AKIA|Bearer |bearer |://"
# Literal alternatives only: the regex engine then skips ahead by first character (a character class or a
# look-behind in front costs 2-3x per line). A trigger is only a first look: the exact shapes decide.

_NAME_WORDS = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
"""The words of a key name: `openai_api_key` → openai, api, key; `apiKey` → api, Key; `X-Auth-Token` → X, Auth,
Token."""
_SECRET_WORDS = frozenset({
    "key", "apikey", "token", "secret", "secrets", "password", "passwd", "pwd", "passphrase", "credential",
    "credentials", "creds", "auth", "authorization", "authtoken", "cookie", "cookies", "bearer", "pat", "sessionid",
})
"""A key with one of these words holds a secret (whole words: `max_tokens`, `author`, `keyboard` do not)."""


def _secret_name(name: str) -> bool:
    """Whether an option key names a secret: one of `_SECRET_WORDS` as a whole word, or `passw…`, `session_id`."""
    words = {word.lower() for word in _NAME_WORDS.findall(name)}
    if words & _SECRET_WORDS:
        return True
    lowered = name.lower()
    return "passw" in lowered or "session_id" in lowered or "sessionid" in lowered or "private_key" in lowered
_ALL_SECRET_TABLES = frozenset({"env", "environment", "headers", "http_headers", "env_vars"})
_SECRET_ENV_NAME = re.compile(
    r"(API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|(^|_)KEY$|TOKEN|SECRET|PASSW|CREDENTIAL|COOKIE|SESSION_?ID|(^|_)PAT$)",
    re.IGNORECASE,
)
"""Names of environment variables whose values are secrets: `*_API_KEY`, `*_KEY`, `*TOKEN*`, `*SECRET*`,
`*PASSWORD*`, `*CREDENTIAL*`, … — not merely `*AUTH*` or `*PRIVATE*` (`GIT_AUTHOR_NAME`, `SSH_AUTH_SOCK`,
`XAUTHORITY` and `GOPRIVATE` are not secrets)."""
_SYSTEM_ENV = frozenset({"HOME", "PATH", "PWD", "SHELL", "TERM", "LANG", "LANGUAGE", "TZ", "USER", "LOGNAME",
                         "TMPDIR", "TMP", "TEMP", "NO_PROXY", "no_proxy"})
"""Variables of the system that locate or configure, never secrets (with `LC_*` and `XDG_*`; `NO_PROXY` lists hosts,
as every offline run's does: the loopback addresses)."""
_FLAG = re.compile(r"-[\w-]*$")
_FLAG_SECRET_WORD = re.compile(r"key|token|secret|passw|auth|bearer", re.IGNORECASE)


def _secret_flag(arg: str) -> bool:
    """Whether `arg` is a flag like `--api-key` or `-token`: two linear searches (one pattern with a word between
    two runs of word characters re-read the rest of the argument at every such word: quadratic)."""
    return _FLAG.match(arg) is not None and _FLAG_SECRET_WORD.search(arg) is not None


def scrub(text: str, known: tuple[str, ...] = ()) -> str:
    """`text` with credential-looking substrings, URL user-info and the `known` secret values (those of at least
    `MIN_SECRET` characters) replaced. Linear in `len(text)` (times the number of `known` values)."""
    for secret in known:
        if len(secret) >= MIN_SECRET and secret in text:
            text = text.replace(secret, REDACTED)
    if "://" in text and "@" in text:
        text = _URL_USERINFO_REVERSED.sub("@" + REDACTED, text[::-1])[::-1]
    if "earer " in text:  # before the shapes: a token right after a shape (`sk-…Bearer tok`) is still found
        text = _without_bearer_tokens(text)
    present = [literal for literal in _SHAPES if literal in text]
    if present:
        text = (_SHAPE_ALONE[present[0]] if len(present) == 1 else _SECRET_TEXT).sub(REDACTED, text)
    return text


def _without_bearer_tokens(text: str) -> str:
    """`text` with the token after each `Bearer ` / `bearer ` hidden. The leads are found in the text as it was: a
    token may end in `bearer` itself (`Bearer tok1bearer tok2`), and then `tok2` is a token too."""
    pieces: list[str] = []
    kept = 0
    for lead in _BEARER.finditer(text):
        start = lead.end()
        token = _BEARER_TOKEN.match(text, start)
        assert token is not None  # the lead's look-ahead saw 8 token characters
        pieces += (text[kept:start], REDACTED)
        kept = token.end()
    return "".join(pieces) + text[kept:] if pieces else text


def redact_argv(argv: Sequence[str], secret_flags: Collection[str], known: tuple[str, ...] = ()) -> list[str]:
    """`argv` fit for a log line: the value after each flag in `secret_flags` (`--flag VALUE`, or
    `--flag=VALUE`) replaced, and every other argument scrubbed of credential shapes and the `known` secrets."""
    out: list[str] = []
    hide = False
    for arg in argv:
        flag, eq, _ = arg.partition("=")
        if hide:
            out.append(REDACTED)
        elif eq and flag in secret_flags:
            out.append(f"{flag}={REDACTED}")
        else:
            out.append(scrub(arg, known))
        hide = not hide and arg in secret_flags
    return out


def redact(value: Any, *, all_values: bool = False, secret_flags: Collection[str] = frozenset(),
           found: list[str] | None = None) -> Any:
    """Copy of a JSON-able value with secrets replaced by `***`.

    Redacted: every value when `all_values`; the whole value (whatever its type) under a key that looks like a key,
    token, secret, password or credential; every value under a table of environment variables or headers; the
    argument after a flag like `--api-key`, or after a flag in `secret_flags` (in lists, as `--flag VALUE` or
    `--flag=VALUE`); the user-info part of URLs; strings that look like well-known credentials. Each hidden
    string is appended to `found` (with the secrets inside a hidden value that is a JSON document).
    """
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            name = str(key)
            if all_values or _secret_name(name) or name.lower() in _ALL_SECRET_TABLES:
                out[key] = _hide(item, found)
            else:
                out[key] = redact(item, secret_flags=secret_flags, found=found)
        return out
    if isinstance(value, list):
        if all_values:
            return [_hide(v, found) for v in value]
        items: list[Any] = []
        hide_next = False
        for item in value:
            flag, eq, rest = item.partition("=") if isinstance(item, str) else ("", "", "")
            if hide_next:
                items.append(_hide(item, found))
            elif eq and (flag in secret_flags or _secret_flag(flag)):
                _hide(rest, found)
                items.append(f"{flag}={REDACTED}")
            else:
                items.append(redact(item, secret_flags=secret_flags, found=found))
            hide_next = isinstance(item, str) and (_secret_flag(item) or item in secret_flags)
        return items
    if all_values:
        return _hide(value, found)
    if isinstance(value, str):
        return scrub(value)
    return value


def _hide(value: Any, found: list[str] | None) -> Any:
    """`value` replaced whole (structure kept, every leaf `***`), its string leaves noted in `found`."""
    if isinstance(value, dict):
        return {k: _hide(v, found) for k, v in value.items()}
    if isinstance(value, list):
        return [_hide(v, found) for v in value]
    if found is not None and isinstance(value, str):
        found.append(value)
        found.extend(_secrets_inside_json(value))
    return REDACTED


def _secrets_inside_json(text: str) -> list[str]:
    """The secrets `redact` finds inside `text` when it is a JSON object or list (e.g. `--settings '{"env":…}'`)."""
    if not text.lstrip().startswith(("{", "[")):
        return []
    try:
        parsed = json.loads(text)
    except ValueError:
        return []
    inner: list[str] = []
    redact(parsed, found=inner)
    return inner


def public_env_name(name: str, declared: Collection[str] = frozenset()) -> bool:
    """Whether the value of `spec.env`'s variable `name` is shown (not a secret): a variable of the system
    (`HOME`, `PATH`, `TMPDIR`, `LANG`, `LC_*`, `XDG_*`, …) or one in `declared` (the provider's
    `ProviderInfo.public_env`) — never a secret-looking name (`*_API_KEY`, `*TOKEN*`, …), whoever declares it."""
    if _SECRET_ENV_NAME.search(name):
        return False
    return name in declared or name in _SYSTEM_ENV or name.startswith(("LC_", "XDG_"))


def public_env_value(name: str, value: str, declared: Collection[str] = frozenset()) -> bool:
    """`public_env_name`, and a URL only when it points at this machine (127.0.0.1, localhost, ::1): a gateway's
    URL may carry a tenant token in its path or query, which no credential shape catches."""
    if not public_env_name(name, declared):
        return False
    if "://" not in value:
        return True
    try:
        host = urlsplit(value.strip()).hostname
    except ValueError:
        return False
    return host in _LOOPBACK_HOSTS


_LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})


def redact_env(env: Mapping[str, str], public_env: Collection[str] = frozenset()) -> dict[str, str]:
    """`spec.env` as `run_started` shows it: every value `***` but the public ones (`public_env_value`)."""
    return {name: value if public_env_value(name, value, public_env) else REDACTED for name, value in env.items()}


def hidden_values(original: Any, scrubbed: Any) -> set[str]:
    """The values (of at least `MIN_SECRET` characters) that `scrubbed` hides as `***` where `original`, the same
    JSON-able value, shows them: how a replay learns the secrets its run log masked (the run's own values are in
    no file). Strings are aligned on the text around each `***`; what does not align teaches nothing."""
    found: set[str] = set()
    if isinstance(original, dict) and isinstance(scrubbed, dict):
        for key, value in original.items():
            if key in scrubbed:
                found |= hidden_values(value, scrubbed[key])
    elif isinstance(original, list) and isinstance(scrubbed, list):
        for value, hid in zip(original, scrubbed, strict=False):
            found |= hidden_values(value, hid)
    elif isinstance(original, str) and isinstance(scrubbed, str) and original != scrubbed and REDACTED in scrubbed:
        found |= _hidden_in(original, scrubbed)
    return found


def _hidden_in(original: str, scrubbed: str) -> set[str]:
    *pieces, last = scrubbed.split(REDACTED)
    first, middle = pieces[0], pieces[1:]
    if not original.startswith(first) or not original.endswith(last) or len(first) + len(last) > len(original):
        return set()
    found: list[str] = []
    at, end = len(first), len(original) - len(last)
    for piece in middle:  # the text between two `***`: found leftmost, as a scrub leaves it
        next_at = original.find(piece, at, end)
        if next_at < 0:
            return set()
        found.append(original[at:next_at])
        at = next_at + len(piece)
    found.append(original[at:end])
    return {value for value in found if len(value) >= MIN_SECRET}


def environment_secrets(environ: Mapping[str, str]) -> list[str]:
    """The values of the secret-looking variables of `environ` (`OPENAI_API_KEY`, `GITHUB_TOKEN`, …; see
    `_SECRET_ENV_NAME`)."""
    return [value for name, value in environ.items() if _SECRET_ENV_NAME.search(name)]


class RunSecrets:
    """The secret values of one run, and the scrubbing of every line Harness writes for it.

    `json_line` is on the run log's hot path: one regex search over the serialised event (a literal trigger
    or a named value) and, only on a hit, the exact path — parse, scrub every string, serialise again — so a
    replacement can never break the line's JSON.
    """

    def __init__(self, known: Iterable[str] = ()) -> None:
        values = {v for v in known if len(v) >= MIN_SECRET}
        self.known: tuple[str, ...] = tuple(sorted(values, key=len, reverse=True))
        escaped = {json.dumps(v, ensure_ascii=ascii)[1:-1] for v in self.known for ascii in (False, True)}
        self._text_forms = tuple(sorted(escaped | set(self.known), key=len, reverse=True))
        """Each value as it is, and as it appears inside a JSON string (an agent's wire line), longest first."""
        forms = {json.dumps(v, ensure_ascii=False)[1:-1].encode() for v in self.known}  # as the run log writes them
        named = b"|".join(re.escape(f) for f in sorted(forms, key=len, reverse=True))
        self._probe = re.compile(_TRIGGERS.encode() + (b"|" + named if named else b"")).search
        plain = "|".join(re.escape(v) for v in self.known)
        self.text_probe = re.compile(_TRIGGERS + ("|" + plain if plain else "")).search
        """A first look at a short text (a streamed delta): None when it cannot hold a secret."""

    @classmethod
    def of_run(cls, env: Mapping[str, str], options: Any = None, *, secret_flags: Collection[str] = frozenset(),
               public_env: Collection[str] = frozenset(), environ: Mapping[str, str] | None = None) -> RunSecrets:
        """The secrets of a run with `env` (the spec's: every value but the public ones, see `public_env_name`
        with the provider's `public_env`), provider `options` and the process `environ`."""
        hidden = [value for name, value in env.items() if not public_env_value(name, value, public_env)]
        found: list[str] = list(hidden)
        found.extend(environment_secrets(os.environ if environ is None else environ))
        for value in hidden:
            found.extend(_secrets_inside_json(value))
        if options is not None:
            redact(options, secret_flags=secret_flags, found=found)
        return cls(found)

    def with_values(self, values: Iterable[str]) -> RunSecrets:
        """These secrets and `values` (self when `values` adds none)."""
        added = {v for v in values if len(v) >= MIN_SECRET} - set(self.known)
        return RunSecrets([*self.known, *added]) if added else self

    def text(self, text: str) -> str:
        """`text` scrubbed (a wire line, a message): the values also in their JSON-escaped forms, since a wire line
        is usually an agent's JSON."""
        return scrub(text, self._text_forms)

    def json_line(self, line: bytes) -> bytes:
        """A serialised JSON value (one run-log line) with every secret inside its strings replaced."""
        if self._probe(line) is None:
            return line
        try:
            value = json.loads(line)
        except ValueError:  # not JSON after all: scrub it as text
            return self.text(line.decode("utf-8", "replace")).encode()
        scrubbed = self._walk(value)
        if scrubbed == value:  # a trigger without a secret (`task-list`): the line as it was
            return line
        return json.dumps(scrubbed, ensure_ascii=False, separators=(",", ":")).encode()

    def _walk(self, value: Any) -> Any:
        if isinstance(value, str):
            return scrub(value, self.known)
        if isinstance(value, dict):
            return {scrub(k, self.known) if isinstance(k, str) else k: self._walk(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self._walk(v) for v in value]
        return value
