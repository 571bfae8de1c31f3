"""The `harness` CLI: through click's runner with the scripted provider injected, and as a real subprocess
(exit statuses, Ctrl-C, `--json`). Async parts run under asyncio and trio."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import jsonschema
import pytest
from click.testing import CliRunner, Result

import harness_core.testing.scripted as scripted
from harness_core.capabilities import Capability, ProviderInfo
from harness_core.cli import OptionSyntaxError, cli, parse_option_pairs
from harness_core.cli.foreground.live import RunRequest, execute
from harness_core.errors import CliNotFoundError
from harness_core.events import Done, RunStatus, parse_event
from harness_core.hookspecs import hookimpl
from harness_core.plugins import PluginHost, reset_host
from harness_core.provider import CliInfo, ProviderOptions
from harness_core.spec import AgentRunSpec
from harness_core.store import read_events

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


class MissingCliProvider(scripted.ScriptedProvider):
    """A provider whose CLI is not installed, and which cannot interrupt."""

    info: ClassVar[ProviderInfo] = ProviderInfo(
        name="missing", version="2.0", capabilities=frozenset({Capability.STREAMING}), cli_name="missing-cli",
        min_cli_version="1.0",
    )
    probed = 0

    async def probe(self, options: ProviderOptions) -> CliInfo:
        type(self).probed += 1
        raise CliNotFoundError("missing-cli not found on PATH; install it with `pip install missing-cli`")


class _MissingPlugin:
    @hookimpl
    def harness_register_providers(self, register: Any) -> None:
        register(MissingCliProvider)


class _BrokenPlugin:
    @hookimpl
    def harness_register_providers(self, register: Any) -> None:
        raise ImportError("no module named 'left_pad'")


def make_host(*extra: tuple[str, Any]) -> PluginHost:
    return PluginHost.create(entry_points=False, plugins=[("scripted", scripted), *extra])


@pytest.fixture(autouse=True)
def scripted_host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[PluginHost]:
    monkeypatch.chdir(tmp_path)  # the scripted provider really applies file steps in the run's cwd
    host = make_host()
    reset_host(host)
    monkeypatch.setenv("HARNESS_PROVIDER", "scripted")
    monkeypatch.setenv("HARNESS_RUNS_DIR", str(tmp_path / "runs"))
    monkeypatch.delenv("HARNESS_LOAD_PLUGINS", raising=False)
    monkeypatch.delenv("HARNESS_DISABLE_PLUGINS", raising=False)
    yield host
    reset_host(None)


@pytest.fixture
def runs_dir(tmp_path: Path) -> Path:
    return tmp_path / "runs"


def invoke(*args: str, input: str | None = None) -> Result:
    return CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)


def only_log(runs_dir: Path) -> Path:
    logs = [p for p in runs_dir.glob("*.jsonl") if not p.name.endswith(".wire.jsonl")]
    assert len(logs) == 1, logs
    return logs[0]


# --- harness run ----------------------------------------------------------------------------------------

def test_run_renders_and_exits_0(runs_dir: Path) -> None:
    result = invoke("run", "do the thing", "-o", "scenario=tools")
    assert result.exit_code == 0, result.output
    assert "[tool] ✓ Running command echo harness-ok (exit 0, 1 ms)" in result.stderr  # stdout is no terminal
    assert result.stderr.splitlines()[-1].startswith("✓ success in ")
    assert result.stdout == "All four tools ran.\n"  # the answer alone
    events = list(read_events(only_log(runs_dir)))
    assert isinstance(events[-1], Done) and events[-1].result.status is RunStatus.SUCCESS


def test_failed_run_exits_1_with_the_error() -> None:
    result = invoke("run", "x", "-o", "scenario=fail_401")
    assert result.exit_code == 1
    assert "[error] auth_failed: " in result.stderr and result.stdout == ""


def test_unknown_provider_exits_2_naming_installed_ones(runs_dir: Path) -> None:
    result = invoke("run", "--provider", "nope", "x")
    assert result.exit_code == 2
    assert result.stderr.startswith("harness: error: no provider named 'nope'; installed providers: scripted")
    assert result.stdout == ""
    assert not runs_dir.exists()
    typo = invoke("run", "--provider", "scriptd", "x")
    assert typo.exit_code == 2 and "did you mean 'scripted'?" in typo.stderr


def test_missing_capability_exits_2_names_providers_with_it_and_starts_nothing(
    scripted_host: PluginHost, runs_dir: Path
) -> None:
    reset_host(make_host(("missing", _MissingPlugin())))
    MissingCliProvider.probed = 0
    result = invoke("run", "--provider", "missing", "--require", "interrupt", "x")
    assert result.exit_code == 2
    assert "does not support 'interrupt'" in result.stderr
    assert "Providers that have it: scripted" in result.stderr
    assert MissingCliProvider.probed == 0 and not runs_dir.exists()
    asked = invoke("run", "--provider", "missing", "--require", "approvals", "x")  # asked for, not implied
    assert "the run requires it (--require" in asked.stderr and "approval policy" not in asked.stderr


def test_unavailable_provider_exits_3() -> None:
    reset_host(make_host(("missing", _MissingPlugin())))
    result = invoke("run", "--provider", "missing", "x")
    assert result.exit_code == 3
    assert result.stderr == (
        "harness: error: missing-cli not found on PATH; install it with `pip install missing-cli`\n"
    )


@pytest.mark.parametrize("prompt", ["   ", ""])
def test_empty_prompt_is_a_readable_usage_error(prompt: str) -> None:
    result = invoke("run", prompt)
    assert result.exit_code == 2
    assert result.stderr.startswith("harness: error: invalid run: prompt: the prompt is empty")


def test_missing_prompt_and_bad_flags_are_usage_errors() -> None:
    assert invoke("run").exit_code == 2
    assert invoke("run", "x", "--sandbox", "yolo").exit_code == 2
    assert invoke("run", "x", "--idle-timeout", "0").exit_code == 2


def test_invalid_provider_option_exits_2_listing_valid_ones() -> None:
    result = invoke("run", "x", "-o", "colour=blue")
    assert result.exit_code == 2
    assert "invalid options for provider 'scripted'" in result.stderr and "scenario" in result.stderr


def test_dash_reads_the_prompt_from_stdin(runs_dir: Path) -> None:
    result = invoke("run", "-", input="fix the bug\nplease\n")
    assert result.exit_code == 0
    started = next(iter(read_events(only_log(runs_dir))))
    assert started.spec["prompt"] == "fix the bug\nplease\n"  # type: ignore[union-attr]


def test_flags_reach_the_spec(runs_dir: Path, tmp_path: Path) -> None:
    result = invoke("run", "x", "--model", "m1", "--cwd", str(tmp_path), "--system-prompt", "be brief",
                    "--sandbox", "read-only", "--resume", "s-1", "--require", "session",
                    "--idle-timeout", "9", "-o", "scenario=say", "--record-wire")
    assert result.exit_code == 0, result.output
    spec = next(iter(read_events(only_log(runs_dir)))).spec  # type: ignore[union-attr]
    assert spec["model"] == "m1" and spec["cwd"] == str(tmp_path) and spec["system_prompt"] == "be brief"
    assert spec["sandbox"] == "read-only" and spec["resume_session"] == "s-1"
    assert spec["requires"] == ["session"]
    assert spec["idle_timeout"] == 9 and spec["approval"] == "never"
    assert "session s-1" in result.stderr


def test_json_prints_exactly_the_run_log_lines(runs_dir: Path) -> None:
    result = invoke("run", "x", "--json", "-o", "scenario=tools")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert [parse_event(line).seq for line in lines] == list(range(len(lines)))
    assert result.stdout.encode() == only_log(runs_dir).read_bytes()


def test_option_missing_equals_is_a_usage_error_saying_the_form() -> None:
    result = invoke("run", "x", "-o", "scenario")
    assert result.exit_code == 2
    assert "expected KEY=VALUE" in result.stderr


@pytest.mark.parametrize(
    ("pairs", "expected"),
    [
        (["a=1"], {"a": "1"}),
        (["config.model_reasoning_effort=high"], {"config": {"model_reasoning_effort": "high"}}),
        (["enable=a", "enable=b", "enable=c"], {"enable": ["a", "b", "c"]}),
        (["x.y=1", "x.z=2", "x.y=3"], {"x": {"y": ["1", "3"], "z": "2"}}),
        (["k=a=b", "e="], {"k": "a=b", "e": ""}),
    ],
)
def test_option_pairs(pairs: list[str], expected: dict[str, Any]) -> None:
    assert parse_option_pairs(pairs) == expected


@pytest.mark.parametrize("pairs", [["novalue"], ["a..b=1"], ["=1"], ["a=1", "a.b=2"], ["a.b=1", "a=2"]])
def test_bad_option_pairs(pairs: list[str]) -> None:
    with pytest.raises(OptionSyntaxError):
        parse_option_pairs(pairs)


# --- execute() under both backends ---------------------------------------------------------------------

@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


class FakeTTY(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.anyio
async def test_status_line_on_a_terminal_while_waiting(runs_dir: Path) -> None:
    out = FakeTTY()
    spec = AgentRunSpec(prompt="x", idle_timeout=0.4, provider_options={"scenario": "stall"})
    status = await execute(RunRequest(spec=spec, runs_dir=runs_dir, environ={"TERM": "xterm"}), out)
    assert status == 1
    text = out.getvalue()
    assert "waiting for model" in text and "\r\x1b[2K" in text
    assert "idle_timeout" in text.splitlines()[-1]


@pytest.mark.anyio
async def test_interactive_approvals(runs_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # command: yes; read: not asked; edit: "maybe" (asked again) then no; write: abort
    monkeypatch.setattr(sys, "stdin", io.StringIO("y\nmaybe\nn\na\n"))
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    spec = AgentRunSpec(prompt="x", approval="on-request", provider_options={"scenario": "tools"})
    out = io.StringIO()
    status = await execute(RunRequest(spec=spec, runs_dir=runs_dir, interactive=True), out)
    assert status == 130
    text = sys.stderr.getvalue()  # type: ignore[attr-defined]  # the view (stdout is no terminal) and questions
    assert "[approval] Running command echo harness-ok — approved by you\n" in text
    assert "[approval] Editing file notes.txt — denied by you\n" in text
    assert "[approval] Writing file new.txt — aborted by you\n" in text
    assert "[tool] ⊘" not in text, "one line per approval outcome: the refusal's line says the action did not run"
    assert text.count("allow? [y]es / [n]o (Enter) / [a]bort") == 4
    assert out.getvalue() == ""  # aborted before any answer
    resolved = [e for e in read_events(only_log(runs_dir)) if e.type == "approval_resolved"]
    assert {e.reason for e in resolved} == {"answered on the terminal"}  # type: ignore[attr-defined]


def test_off_a_terminal_approvals_are_denied_with_a_reason() -> None:
    result = invoke("run", "x", "--approval", "untrusted", "-o", "scenario=tools")
    assert result.exit_code == 0
    assert "denied by default (no one could answer" in result.stderr
    assert "or use --approval never;" in result.stderr  # the agent's own requests: its policy made them


# --- runs, show, schema --------------------------------------------------------------------------------

def test_runs_and_show_on_real_logs(runs_dir: Path) -> None:
    assert "no runs in" in invoke("runs").stdout
    invoke("run", "first prompt", "-o", "scenario=tools")
    invoke("run", "second prompt that is quite a bit longer than the excerpt would allow", "-o",
           "scenario=fail_500")
    table = invoke("runs").stdout.splitlines()
    assert table[0].split() == ["RUN", "PROVIDER", "MODEL", "STATUS", "AGE", "DURATION", "PROMPT"]
    failed_row = next(row for row in table if " failed " in row)
    assert "second prompt" in failed_row and failed_row.endswith("…")
    # both runs may start within the same second, so their order is not asserted
    listed = {r["status"]: r for r in json.loads(invoke("runs", "--json").stdout)}
    assert sorted(listed) == ["failed", "success"]

    ok_id = listed["success"]["run_id"]
    shown = invoke("show", ok_id)
    assert shown.exit_code == 0
    assert "status    success" in shown.stdout and "✓ Editing file notes.txt (1 ms)" in shown.stdout
    assert shown.stdout.rstrip().endswith("All four tools ran.")
    details = json.loads(invoke("show", ok_id, "--json").stdout)
    assert details["usage"]["input_tokens"] == 100 and len(details["tools"]) == 4
    assert details["final_text"] == "All four tools ran." and details["error"] is None
    failed = json.loads(invoke("show", listed["failed"]["run_id"], "--json").stdout)
    assert failed["error"]["code"] == "model_error"


@pytest.mark.parametrize("run_id", ["nope", "../etc/passwd"])
def test_show_unknown_or_invalid_run_exits_2(run_id: str) -> None:
    result = invoke("show", run_id)
    assert result.exit_code == 2 and "harness runs" in result.stderr


def test_schema_events_validates_a_run_log(runs_dir: Path) -> None:
    invoke("run", "x", "-o", "scenario=tools", "--approval", "on-request")
    schema = json.loads(invoke("schema", "events").stdout)
    lines = only_log(runs_dir).read_text().splitlines()
    validator = jsonschema.Draft202012Validator(schema)
    for line in lines:
        validator.validate(json.loads(line))
    assert {json.loads(line)["type"] for line in lines} >= {"approval_requested", "tool_result", "done"}
    with pytest.raises(jsonschema.ValidationError):
        validator.validate({"type": "text_delta"})
    assert json.loads(invoke("schema", "spec").stdout)["title"] == "AgentRunSpec"
    assert json.loads(invoke("schema", "result").stdout)["title"] == "HarnessResult"


# --- providers and doctor -------------------------------------------------------------------------------

def test_providers_lists_availability_and_broken_plugins() -> None:
    reset_host(make_host(("missing", _MissingPlugin()), ("left-pad", _BrokenPlugin())))
    report = json.loads(invoke("providers", "--json").stdout)
    by_name = {p["name"]: p for p in report["providers"]}
    assert by_name["scripted"]["available"] and by_name["scripted"]["default"]
    assert by_name["scripted"]["capabilities"] == sorted(c.value for c in Capability)
    assert not by_name["missing"]["available"] and "not found on PATH" in by_name["missing"]["reason"]
    assert report["broken_plugins"][0]["plugin"] == "left-pad"
    text = invoke("providers").stdout
    assert "scripted (default)" in text and "no: missing-cli not found" in text and "left-pad" in text


def test_doctor_exits_0_when_all_is_well_and_1_otherwise(runs_dir: Path) -> None:
    good = invoke("doctor", "--json")
    assert good.exit_code == 0 and json.loads(good.stdout)["runs_dir"]["writable"]
    reset_host(make_host(("missing", _MissingPlugin())))
    bad = invoke("doctor")
    assert bad.exit_code == 1
    assert "!! missing 2.0" in bad.stdout and "minimum 1.0" in bad.stdout and "1 problem(s)" in bad.stdout


def test_help_and_version() -> None:
    top = invoke("--help").stdout
    for command in ("run", "providers", "doctor", "runs", "show", "schema"):
        assert command in top
        assert invoke(command, "--help").exit_code == 0
    assert invoke("--version").stdout.strip() == "harness, version 0.1.0"


# --- as a real subprocess ------------------------------------------------------------------------------

WRAPPER = textwrap.dedent("""
    import harness_core.testing.scripted as scripted
    from harness_core.plugins import PluginHost, reset_host
    reset_host(PluginHost.create(entry_points=False, plugins=[("scripted", scripted)]))
    from harness_core.cli import main
    main()
""")


@pytest.fixture
def harness_cmd(tmp_path: Path, runs_dir: Path) -> Iterator[tuple[list[str], dict[str, str]]]:
    script = tmp_path / "harness_scripted.py"
    script.write_text(WRAPPER)
    env = {**os.environ, "HARNESS_PROVIDER": "scripted", "HARNESS_RUNS_DIR": str(runs_dir), "NO_COLOR": "1"}
    yield [sys.executable, str(script)], env


def test_subprocess_exit_statuses(harness_cmd: tuple[list[str], dict[str, str]]) -> None:
    cmd, env = harness_cmd
    cases = {
        ("run", "x"): 0,
        ("run", "x", "-o", "scenario=fail_429"): 1,
        ("run", "--provider", "nope", "x"): 2,
    }
    for args, expected in cases.items():
        done = subprocess.run([*cmd, *args], env=env, capture_output=True, text=True, timeout=60)
        assert done.returncode == expected, (args, done.stderr)


def test_subprocess_json_stdout_is_only_events(harness_cmd: tuple[list[str], dict[str, str]],
                                              runs_dir: Path) -> None:
    cmd, env = harness_cmd
    done = subprocess.run([*cmd, "run", "x", "--json", "-vv"], env=env, capture_output=True, timeout=60)
    assert done.returncode == 0
    assert done.stdout == only_log(runs_dir).read_bytes()


@pytest.mark.parametrize("json_lines", [True, False])
def test_a_reader_that_leaves_early_gets_no_traceback(harness_cmd: tuple[list[str], dict[str, str]],
                                                      json_lines: bool) -> None:
    """`harness run … | head -1`: the pipe closes under the writer; as other commands, exit 141 (SIGPIPE's
    status) and not a word more on stderr than the run's own lines."""
    cmd, env = harness_cmd
    scenario = "slow_text" if json_lines else "say"  # the answer alone is written at the end: no need to wait
    args = [*cmd, "run", "x", "-o", f"scenario={scenario}", *(["--json"] if json_lines else [])]
    child = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert child.stdout is not None
    if json_lines:
        assert child.stdout.readline().startswith(b'{"run_id"')  # the first event: then the reader leaves
    child.stdout.close()
    _, err = child.communicate(timeout=90)
    assert child.returncode == 141, err.decode(errors="replace")
    assert b"Traceback" not in err and b"BrokenPipeError" not in err, err.decode(errors="replace")


def streaming(child: subprocess.Popen[str]) -> str:
    """Wait until the live view (stderr: stdout is a pipe) shows the first text delta of `slow_text`."""
    assert child.stderr is not None
    seen = ""
    while not seen.endswith("a slow"):  # blocks at most a delta's delay (1 s) per character
        char = child.stderr.read(1)
        assert char, seen  # the child ended before streaming
        seen += char
    return seen


def test_subprocess_ctrl_c_interrupts_cleanly(harness_cmd: tuple[list[str], dict[str, str]],
                                              runs_dir: Path) -> None:
    cmd, env = harness_cmd
    child = subprocess.Popen([*cmd, "run", "x", "-o", "scenario=slow_text"], env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    try:
        streaming(child)
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
    assert child.returncode == 130, err
    assert "interrupting" in err and err.splitlines()[-1].startswith("■ interrupted in ")  # the view: stderr
    assert out == ""  # no answer
    events = list(read_events(only_log(runs_dir)))
    assert isinstance(events[-1], Done) and events[-1].result.status is RunStatus.INTERRUPTED
    assert [e.seq for e in events] == list(range(len(events)))


@pytest.mark.parametrize("as_json", [False, True])
def test_subprocess_second_ctrl_c_stops_at_once(harness_cmd: tuple[list[str], dict[str, str]],
                                                runs_dir: Path, as_json: bool) -> None:
    cmd, env = harness_cmd
    args = ["run", "x", "-o", "scenario=slow_text", "-o", "ignore_interrupt=true"]
    args += ["--json"] if as_json else []
    child = subprocess.Popen([*cmd, *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
    try:
        assert child.stdout is not None
        first = child.stdout.readline() if as_json else streaming(child)
        while as_json and '"text_delta"' not in first:
            first = child.stdout.readline()
        child.send_signal(signal.SIGINT)
        time.sleep(0.3)  # not synchronisation: the two presses of a human, a moment apart
        started = time.monotonic()
        child.send_signal(signal.SIGINT)
        rest, _ = child.communicate(timeout=30)
        assert time.monotonic() - started < 3  # well before the 5 s interrupt grace
    finally:
        if child.poll() is None:
            child.kill()
    assert child.returncode == 130
    events = list(read_events(only_log(runs_dir)))
    assert isinstance(events[-1], Done) and events[-1].result.status is RunStatus.INTERRUPTED
    if as_json:  # the events the consumer missed after the hard stop are copied from the log
        log_lines = only_log(runs_dir).read_text().splitlines()
        assert rest.splitlines() == log_lines[log_lines.index(first.rstrip("\n")) + 1:]


def test_subprocess_sighup_is_an_interrupt_and_more_signals_never_kill_harness(
        harness_cmd: tuple[list[str], dict[str, str]], runs_dir: Path) -> None:
    """The terminal closing (SIGHUP) interrupts like Ctrl-C; a burst of further signals during the shutdown is
    absorbed: exit 130 with a complete log, never death by the signal."""
    cmd, env = harness_cmd
    args = ["run", "x", "-o", "scenario=slow_text", "-o", "ignore_interrupt=true"]
    child = subprocess.Popen([*cmd, *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        streaming(child)
        child.send_signal(signal.SIGHUP)
        for _ in range(5):
            child.send_signal(signal.SIGINT)
        _, err = child.communicate(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
    assert child.returncode == 130, err
    events = list(read_events(only_log(runs_dir)))
    assert isinstance(events[-1], Done) and events[-1].result.status is RunStatus.INTERRUPTED
    assert [e.seq for e in events] == list(range(len(events)))


def test_python_dash_m_works() -> None:
    for module in ("harness_core.cli", "harness_core"):
        done = subprocess.run([sys.executable, "-m", module, "--help"], capture_output=True, text=True,
                              timeout=60)
        assert done.returncode == 0 and "Usage: harness" in done.stdout


@pytest.mark.parametrize(("args", "status", "says"), [
    (["--provider", "missing", "x"], 3, "missing-cli not found on PATH"),
    (["--provider", "missing", "--require", "approvals", "x"], 2, "the run requires it (--require"),
    (["--provider", "missing", "--approval", "untrusted", "x"], 2, "approval"),
])
def test_background_refusals_exit_at_once_and_start_nothing(args: list[str], status: int, says: str,
                                                            tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`harness run --background` checks what a foreground run checks before any worker starts: a missing CLI
    exits 3, a capability refusal 2, and no worker is launched, no run log written."""
    import harness_core.cli.run.invocation as run_body

    launched: list[object] = []
    monkeypatch.setattr(run_body, "launch", lambda *a, **k: launched.append(a))  # never reached
    reset_host(make_host(("missing", _MissingPlugin())))
    result = invoke("run", "--background", *args)
    assert result.exit_code == status, result.output
    assert says in result.stderr and result.stdout == ""
    assert not launched and not (tmp_path / "runs").exists()
