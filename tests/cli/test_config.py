"""The configuration files of `harness`: the user's config.toml and a project's .harness.toml, layered under the
command line and the environment; their errors (file and line, exit 2, nothing run); `harness config`; the
short flags -C, -s, -a (as other agent CLIs name them). Runs use the in-process scripted provider (and a second
one, to tell providers apart)."""

from __future__ import annotations

import json
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
from click.testing import CliRunner, Result
from pydantic import Field

import harness_core.testing.scripted as scripted
from harness_core.capabilities import ProviderInfo
from harness_core.cli import cli
from harness_core.events import RunStarted
from harness_core.hookspecs import hookimpl
from harness_core.plugins import DEFAULT_PROVIDER, PluginHost, reset_host
from harness_core.provider import ProviderOptions
from harness_core.store import read_events

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


class OtherProvider(scripted.ScriptedProvider):
    info: ClassVar[ProviderInfo] = scripted.ScriptedProvider.info.model_copy(update={"name": "other"})


class _KeyedOptions(scripted.ScriptedOptions):
    config: dict[str, Any] = Field(default_factory=dict)
    """A free-form table, as some providers' `config` (its secrets masked when shown)."""


class KeyedProvider(scripted.ScriptedProvider):
    info: ClassVar[ProviderInfo] = scripted.ScriptedProvider.info.model_copy(update={"name": "keyed"})
    Options: ClassVar[type[ProviderOptions]] = _KeyedOptions


class _KeyedPlugin:
    @hookimpl
    def harness_register_providers(self, register: Any) -> None:
        register(KeyedProvider)


class _OtherPlugin:
    @hookimpl
    def harness_register_providers(self, register: Any) -> None:
        register(OtherProvider)


@pytest.fixture(autouse=True)
def host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[PluginHost]:
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    for name in ("HARNESS_PROVIDER", "HARNESS_RUNS_DIR", "HARNESS_LOAD_PLUGINS", "HARNESS_DISABLE_PLUGINS"):
        monkeypatch.delenv(name, raising=False)
    host = PluginHost.create(entry_points=False, plugins=[("scripted", scripted), ("other", _OtherPlugin())])
    reset_host(host)
    yield host
    reset_host(None)


def invoke(*args: str, input: str | None = None) -> Result:
    return CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def user_file(tmp_path: Path, text: str) -> Path:
    return write(tmp_path / "xdg" / "harness" / "config.toml", text)


def default_runs(tmp_path: Path) -> Path:
    return tmp_path / "state" / "harness" / "runs"


def started(runs_dir: Path) -> RunStarted:
    logs = [p for p in runs_dir.glob("*.jsonl") if not p.name.endswith(".wire.jsonl")]
    assert len(logs) == 1, (runs_dir, logs)
    first = next(iter(read_events(logs[0])))
    assert isinstance(first, RunStarted)
    return first


def run_ok(*args: str, runs: Path) -> RunStarted:
    result = invoke("run", "x", *args)
    assert result.exit_code == 0, result.output
    return started(runs)


# --- precedence: command line > environment > project > user > default ------------------------------------

@pytest.mark.parametrize("layers", ["default", "user", "project", "env", "cli"])
def test_provider_comes_from_the_highest_layer_that_sets_it(layers: str, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    order = ["default", "user", "project", "env", "cli"]
    upto = order.index(layers)
    args: list[str] = []
    if upto >= 1:  # choosing the provider needs trust in a project file
        user_file(tmp_path, f'provider = "other"\ntrusted_projects = ["{tmp_path / "work"}"]\n')
    if upto >= 2:
        write(tmp_path / "work" / ".harness.toml", 'provider = "scripted"\n')
    if upto >= 3:
        monkeypatch.setenv("HARNESS_PROVIDER", "other")
    if upto >= 4:
        args = ["-p", "scripted"]
    if upto == 0:
        monkeypatch.setenv("HARNESS_PROVIDER", "")  # an empty variable is unset: the built-in default applies
        result = invoke("run", "x")
        assert result.exit_code == 2 and f"no provider named {DEFAULT_PROVIDER!r}" in result.stderr
        return
    expected = {"user": "other", "project": "scripted", "env": "other", "cli": "scripted"}[layers]
    assert run_ok(*args, runs=default_runs(tmp_path)).provider == expected


@pytest.mark.parametrize(("layers", "expected"), [
    ("default", "workspace-write"), ("user", "danger-full-access"), ("project", "read-only"),
    ("cli", "workspace-write"),
])
def test_sandbox_comes_from_the_highest_layer_that_sets_it(layers: str, expected: str, tmp_path: Path) -> None:
    order = ["default", "user", "project", "cli"]
    upto = order.index(layers)
    if upto >= 1:
        user_file(tmp_path, 'sandbox = "danger-full-access"\n')
    if upto >= 2:  # narrower than the user's: no trust needed
        write(tmp_path / "work" / ".harness.toml", 'sandbox = "read-only"\n')
    args = ["-p", "scripted", *(["--sandbox", "workspace-write"] if upto >= 3 else [])]
    assert run_ok(*args, runs=default_runs(tmp_path)).spec["sandbox"] == expected


def test_runs_dir_comes_from_the_highest_layer_that_sets_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert run_ok("-p", "scripted", runs=default_runs(tmp_path))
    user_file(tmp_path, f'runs_dir = "user-runs"\ntrusted_projects = ["{tmp_path / "work"}"]\n')  # relative: from
    # the file's directory
    assert run_ok("-p", "scripted", runs=tmp_path / "xdg" / "harness" / "user-runs")
    write(tmp_path / "work" / ".harness.toml", 'runs_dir = "~/project-runs"\n')  # ~ expanded
    assert run_ok("-p", "scripted", runs=tmp_path / "home" / "project-runs")
    monkeypatch.setenv("HARNESS_RUNS_DIR", str(tmp_path / "env-runs"))
    assert run_ok("-p", "scripted", runs=tmp_path / "env-runs")
    assert run_ok("-p", "scripted", "--runs-dir", str(tmp_path / "cli-runs"), runs=tmp_path / "cli-runs")
    listed = invoke("runs", "--json")  # the commands that read runs use the same order
    assert listed.exit_code == 0 and len(json.loads(listed.stdout)) == 1
    monkeypatch.delenv("HARNESS_RUNS_DIR")
    listed = invoke("show", "last", "--json")
    assert listed.exit_code == 0, listed.output
    assert str(tmp_path / "home" / "project-runs") in listed.stdout


def test_provider_options_layer_key_by_key_under_the_o_options(tmp_path: Path) -> None:
    user_file(tmp_path, f"""\
        trusted_projects = ["{tmp_path / 'work'}"]
        [providers.scripted]
        scenario = "tools"
        cost_usd = 0.5
        [providers.other]
        scenario = "think"
        """)
    runs = default_runs(tmp_path)
    assert run_ok("-p", "scripted", runs=runs).spec["provider_options"] == {"scenario": "tools", "cost_usd": 0.5}
    write(tmp_path / "work" / ".harness.toml", '[providers.scripted]\nscenario = "think"\n')
    (next(runs.glob("*.jsonl"))).unlink()
    assert run_ok("-p", "scripted", runs=runs).spec["provider_options"] == {"scenario": "think", "cost_usd": 0.5}
    (next(runs.glob("*.jsonl"))).unlink()
    options = run_ok("-p", "scripted", "-o", "scenario=say", runs=runs).spec["provider_options"]
    assert options == {"scenario": "say", "cost_usd": 0.5}


def test_a_provider_tables_model_is_that_providers_model(tmp_path: Path) -> None:
    user_file(tmp_path, 'model = "everywhere"\n[providers.scripted]\nmodel = "small"\n')
    runs = default_runs(tmp_path)
    assert run_ok("-p", "scripted", runs=runs).spec["model"] == "small"
    (next(runs.glob("*.jsonl"))).unlink()
    assert run_ok("-p", "other", runs=runs).spec["model"] == "everywhere"
    (next(runs.glob("*.jsonl"))).unlink()
    assert run_ok("-p", "scripted", "-m", "given", runs=runs).spec["model"] == "given"


def test_the_other_settings_reach_the_spec_unless_given(tmp_path: Path) -> None:
    user_file(tmp_path, 'provider = "scripted"\nidle_timeout = 30\neffort = "high"\nmax_turns = 4\n'
                        'approval = "untrusted"\n')
    runs = default_runs(tmp_path)
    spec = run_ok(runs=runs).spec
    assert (spec["idle_timeout"], spec["effort"], spec["max_turns"], spec["approval"]) == (30, "high", 4, "untrusted")
    (next(runs.glob("*.jsonl"))).unlink()
    spec = run_ok("--idle-timeout", "inf", "--effort", "low", "--max-turns", "2", "-a", "never", runs=runs).spec
    assert (spec["idle_timeout"], spec["effort"], spec["max_turns"], spec["approval"]) == (None, "low", 2, "never")


def test_chat_uses_the_configuration_too(tmp_path: Path) -> None:
    user_file(tmp_path, 'provider = "other"\nsandbox = "read-only"\n[providers.other]\nmodel = "m-other"\n')
    out = invoke("chat", input="hello\n")
    assert out.exit_code == 0, out.output
    first = started(default_runs(tmp_path))
    assert (first.provider, first.spec["sandbox"], first.spec["model"]) == ("other", "read-only", "m-other")


# --- finding the project file ---------------------------------------------------------------------------------

def test_the_project_file_is_found_upward_from_cwd(tmp_path: Path) -> None:
    write(tmp_path / "proj" / ".harness.toml", 'model = "from-proj"\n')
    deep = tmp_path / "proj" / "src" / "pkg"
    deep.mkdir(parents=True)
    runs = default_runs(tmp_path)
    assert run_ok("-p", "scripted", "-C", str(deep), runs=runs).spec["model"] == "from-proj"  # from -C, not from
    (next(runs.glob("*.jsonl"))).unlink()  # the current directory (work/), which has no project file above it
    assert run_ok("-p", "scripted", runs=runs).spec["model"] is None


def test_the_search_stops_at_the_home_directory(tmp_path: Path) -> None:
    write(tmp_path / ".harness.toml", 'model = "m"\n')  # above $HOME: someone else's
    inside = tmp_path / "home" / "proj"
    inside.mkdir(parents=True)
    shown = json.loads(invoke("config", "--json", "-C", str(inside)).stdout)
    assert shown["files"][1] == {"scope": "project", "path": None, "found": False, "searched_from": str(inside)}
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    shown = json.loads(invoke("config", "--json", "-C", str(outside)).stdout)
    assert shown["files"][1]["path"] == str(tmp_path / ".harness.toml")


# --- errors: the file and line, what is allowed, exit 2, nothing run --------------------------------------------

@pytest.mark.parametrize(("text", "line", "says"), [
    ('provider = "scripted"\n\nsandbx = "read-only"\n', 3, "unknown key 'sandbx'; did you mean 'sandbox'?"),
    ('# a comment\nsandbox = "yolo"\n', 2, "sandbox = \"yolo\": Input should be 'read-only', 'workspace-write' or"),
    ('max_turns = "3"\n', 1, "max_turns = \"3\": Input should be a valid integer"),
    ('idle_timeout = "soon"\n', 1, "not a number of seconds: give e.g. 300, or \"inf\""),
    ('[providers.scripted]\nscenario = "say"\nmodel = 3\n', 3, "providers.scripted.model = 3: Input should be a "
                                                              "valid string"),
    ('[providers]\nscripted = 3\n', 2, "providers.scripted must be a table ([providers.scripted] and keys below it), "
                                     "not 3"),
    ('provider = "scripted"\nsandbox = \n', 2, "not valid TOML: Invalid value (column 11)"),
    ('a = 1\n[x\n', 2, "not valid TOML"),
])
def test_a_bad_file_is_an_error_naming_file_and_line_before_anything_runs(text: str, line: int, says: str,
                                                                          tmp_path: Path) -> None:
    path = user_file(tmp_path, text)
    for args in (["run", "-p", "scripted", "x"], ["chat", "-p", "scripted"], ["config"], ["runs"]):
        result = invoke(*args, input="hi\n")
        assert result.exit_code == 2, (args, result.output)
        assert result.stderr.startswith(f"harness: error: {path}:{line}: "), result.stderr
        assert says in result.stderr
    assert not default_runs(tmp_path).exists()


def test_an_untrusted_project_file_may_not_widen_what_the_agent_can_do(tmp_path: Path) -> None:
    project = write(tmp_path / "work" / ".harness.toml", 'model = "m"\nsandbox = "danger-full-access"\n')
    result = invoke("run", "-p", "scripted", "x")
    assert result.exit_code == 2
    assert result.stderr.startswith(f"harness: error: {project}:2: an untrusted project file may not choose sandbox = "
                                    "\"danger-full-access\", wider than 'workspace-write' (the default)")
    assert f"trusted_projects = [\"{tmp_path / 'work'}\"]" in result.stderr and "-s danger-full-access" in result.stderr
    write(project, '[providers.scripted.nested]\nbin = "./evil"\n')
    result = invoke("run", "-p", "scripted", "x")
    assert result.exit_code == 2
    assert f"{project}:2: an untrusted project file may not set provider options" in result.stderr
    write(project, 'trusted_projects = ["/"]\n')
    result = invoke("run", "-p", "scripted", "x")
    assert result.exit_code == 2 and "trusted_projects belongs in the user file" in result.stderr
    user_file(tmp_path, f'trusted_projects = ["{tmp_path}"]\n')  # a parent directory trusts what is inside it
    write(project, 'sandbox = "danger-full-access"\n')
    assert run_ok("-p", "scripted", runs=default_runs(tmp_path)).spec["sandbox"] == "danger-full-access"


# --- harness config -------------------------------------------------------------------------------------------

def test_config_shows_each_value_and_where_it_came_from(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    user = user_file(tmp_path, f'sandbox = "read-only"\ntrusted_projects = ["{tmp_path / "work"}"]\n'
                               '[providers.other]\nscenario = "think"\n')
    project = write(tmp_path / "work" / ".harness.toml", '# project\nprovider = "other"\nidle_timeout = "inf"\n')
    monkeypatch.setenv("HARNESS_RUNS_DIR", str(tmp_path / "env-runs"))
    out = invoke("config")
    assert out.exit_code == 0, out.output
    lines = out.stdout.splitlines()
    assert lines[:2] == [f"# user file:    {user}", f"# project file: {project}"]
    by_key = {line.split(" = ")[0]: line for line in lines if " = " in line and not line.startswith("#")}
    assert by_key["provider"].split() == ["provider", "=", '"other"', "#", "project", f"{project}:2"]
    assert by_key["sandbox"].split() == ["sandbox", "=", '"read-only"', "#", "user", f"{user}:1"]
    assert by_key["approval"].split() == ["approval", "=", '"never"', "#", "default"]
    assert by_key["idle_timeout"].split()[-4:] == [f"{project}:3", "(no", "idle", "timeout)"]
    assert by_key["runs_dir"].split() == ["runs_dir", "=", f'"{tmp_path / "env-runs"}"', "#", "$HARNESS_RUNS_DIR"]
    assert "# model: not set" in out.stdout
    assert lines[-2:][0] == "[providers.other]"
    assert lines[-1].split() == ["scenario", "=", '"think"', "#", "user", f"{user}:4"]
    data = json.loads(invoke("config", "--json").stdout)
    assert data["settings"]["provider"] == {"value": "other", "source": f"project {project}:2"}
    assert data["settings"]["idle_timeout"] == {"value": "inf", "source": f"project {project}:3"}
    assert data["settings"]["model"] == {"value": None, "source": "default"}
    assert data["providers"] == {"other": {"scenario": {"value": "think", "source": f"user {user}:4"}}}
    assert [f["found"] for f in data["files"]] == [True, True]


def test_config_without_files_shows_the_defaults_and_the_files_looked_for(tmp_path: Path) -> None:
    out = invoke("config")
    assert out.exit_code == 0
    assert f"# user file:    {tmp_path / 'xdg' / 'harness' / 'config.toml'} (not found)" in out.stdout
    assert f"# project file: none (no .harness.toml in {tmp_path / 'work'} or above)" in out.stdout
    assert f'provider = "{DEFAULT_PROVIDER}"' in out.stdout and f'"{default_runs(tmp_path)}"' in out.stdout


def test_config_path_prints_both_files(tmp_path: Path) -> None:
    user = tmp_path / "xdg" / "harness" / "config.toml"
    out = invoke("config", "path")
    assert (out.exit_code, out.stdout.splitlines()) == (0, [
        f"user:    {user} (not found)",
        f"project: none found, searched from {tmp_path / 'work'} up to /"])  # work/ is not below $HOME
    inside = tmp_path / "home" / "src"
    inside.mkdir(parents=True)
    out = invoke("config", "path", "-C", str(inside))
    assert out.stdout.splitlines()[1] == f"project: none found, searched from {inside} up to {tmp_path / 'home'}"
    missing = invoke("config", "path", "project")
    assert missing.exit_code == 1 and f"create one: $EDITOR {tmp_path / 'work' / '.harness.toml'}" in missing.stderr
    user_file(tmp_path, "")
    project = write(tmp_path / "work" / ".harness.toml", "")
    out = invoke("config", "-C", str(tmp_path / "work"), "path")  # the group's -C counts too
    assert out.stdout.splitlines() == [f"user:    {user}", f"project: {project}"]
    assert invoke("config", "path", "user").stdout == f"{user}\n"  # for $EDITOR "$(harness config path user)"
    assert invoke("config", "path", "project").stdout == f"{project}\n"
    assert invoke("config", "--json", "path").exit_code == 2


_SERVERS = """\
    [mcp_servers.everything]
    command = "mcp-server-everything"
    args = ["stdio", "--api-key", "sk-flagvalue12345", "--seed=s3cret-env-value"]
    env = { EVERYTHING_TOKEN = "s3cret-env-value", LEVEL = "debug" }

    [mcp_servers.docs]
    url = "https://me:pw-in-url@127.0.0.1:8000/mcp"
    headers = { Authorization = "Bearer abcdefghijkl" }
"""
_SECRETS = ("sk-flagvalue12345", "s3cret-env-value", "debug", "pw-in-url", "abcdefghijkl")


def test_config_lists_each_mcp_server_with_its_file_and_line_and_its_secrets_masked(tmp_path: Path) -> None:
    user = user_file(tmp_path, _SERVERS)
    project = write(tmp_path / "work" / ".harness.toml", '[mcp_servers.local]\ncommand = "./run-me.sh"\ncwd = "t"\n')
    out = invoke("config")
    assert out.exit_code == 0, out.output
    shown = out.stdout.split("# MCP servers (env and header values masked)")[1].split("[providers.")[0]
    assert [line.split("   # ") for line in shown.splitlines() if line.lstrip("# ").startswith("[")] == [
        ["[mcp_servers.everything]", f"user {user}:1"], ["[mcp_servers.docs]", f"user {user}:6"],
        ["# [mcp_servers.local]", f"project {project}:1"]]  # commented out: not applied
    assert ('args = ["stdio", "--api-key", "***", "--seed=***"]\n'
            'env = { EVERYTHING_TOKEN = "***", LEVEL = "***" }\n') in shown
    assert 'url = "https://***@127.0.0.1:8000/mcp"\nheaders = { Authorization = "***" }\n' in shown
    assert f'# cwd = "{tmp_path / "work" / "t"}"' in shown
    refused = next(line for line in shown.splitlines() if line.startswith("# refused"))
    assert refused.startswith("# refused, and a run stops on it: an untrusted project file may not add MCP servers")
    assert f'trusted_projects = ["{tmp_path / "work"}"]' in refused and "--mcp-server local=" in refused
    assert tomllib.loads(out.stdout)["mcp_servers"].keys() == {"everything", "docs"}  # still TOML
    assert "# not applied" not in out.stdout  # the server's refusal is shown with it, not twice
    data = json.loads(invoke("config", "--json").stdout)
    assert [(s["name"], s["source"], s["status"]) for s in data["mcp_servers"]] == [
        ("everything", f"user {user}:1", "in_force"), ("docs", f"user {user}:6", "in_force"),
        ("local", f"project {project}:1", "refused")]
    everything, docs, local = data["mcp_servers"]
    assert everything["env"] == {"EVERYTHING_TOKEN": "***", "LEVEL": "***"} and everything["transport"] == "stdio"
    assert docs["headers"] == {"Authorization": "***"} and docs["url"] == "https://***@127.0.0.1:8000/mcp"
    assert local["refused"].startswith("an untrusted project file may not add MCP servers")
    for secret in _SECRETS:
        assert secret not in out.stdout and secret not in json.dumps(data["mcp_servers"]), secret


def test_config_masks_the_secrets_of_provider_options(tmp_path: Path) -> None:
    reset_host(PluginHost.create(entry_points=False, plugins=[("scripted", scripted), ("keyed", _KeyedPlugin())]))
    user_file(tmp_path, '[providers.keyed]\nconfig.mcp_servers.x.env.API_TOKEN = "sekrit-value-123"\n'
                        'config.model_provider = "scripted"\n')
    out = invoke("config")
    assert 'config.mcp_servers.x.env.API_TOKEN = "***"' in out.stdout
    assert 'config.model_provider = "scripted"' in out.stdout
    data = json.loads(invoke("config", "--json").stdout)["providers"]["keyed"]
    assert data["config.mcp_servers.x.env.API_TOKEN"]["value"] == "***"
    assert "sekrit-value-123" not in out.stdout + json.dumps(data)


def test_config_shows_a_trusted_projects_server_in_force_over_the_users_of_that_name(tmp_path: Path) -> None:
    user = user_file(tmp_path, f'trusted_projects = ["{tmp_path / "work"}"]\n' + textwrap.dedent(_SERVERS))
    project = write(tmp_path / "work" / ".harness.toml", '[mcp_servers.docs]\nurl = "http://127.0.0.1:9/sse"\n'
                                                         'transport = "sse"\n')
    lines = invoke("config").stdout.splitlines()
    assert f"[mcp_servers.docs]   # project {project}:1 (trusted project)" in lines
    replaced = lines.index(f"# [mcp_servers.docs]   # user {user}:7")
    assert lines[replaced + 1: replaced + 4] == ['# url = "https://***@127.0.0.1:8000/mcp"',
                                                 '# headers = { Authorization = "***" }',
                                                 f"# replaced by project {project}:1"]
    assert 'url = "http://127.0.0.1:9/sse"' in lines and 'transport = "sse"' in lines
    data = json.loads(invoke("config", "--json").stdout)
    assert [(s["name"], s["status"], s.get("replaced_by")) for s in data["mcp_servers"]] == [
        ("everything", "in_force", None), ("docs", "replaced", f"project {project}:1"), ("docs", "in_force", None)]


# --- short flags as other agent CLIs have them ----------------------------------------------------------------

def test_short_flags_c_s_a_reach_the_spec(tmp_path: Path) -> None:
    spec = run_ok("-p", "scripted", "-C", str(tmp_path), "-s", "read-only", "-a", "on-request",
                  runs=default_runs(tmp_path)).spec
    assert (spec["cwd"], spec["sandbox"], spec["approval"]) == (str(tmp_path), "read-only", "on-request")
    out = invoke("chat", "-p", "scripted", "-C", str(tmp_path), "-s", "danger-full-access", "-a", "untrusted",
                 "--runs-dir", str(tmp_path / "chat-runs"), input="hi\n")
    assert out.exit_code == 0, out.output
    spec = started(tmp_path / "chat-runs").spec
    assert (spec["sandbox"], spec["approval"]) == ("danger-full-access", "untrusted")


# --- trust: what an untrusted project file may set ----------------------------------------------------------

def test_an_untrusted_project_file_may_set_how_the_agent_works(tmp_path: Path) -> None:
    write(tmp_path / "work" / ".harness.toml", """\
        model = "m"
        effort = "high"
        max_turns = 3
        max_output_tokens = 100
        idle_timeout = 60
        sandbox = "read-only"
        approval = "untrusted"
        [providers.scripted]
        model = "m-scripted"
        """)
    spec = run_ok("-p", "scripted", runs=default_runs(tmp_path)).spec
    assert (spec["model"], spec["effort"], spec["max_turns"], spec["max_output_tokens"], spec["idle_timeout"],
            spec["sandbox"], spec["approval"]) == ("m-scripted", "high", 3, 100, 60, "read-only", "untrusted")


@pytest.mark.parametrize(("user", "project", "says", "flag"), [
    ("", 'provider = "other"', "may not set provider (it chooses which agent CLI runs): pass -p NAME",
     ["-p", "scripted"]),
    ("", 'runs_dir = "/elsewhere"', "may not set runs_dir (it chooses where run logs are written): pass --runs-dir",
     ["--runs-dir", "RUNS"]),
    ("", "max_cost_usd = 100", "may not set max_cost_usd (it can raise your spending limit): pass --max-cost-usd",
     ["--max-cost-usd", "100"]),
    ('sandbox = "read-only"', 'sandbox = "workspace-write"',
     "may not choose sandbox = \"workspace-write\", wider than 'read-only' (your {user}): pass -s workspace-write",
     ["-s", "workspace-write"]),
    ('approval = "untrusted"', 'approval = "on-request"',
     "may not choose approval = \"on-request\", wider than 'untrusted' (your {user}): pass -a on-request",
     ["-a", "on-request"]),
    ('approval = "on-request"', 'approval = "never"', "wider than 'on-request'", ["-a", "never"]),
])
def test_an_untrusted_project_file_may_not_widen_or_redirect(user: str, project: str, says: str, flag: list[str],
                                                              tmp_path: Path) -> None:
    user_path = user_file(tmp_path, user + "\n" + ('provider = "scripted"\n' if "provider" not in user else ""))
    path = write(tmp_path / "work" / ".harness.toml", f"# the project's\n{project}\n")
    result = invoke("run", "x")
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"harness: error: {path}:2: an untrusted project file ")
    assert says.format(user=user_path) in result.stderr
    assert f'trusted_projects = ["{tmp_path / "work"}"]' in result.stderr
    assert not default_runs(tmp_path).exists()
    given = [str(tmp_path / "runs") if word == "RUNS" else word for word in flag]
    assert invoke("run", *given, "x").exit_code == 0  # the command line sets it itself: the file's is not used
    shown = invoke("config").stdout
    assert "# not applied (a run fails on these unless its command line sets them itself):" in shown
    user_file(tmp_path, f'{user}\nprovider = "scripted"\ntrusted_projects = ["{tmp_path / "work"}"]\n')
    assert invoke("config").exit_code == 0 and "not applied" not in invoke("config").stdout  # trusted: it may


def test_every_setting_has_a_trust_rule() -> None:
    from harness_core.cli.settings import loader as _config

    ruled = {*_config._UNTRUSTED, *_config._NEEDS_TRUST, *_config._WIDER, *_config._TURNS_ON}
    assert ruled == set(_config.KEYS)


def test_a_project_file_that_is_not_the_users_own_is_ignored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    shared = tmp_path / "shared"
    project = write(shared / ".harness.toml", 'model = "theirs"\n')
    shared.chmod(0o777)  # like /tmp: anyone may have put the file there
    result = invoke("run", "-p", "scripted", "-C", str(shared), "x")
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines()[0] == (
        f"harness: warning: ignoring {project}: its directory {shared} is writable by every user; if you trust it, "
        f"add its directory to trusted_projects in {tmp_path / 'xdg' / 'harness' / 'config.toml'}")
    assert started(default_runs(tmp_path)).spec["model"] is None
    shown = json.loads(invoke("config", "--json", "-C", str(shared)).stdout)
    assert shown["files"][1]["ignored"] == f"its directory {shared} is writable by every user"
    shared.chmod(0o755)
    real = os.geteuid()
    monkeypatch.setattr(os, "geteuid", lambda: real + 1)  # the file is now someone else's
    out = invoke("config", "-C", str(shared))
    assert f"# project file: {project} (ignored: it is owned by another user (uid {real}))" in out.stdout
    assert "# model: not set" in out.stdout and "harness: warning: ignoring" in out.stderr
    user_file(tmp_path, f'trusted_projects = ["{shared}"]\n')  # trusted: used, as git's safe.directory
    out = invoke("config", "-C", str(shared))
    assert 'model = "theirs"' in out.stdout and out.stderr == ""


# --- values checked against the installed providers ---------------------------------------------------------

def test_a_configured_provider_that_is_not_installed_names_file_and_line(tmp_path: Path) -> None:
    path = user_file(tmp_path, '# mine\nprovider = "scriptd"\n')
    for args in (["run", "x"], ["chat"], ["config"]):
        result = invoke(*args, input="hi\n")
        assert result.exit_code == 2, (args, result.output)
        assert result.stderr.startswith(f"harness: error: {path}:2: provider = \"scriptd\": no provider named "
                                        "'scriptd' is installed; did you mean 'scripted'? installed: other, scripted")
    assert run_ok("-p", "other", runs=default_runs(tmp_path)).provider == "other"  # the file's value is not used


def test_provider_options_in_a_file_are_checked_against_the_provider(tmp_path: Path) -> None:
    path = user_file(tmp_path, '[providers.scripted]\nscenario = "say"\nscenaro = "x"\n')
    result = invoke("run", "-p", "scripted", "x")
    assert result.exit_code == 2
    assert result.stderr.startswith(f"harness: error: {path}:3: providers.scripted.scenaro: scripted has no option "
                                    "'scenaro'; did you mean 'scenario'? [providers.scripted] takes `model` and "
                                    "scripted's options: ")
    assert " -o " not in result.stderr and "on the command line" not in result.stderr
    assert run_ok("-p", "other", runs=default_runs(tmp_path)).provider == "other"  # another provider's run: unused
    user_file(tmp_path, '[providers.scripted]\nscenario = "say"\ncrash = "often"\n')
    result = invoke("run", "-p", "scripted", "x")
    assert result.exit_code == 2 and f"{path}:3: providers.scripted.crash = \"often\": " in result.stderr
    assert invoke("config").exit_code == 2  # harness config checks every table


def test_a_typo_of_model_in_a_provider_table_gets_did_you_mean_model(tmp_path: Path) -> None:
    path = user_file(tmp_path, '[providers.scripted]\nmodle = "m2"\n')
    result = invoke("run", "-p", "scripted", "x")
    assert result.exit_code == 2
    assert result.stderr.startswith(f"harness: error: {path}:2: providers.scripted.modle: scripted has no option "
                                    "'modle'; did you mean 'model'? [providers.scripted] takes `model` and "), \
        result.stderr
    user_file(tmp_path, '[providers.scripted]\nmodel = "m2"\n')
    assert run_ok("-p", "scripted", runs=default_runs(tmp_path)).spec["model"] == "m2"  # `model`: a key of the table


def test_a_table_for_a_provider_not_installed_is_a_warning(tmp_path: Path) -> None:
    path = user_file(tmp_path, '[providers.gone-agent]\nmodel = "sonnet"\n')
    result = invoke("run", "-p", "scripted", "x")
    assert result.exit_code == 0, result.output
    assert result.stderr.startswith(f"harness: warning: {path}:2: [providers.gone-agent] is not used: no "
                                    "provider named 'gone-agent' is installed")
    assert invoke("config").exit_code == 0


# --- otel = true: --otel from the files ---------------------------------------------------------------------

class _EntryPoint:
    name = "otel"


@pytest.fixture
def otel_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    """harness-otel as if installed (its entry point listed; the host here loads no entry point), `HARNESS_OTEL`
    unset (restored after the test, which a run may set)."""
    monkeypatch.setattr("harness_core.cli.flags.otel_plugin.metadata.entry_points", lambda group: [_EntryPoint()])
    monkeypatch.setenv("HARNESS_OTEL", "")


@pytest.mark.usefixtures("otel_installed")
def test_otel_true_in_a_file_turns_tracing_on_as_the_flag_does(tmp_path: Path) -> None:
    import os

    user = user_file(tmp_path, "otel = true\n")
    shown = [line.split() for line in invoke("config").stdout.splitlines() if line.startswith("otel = ")]
    assert shown == [["otel", "=", "true", "#", "user", f"{user}:1"]]
    run_ok("-p", "scripted", runs=default_runs(tmp_path))
    assert os.environ["HARNESS_OTEL"] == "1"  # what the observer reads when the plugin host loads it
    assert json.loads(invoke("config", "--json").stdout)["settings"]["otel"] == {"value": True,
                                                                                 "source": "$HARNESS_OTEL"}


@pytest.mark.usefixtures("otel_installed")
def test_the_environment_wins_over_otel_in_a_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    user_file(tmp_path, "otel = true\n")
    monkeypatch.setenv("HARNESS_OTEL", "0")
    assert "otel = false" in invoke("config").stdout and "# $HARNESS_OTEL" in invoke("config").stdout
    run_ok("-p", "scripted", runs=default_runs(tmp_path))
    assert os.environ["HARNESS_OTEL"] == "0"


@pytest.mark.usefixtures("otel_installed")
def test_otel_on_under_otel_sdk_disabled_says_no_run_is_traced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`OTEL_SDK_DISABLED=true` turns every OpenTelemetry SDK off, the observer with it: `harness config` says so
    beside an `otel = true`, rather than show tracing on."""
    user_file(tmp_path, "otel = true\n")
    monkeypatch.setenv("OTEL_SDK_DISABLED", "TRUE")
    (line,) = [line for line in invoke("config").stdout.splitlines() if line.startswith("otel = ")]
    assert line.endswith(", but OTEL_SDK_DISABLED=TRUE keeps it off: runs are not traced"), line
    assert json.loads(invoke("config", "--json").stdout)["settings"]["otel"]["off_by"] == "OTEL_SDK_DISABLED=TRUE"
    monkeypatch.setenv("OTEL_SDK_DISABLED", "false")
    (line,) = [line for line in invoke("config").stdout.splitlines() if line.startswith("otel = ")]
    assert "keeps it off" not in line
    assert "off_by" not in json.loads(invoke("config", "--json").stdout)["settings"]["otel"]


def test_otel_is_off_by_default_and_a_file_without_the_plugin_only_warns(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    monkeypatch.setattr("harness_core.cli.flags.otel_plugin.metadata.entry_points", lambda group: [])
    monkeypatch.setenv("HARNESS_OTEL", "")
    assert "otel = false" in invoke("config").stdout
    user = user_file(tmp_path, "otel = true\n")
    result = invoke("run", "-p", "scripted", "x")
    assert result.exit_code == 0, result.output
    assert f"harness: warning: {user}:1: otel = true, but the harness-otel plugin is not installed" in result.stderr
    assert os.environ["HARNESS_OTEL"] == ""


@pytest.mark.usefixtures("otel_installed")
def test_an_untrusted_project_file_may_turn_otel_off_not_on(tmp_path: Path) -> None:
    import os

    user_file(tmp_path, 'provider = "scripted"\n')
    path = write(tmp_path / "work" / ".harness.toml", "otel = false\n")
    assert invoke("run", "x").exit_code == 0 and os.environ["HARNESS_OTEL"] == ""
    write(path, "otel = true\n")
    result = invoke("run", "x")
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"harness: error: {path}:1: an untrusted project file may not turn on otel (it "
                                    "sends every run's trace to the OTLP endpoint): pass --otel, or to let")
    assert "or run with HARNESS_OTEL=0 to keep it off" in result.stderr
    assert os.environ["HARNESS_OTEL"] == ""


@pytest.mark.usefixtures("otel_installed")
def test_otel_true_in_a_file_turns_tracing_on_for_a_batch_too(tmp_path: Path) -> None:
    import os

    user_file(tmp_path, "otel = true\n")
    tasks = write(tmp_path / "work" / "tasks.jsonl", '{"id": "a", "prompt": "x"}\n')
    result = invoke("batch", str(tasks), "-p", "scripted")
    assert result.exit_code == 0, result.output
    assert os.environ["HARNESS_OTEL"] == "1"
