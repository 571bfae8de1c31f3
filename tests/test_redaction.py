"""One redaction policy for every file Harness writes: `redact`, `scrub`, `RunSecrets` and a run that leaks on
purpose (every file it wrote is grepped)."""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
from difflib import SequenceMatcher
from pathlib import Path
from typing import Any

import anyio
import pytest

import harness_core.testing.scripted as scripted
from harness_core import open_run
from harness_core.capabilities import ProviderInfo
from harness_core.events import (
    ErrorEvent,
    ErrorInfo,
    HarnessToolDetails,
    Notice,
    ProviderRaw,
    TextDelta,
    ToolKind,
    ToolResult,
    ToolStatus,
    ToolSummary,
    ToolUse,
)
from harness_core.hookspecs import hookimpl
from harness_core.plugins import PluginHost
from harness_core.provider import ProviderOptions, RunContext
from harness_core.redaction import REDACTED, RunSecrets, hidden_values, redact, redact_env, scrub
from harness_core.spec import AgentRunSpec
from harness_core.store import read_events


def test_redaction() -> None:
    data = {"api_key": "k", "nested": {"Authorization": "Bearer x", "model": "m"}, "list": [{"token": "t"}]}
    assert redact(data) == {"api_key": "***", "nested": {"Authorization": "***", "model": "m"},
                            "list": [{"token": "***"}]}
    assert redact({"A": "1", "B": {"C": "2"}}, all_values=True) == {"A": "***", "B": {"C": "***"}}


def test_redaction_of_real_world_shapes() -> None:
    data = {
        "auth": {"bearer": "b"},
        "config": {"mcp_servers": {"gh": {"env": {"GH_PAT": "ghp_0123456789abcdef0123"}}}},
        "extra_args": ["--api-key", "k-123", "--model", "m"],
        "base_url": "https://user:pw@example.test/v1",
        "path": "/src/app.py",
        "note": "use Bearer abcdefghijklmnop",
    }
    assert redact(data) == {
        "auth": {"bearer": "***"},
        "config": {"mcp_servers": {"gh": {"env": {"GH_PAT": "***"}}}},
        "extra_args": ["--api-key", "***", "--model", "m"],
        "base_url": "https://***@example.test/v1",
        "path": "/src/app.py",
        "note": "use Bearer ***",
    }
    assert scrub("failed: sk-abcdefghijklmnop and secretvalue", ("secretvalue",)) == "failed: *** and ***"


def test_redaction_of_a_providers_secret_flags() -> None:
    """`ProviderInfo.secret_flags`: values after those flags (or after `=`) are hidden, nested lists too."""
    flags = frozenset({"--settings"})
    data = {"extra_args": ["--settings", '{"env": {"X": "v"}}', "--settings={}", "--model", "m"],
            "nested": {"args": ["--settings", "s"]}}
    assert redact(data, secret_flags=flags) == {
        "extra_args": ["--settings", "***", "--settings=***", "--model", "m"],
        "nested": {"args": ["--settings", "***"]},
    }
    assert redact(data)["extra_args"][1] == '{"env": {"X": "v"}}'  # without the flag named, kept

def test_flag_equals_value_of_a_secret_looking_flag() -> None:
    assert redact({"args": ["--api-key=abc123456", "--model=m"]}) == {"args": ["--api-key=***", "--model=m"]}


def test_credential_shapes_need_a_word_boundary() -> None:
    """`task-management-system` is not an OpenAI key; `sk-proj-…` after a space or quote is."""
    assert scrub("see task-management-system") == "see task-management-system"
    assert scrub('key="sk-proj-abcdefgh12345"') == 'key="***"'


def test_run_secrets_collects_env_environment_and_options() -> None:
    secrets = RunSecrets.of_run(
        {"PLAIN": "spec-env-value-1", "SHORT": "abc"},
        {"extra_args": ["--settings", '{"env": {"X": "inside-settings-json"}, "model": "sonnet-model"}'],
         "api_key": "option-api-key-1"},
        secret_flags=frozenset({"--settings"}),
        environ={"MY_SERVICE_TOKEN": "environ-token-12", "HOME": "/home/someone-long", "EMPTY_KEY": ""},
    )
    assert set(secrets.known) >= {"spec-env-value-1", "inside-settings-json", "option-api-key-1",
                                  "environ-token-12"}
    assert "abc" not in secrets.known and "/home/someone-long" not in secrets.known  # short, or not secret-named
    assert "sonnet-model" not in secrets.known  # an ordinary setting inside the secret-bearing JSON stays


def test_json_line_scrubs_inside_strings_and_keeps_the_json_valid() -> None:
    secrets = RunSecrets(["va\"lue-with-quote", "plain-secret-1"])
    line = json.dumps({"output": 'x va"lue-with-quote y plain-secret-1 https://u:p@h/ sk-abcdefghijk',
                       "n": 1.5, "nested": [{"k": "plain-secret-1"}]}, separators=(",", ":")).encode()
    out = json.loads(secrets.json_line(line))
    assert out == {"output": "x *** y *** https://***@h/ ***", "n": 1.5, "nested": [{"k": "***"}]}


def test_json_line_leaves_a_clean_line_as_it_is() -> None:
    line = b'{"type":"text_delta","text":"the task-list is done","seq":3}'
    assert RunSecrets(["plain-secret-1"]).json_line(line) is line


# --- a run that leaks on purpose -------------------------------------------------------------------------

SPEC_SECRET = "spec-env-secret-4f2a9c"
ENVIRON_SECRET = "environ-token-7d1e0b"
SHAPED = "sk-proj-Zx81Kq0Lm2Nb7Vc4"


class _Leaky(scripted.ScriptedProvider):
    """Puts every secret into every kind of event a provider emits, and into its wire recording."""

    async def run(self, spec: AgentRunSpec, options: ProviderOptions, ctx: RunContext) -> Any:
        leak = f"{SPEC_SECRET} {ENVIRON_SECRET} {SHAPED}"
        ctx.record_wire("in", f'{{"env": "{leak}"}}'.encode())
        display = HarnessToolDetails(kind=ToolKind.SHELL, title="Running command", command=f"echo {leak}")
        await ctx.emit(ToolUse(tool_id="t1", name="shell", display=display, input={"cmd": leak}))
        await ctx.emit(ToolSummary(tool_id="t1", text=leak))
        done = display.model_copy(update={"status": ToolStatus.COMPLETED})
        await ctx.emit(ToolResult(tool_id="t1", name="shell", display=done, output=leak))
        await ctx.emit(TextDelta(text=f"the key is {leak}"))
        await ctx.emit(Notice(code="reconnecting", message=leak))
        await ctx.emit(ErrorEvent(error=ErrorInfo(code="model_error", message=leak)))
        await ctx.emit(ProviderRaw(method="x", payload={"nested": [leak]}))
        return await super().run(spec, options, ctx)


@pytest.mark.anyio
async def test_no_secret_reaches_any_file_a_run_writes(runs_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HARNESS_TEST_SERVICE_TOKEN", ENVIRON_SECRET)

    class Plugin:
        @hookimpl
        def harness_register_providers(self, register: Any) -> None:
            _Leaky.info = ProviderInfo(name="leaky", version="1")
            register(_Leaky)

    host = PluginHost.create(entry_points=False, plugins=[("leaky", Plugin())])
    spec = AgentRunSpec(prompt="go", env={"PROBE": SPEC_SECRET}, provider_options={"scenario": "say"})
    delivered = []
    with anyio.fail_after(20):
        async with open_run(spec, "leaky", host=host, runs_dir=runs_dir, record_wire=True) as live:
            async for event in live:
                delivered.append(event)
    assert any(SPEC_SECRET in e.model_dump_json() for e in delivered)  # the consumer got them: not vacuous
    written = _files_without(runs_dir, (SPEC_SECRET, ENVIRON_SECRET, SHAPED))
    assert set(written) >= {f"{live.run_id}.jsonl", f"{live.run_id}.wire.jsonl"}
    events = list(read_events(live.log_path))  # still a readable log
    assert [e.type for e in events] == [e.type for e in delivered]
    leaked = next(e for e in events if isinstance(e, ToolResult))
    assert leaked.output == f"{REDACTED} {REDACTED} {REDACTED}"


def _files_without(directory: Path, secrets: tuple[str, ...]) -> list[str]:
    """The names of every file under `directory`, after checking that none holds any of `secrets`."""
    names = []
    for path in sorted(p for p in directory.rglob("*") if p.is_file()):
        data = path.read_bytes()
        for secret in secrets:
            assert secret.encode() not in data, f"{secret} in {path.name}"
        names.append(path.name)
    return names



def test_ordinary_environment_variables_are_not_secrets() -> None:
    secrets = RunSecrets.of_run({}, environ={
        "GIT_AUTHOR_NAME": "Jane Maintainer", "SSH_AUTH_SOCK": "/tmp/ssh-abc/agent.1", "XAUTHORITY": "/home/j/.Xa",
        "GOPRIVATE": "example.com/private", "GNOME_KEYRING_CONTROL": "/run/user/1/keyring",
        "OPENAI_API_KEY": "openai-key-value", "STRIPE_KEY": "stripe-key-value", "GH_TOKEN": "gh-token-value",
        "DB_PASSWORD": "db-password-value", "AWS_SECRET_ACCESS_KEY": "aws-secret-value"})
    assert set(secrets.known) == {"openai-key-value", "stripe-key-value", "gh-token-value", "db-password-value",
                                  "aws-secret-value"}
    assert secrets.text("Author: Jane Maintainer") == "Author: Jane Maintainer"


def test_the_wire_log_hides_a_secret_in_its_json_escaped_forms() -> None:
    secrets = RunSecrets(['pa"ss\\word-12345', "naïve-secret-1"])
    wire = json.dumps({"out": 'pa"ss\\word-12345'}) + " " + json.dumps({"out": "naïve-secret-1"})  # \\u00ef form
    assert "12345" not in secrets.text(wire) and "secret-1" not in secrets.text(wire)
    assert secrets.text(json.dumps({"out": "naïve-secret-1"}, ensure_ascii=False)) == '{"out": "***"}'


def test_keys_and_lowercase_bearer_are_scrubbed_too() -> None:
    secrets = RunSecrets(["key-as-a-key-1"])
    line = json.dumps({"payload": {"key-as-a-key-1": "v"}, "h": "authorization: bearer abcdefgh12345"}).encode()
    assert json.loads(secrets.json_line(line)) == {"payload": {"***": "v"}, "h": "authorization: bearer ***"}


def test_option_names_are_secret_by_whole_words_only() -> None:
    """`max_tokens`, `author`, `keyboard` are ordinary options: hiding them would make a run's recorded spec (and its
    replay) wrong. Keys, tokens, passwords, `apiKey`, `X-Auth-Token`, `Authorization` are hidden."""
    hidden = ["api_key", "apiKey", "X-Auth-Token", "Authorization", "github_pat", "session_id", "db_passwd",
              "access_token", "AWS_SECRET_ACCESS_KEY", "privateKey", "cookie"]
    shown = ["max_tokens", "author", "keyboard", "tokens_per_minute", "model", "monkey", "authors"]
    redacted = redact({name: "value" for name in hidden + shown})
    assert [name for name in hidden if redacted[name] != "***"] == []
    assert [name for name in shown if redacted[name] != "value"] == []


# --- linear time ----------------------------------------------------------------------------------------------

_ADVERSARIAL = {  # each repeated to 2 MB; the first five made the earlier patterns quadratic
    "a run of letters": "a", "`sk-` repeated": "sk-", "`a://` + letters": None, "a base64 blob": "Qm9vbXN0aWNr+/=",
    "`--key` repeated (an option)": None, "`a://` repeated": "a://", "`a:` repeated": "a:",
    "`Bearer ` repeated": "Bearer ", "`Bearer tok` repeated": "Bearer abcdefgh ", "whitespace": " \t\n",
    "`u://a@` repeated": "u://a@", "`sk-!` repeated": "sk-!",
}
_SCRUB_ALL = """
import json, sys, time
from harness_core.redaction import RunSecrets, redact, scrub
secrets = RunSecrets(["spec-env-secret-4f2a9c"])
size = 2_000_000
for name, unit in json.loads(sys.argv[1]).items():
    if unit is None and name.startswith("`a://`"):
        text = "a://" + "a" * size
    elif unit is None:
        redact({"args": ["--" + "key" * (size // 3) + " ", "v"]})
        print(name, flush=True)
        continue
    else:
        text = unit * (size // len(unit))
    scrub(text + " spec-env-secret-4f2a9c", secrets.known)
    secrets.text(text)
    secrets.json_line(json.dumps({"output": text + " https://u:pw@h/"}).encode())
    print(name, flush=True)
"""


def test_scrubbing_is_linear_in_the_size_of_the_text() -> None:
    """2 MB of each adversarial shape through `scrub`, `RunSecrets.text`, `RunSecrets.json_line` and `redact` (in a
    child, so a hang is killed). Linear patterns take well under a second each; the earlier ones took 56 s for
    100 KB of letters and would take hours here. The deadline is generous on purpose: this checks the complexity,
    not a speed (benchmarks/scrubber.py measures that)."""
    try:
        done = subprocess.run([sys.executable, "-c", _SCRUB_ALL, json.dumps(_ADVERSARIAL)], capture_output=True,
                              text=True, timeout=120)
    except subprocess.TimeoutExpired as exc:
        finished = (exc.stdout or b"").decode() if isinstance(exc.stdout, bytes) else exc.stdout or ""
        pytest.fail(f"scrubbing 2 MB took over 120 s (super-linear); finished only: {finished.splitlines()}")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == list(_ADVERSARIAL)


_PLAIN_URL = re.compile(r"(?P<scheme>[a-z][a-z0-9+.-]*://)[^/\s@]+@", re.IGNORECASE)
_PLAIN_SHAPES = re.compile(
    r"(?<![A-Za-z0-9])(?:sk-[A-Za-z0-9_-]{8,}|gh[pousr]_[A-Za-z0-9]{16,}|github_pat_[A-Za-z0-9_]{16,}"
    r"|xox[abprs]-[A-Za-z0-9-]{8,}|AKIA[0-9A-Z]{16})|(?<=[Bb]earer )[A-Za-z0-9._~+/=-]{8,}")
"""The policy written plainly (and quadratic): what the linear patterns must hide at least."""


def _plainly_scrubbed(text: str) -> str:
    return _PLAIN_SHAPES.sub(REDACTED, _PLAIN_URL.sub(lambda m: m.group("scheme") + REDACTED + "@", text))


def test_the_linear_patterns_hide_what_the_plain_ones_hide() -> None:
    """On 30,000 random strings made of the shapes' pieces, `scrub` gives what the plain patterns give, or hides
    more (where a bearer token starts with a credential shape, the whole token instead of the shape): never a
    character the plain ones hid."""
    pieces = ["a", "Z", "1", "-", "_", ".", "+", ":", "/", "//", "://", "@", " ", "\n", "sk-", "ghp_", "github_pat_",
              "xoxb-", "AKIA", "Bearer ", "bearer ", "x" * 8, "A" * 16, "9" * 16, "é", "*"]
    rng = random.Random(26)
    differ = 0
    for _ in range(30_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 14)))
        plain, linear = _plainly_scrubbed(text), scrub(text)
        if plain == linear:
            continue
        differ += 1
        shown = [linear[j1:j2] for op, _, _, j1, j2 in SequenceMatcher(None, plain, linear, autojunk=False)
                 .get_opcodes() if op != "equal"]
        assert all(set(piece) <= {"*"} for piece in shown), (text, plain, linear)
    assert differ < 1_000  # the rare bearer-and-shape overlap, not a different policy


# --- what `spec.env` hides ------------------------------------------------------------------------------------

def test_spec_env_values_are_secrets_but_the_public_ones() -> None:
    """Every `spec.env` value is a secret, except a variable of the system (`HOME`, `TMPDIR`, `LC_*`, `XDG_*`) and
    one the provider declares public (`ProviderInfo.public_env`: a model name, an endpoint) — never a
    secret-looking name, even declared."""
    env = {"PROBE": "spec-env-value-1", "HOME": "/tmp/harness-offline-ab12/home", "LC_ALL": "en_US.UTF-8",
           "XDG_CONFIG_HOME": "/tmp/harness-offline-ab12/cfg", "AGENT_MODEL": "scripted-model",
           "AGENT_TOKEN": "agent-token-value-1"}
    secrets = RunSecrets.of_run(env, public_env={"AGENT_MODEL", "AGENT_TOKEN"}, environ={})
    assert set(secrets.known) == {"spec-env-value-1", "agent-token-value-1"}
    assert redact_env(env, {"AGENT_MODEL", "AGENT_TOKEN"}) == {**env, "PROBE": REDACTED, "AGENT_TOKEN": REDACTED}
    assert set(RunSecrets.of_run(env, environ={}).known) == {"spec-env-value-1", "agent-token-value-1",
                                                             "scripted-model"}  # undeclared: hidden


@pytest.mark.anyio
async def test_a_providers_public_env_is_shown_in_the_log(runs_dir: Path) -> None:
    """A provider whose offline setup puts its model name in `spec.env` declares it public: the log shows it in
    `run_started` and wherever the agent says it, while the other values stay `***`."""

    class Named(scripted.ScriptedProvider):
        async def run(self, spec: AgentRunSpec, options: ProviderOptions, ctx: RunContext) -> Any:
            await ctx.emit(TextDelta(text=f"model {spec.env['AGENT_MODEL']}, key {spec.env['AGENT_KEY_VALUE']}"))
            return await super().run(spec, options, ctx)

    class Plugin:
        @hookimpl
        def harness_register_providers(self, register: Any) -> None:
            Named.info = ProviderInfo(name="named", version="1", public_env=frozenset({"AGENT_MODEL"}))
            register(Named)

    host = PluginHost.create(entry_points=False, plugins=[("named", Plugin())])
    spec = AgentRunSpec(prompt="go", env={"AGENT_MODEL": "scripted-model", "AGENT_KEY_VALUE": "agent-key-12345"},
                        provider_options={"scenario": "say"})
    with anyio.fail_after(20):
        async with open_run(spec, "named", host=host, runs_dir=runs_dir) as live:
            await live.wait()
    logged = list(read_events(live.log_path))
    assert logged[0].spec["env"] == {"AGENT_MODEL": "scripted-model", "AGENT_KEY_VALUE": REDACTED}  # type: ignore
    assert any(isinstance(e, TextDelta) and e.text == "model scripted-model, key ***" for e in logged)


def test_hidden_values_are_learned_from_what_a_log_masked() -> None:
    """What a replay learns by comparing its event with the run log's: each value the log shows as `***` (8
    characters or more), in strings at any depth; nothing from strings that do not align."""
    original = {"result": {"final_text": "key hpv-4b1f9e27c35d and tok-0123456789 done", "n": 3}, "ts": 1.0}
    logged = {"result": {"final_text": "key *** and *** done", "n": 3}, "ts": 2.0}
    assert hidden_values(original, logged) == {"hpv-4b1f9e27c35d", "tok-0123456789"}
    assert hidden_values(["short abc here"], ["short *** here"]) == set()  # too short to be searched for
    assert hidden_values("a different answer", "the token is ***") == set()
    assert hidden_values("same", "same") == set()


@pytest.mark.parametrize(("value", "shown"), [
    ("http://127.0.0.1:4321", True), ("http://localhost:8080/v1", True), ("http://[::1]:9/v1", True),
    ("https://gw.corp.example/v1/tenant-0123456789abcdef", False), ("https://user@127.0.0.2.example.com", False),
    ("/home/me/.agent", True),
])
def test_a_public_url_is_shown_only_when_it_points_at_this_machine(value: str, shown: bool) -> None:
    """A base URL a provider declares public (for its offline loopback backend) is shown; a gateway's URL (a tenant
    token in its path) is a secret like any other value: `***` in `run_started` and scrubbed wherever it appears."""
    env = {"AGENT_BASE_URL": value}
    assert redact_env(env, {"AGENT_BASE_URL"})["AGENT_BASE_URL"] == (value if shown else REDACTED)
    secrets = RunSecrets.of_run(env, public_env={"AGENT_BASE_URL"}, environ={})
    assert (value in secrets.known) is not shown
