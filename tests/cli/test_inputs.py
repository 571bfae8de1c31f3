"""What the CLI reads on the user's behalf is bounded and checked: every numeric option of every command is a
finite number in its range (one parameter type, `Number`); a schema, tasks file, config or stdin prompt that
never ends (`/dev/zero`) or nests 50,000 levels deep is a usage error naming the file, never an out-of-memory or
a traceback. Through click's runner with the scripted provider (fixtures of `tests.cli.test_cli`), and real
`harness` processes where stdin matters."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import click
import pytest
from pydantic import ValidationError

from harness_core import AgentRunSpec
from harness_core.batch import Batch
from harness_core.batch.retry import RetryPolicy
from harness_core.cli import cli
from harness_core.cli.flags.numbers import Number
from tests.cli.test_cli import invoke, scripted_host

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
__all__ = ["scripted_host"]  # the autouse fixture, shared with tests.cli.test_cli

_DEEP = 50_000


def _commands(group: click.Group, prefix: str = "") -> list[tuple[str, click.Command]]:
    found: list[tuple[str, click.Command]] = []
    for name, command in group.commands.items():
        found.append((f"{prefix}{name}", command))
        if isinstance(command, click.Group):
            found += _commands(command, f"{prefix}{name} ")
    return found


def test_every_numeric_option_of_every_command_is_a_checked_number() -> None:
    loose = (click.types.IntParamType, click.types.FloatParamType)
    found = [f"{name} {param.name}" for name, command in _commands(cli) for param in command.params
             if isinstance(param.type, loose) and not getattr(param, "count", False)]  # -vv counts: no value
    assert found == [], f"numeric options that take nan/inf or any value: {found}; use cli.numbers.Number"
    numbers = [f"{name} {param.name}" for name, command in _commands(cli) for param in command.params
               if isinstance(param.type, Number)]
    assert len(numbers) >= 12, numbers


@pytest.mark.parametrize("args", [
    ["run", "x", "--idle-timeout", "nan"], ["run", "x", "--idle-timeout", "-inf"],
    ["run", "x", "--max-cost-usd", "nan"], ["run", "x", "--max-cost-usd", "inf"],
    ["run", "x", "--max-turns", "nan"], ["run", "x", "--max-output-tokens", "1.5"],
    ["chat", "--max-cost-usd", "nan"],
    ["batch", "t.jsonl", "--max-cost-usd", "nan"], ["batch", "t.jsonl", "--max-cost-usd", "inf"],
    ["batch", "t.jsonl", "--retry-backoff", "nan"], ["batch", "t.jsonl", "--retry-backoff", "inf"],
    ["batch", "t.jsonl", "--concurrency", "nan"], ["batch", "t.jsonl", "--retry", "nan"],
    ["cancel", "last", "--timeout", "nan"], ["cancel", "last", "--timeout", "inf"],
    ["replay", "w.wire.jsonl", "--timeout", "nan"], ["replay", "w.wire.jsonl", "--timeout", "inf"],
    ["runs", "--limit", "nan"],
])
def test_nan_and_inf_are_refused_by_every_command(args: list[str], tmp_path: Path) -> None:
    (tmp_path / "t.jsonl").write_text('{"id": "t", "prompt": "x"}\n')
    result = invoke(*args)
    assert result.exit_code == 2, result.output
    assert "is not a finite number: give" in result.stderr or "is not a whole number: give" in result.stderr
    assert list((tmp_path / "runs").glob("*.jsonl")) == [] if (tmp_path / "runs").exists() else True


def test_out_of_range_says_the_range() -> None:
    result = invoke("batch", "t.jsonl", "--retry-backoff", "1e9")
    assert result.exit_code == 2 and "'1e9' is out of range: give at least 0 seconds and at most 3600 seconds" \
        in result.stderr


HUGE = "1" + "0" * 400


@pytest.mark.parametrize(("args", "range_said"), [
    (["batch", "t.jsonl", "--retry", HUGE], "give at least 0 and at most 100"),
    (["batch", "t.jsonl", "--concurrency", HUGE], "give at least 1 and at most 10000"),
    (["batch", "t.jsonl", "--concurrency", "1" + "0" * 18], "give at least 1 and at most 10000"),
    (["runs", "-n", HUGE], "give at least 0 and at most 1e+06"),
    (["run", "x", "--max-turns", "1" + "0" * 310], "give at least 1 and at most 1e+06"),
    (["run", "x", "--max-output-tokens", "9" * 5000], "give at least 1 and at most 1e+08"),
    (["run", "x", "--max-cost-usd", HUGE], "at most 1e+06 USD"),
    (["run", "x", "--idle-timeout", HUGE], "at most 604800 seconds (or `inf` for no idle timeout)"),
    (["cancel", "last", "--timeout", "1e300"], "at most 86400 seconds"),
])
def test_a_huge_number_is_a_usage_error_naming_the_range(args: list[str], range_said: str, tmp_path: Path) -> None:
    """A 400-digit `--retry` once ended in a 39-line OverflowError traceback (a float conversion of the int)."""
    (tmp_path / "t.jsonl").write_text('{"id": "t", "prompt": "x"}\n')
    result = invoke(*args)
    assert result.exit_code == 2, result.output
    assert "is out of range: " + range_said in result.stderr or range_said in result.stderr, result.stderr
    assert "Traceback" not in result.output and len(result.stderr) < 1000


def test_inf_idle_timeout_still_means_none_and_a_word_says_what_to_pass() -> None:
    assert invoke("run", "x", "--idle-timeout", "inf", "-o", "scenario=say").exit_code == 0
    result = invoke("run", "x", "--idle-timeout", "soon")
    assert result.exit_code == 2 and "pass e.g. 300" in result.stderr and "`inf` for no idle timeout" in result.stderr


def test_the_library_refuses_nan_and_inf_too() -> None:
    with pytest.raises(ValueError, match="max_cost_usd must be a finite number"):
        Batch([("t", AgentRunSpec(prompt="x"))], max_cost_usd=math.nan)
    with pytest.raises(ValueError, match="finite"):
        RetryPolicy(backoff=math.inf)
    for field in ("max_cost_usd", "idle_timeout"):
        for value in (math.nan, math.inf):
            with pytest.raises(ValidationError):
                AgentRunSpec(prompt="x", **{field: value})


def _deep_json() -> str:
    return '{"type": "array", "items": ' * _DEEP + '{"type": "string"}' + "}" * _DEEP


@pytest.mark.parametrize("source", ["/dev/zero", "deep"])
def test_an_output_schema_that_never_ends_or_nests_too_deep_is_a_usage_error(source: str, tmp_path: Path) -> None:
    path = source
    if source == "deep":
        (tmp_path / "deep.json").write_text(_deep_json())
        path = str(tmp_path / "deep.json")
    result = invoke("run", "x", "--output-schema", path)
    assert result.exit_code == 2, result.output
    said = " ".join(result.stderr.split())
    wanted = "is a device, not a file" if source == "/dev/zero" else "nests arrays and objects too deep"
    assert wanted in said
    assert path in said and "Traceback" not in said


def test_a_tasks_file_that_never_ends_is_refused_and_a_deep_task_is_named(tmp_path: Path) -> None:
    result = invoke("batch", "/dev/zero")
    assert result.exit_code == 2 and "/dev/zero is a device, not a file" in result.stderr, result.output
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text('{"id": "a", "prompt": "x"}\n' + '{"id": "b", "prompt": "x", "provider_options": '
                     + '{"a": ' * _DEEP + "1" + "}" * _DEEP + "}\n")
    result = invoke("batch", str(tasks))
    assert result.exit_code == 2 and "line 2" in result.stderr and "levels deep; flatten it" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_config_file_that_never_ends_or_nests_too_deep_is_refused(tmp_path: Path) -> None:
    config = tmp_path / ".config" / "harness" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text("# a comment\n" * 200_000)  # a device is no config file (not read); a huge file is refused
    result = invoke("run", "x")
    assert result.exit_code == 2 and "larger than 1 MiB" in result.stderr and str(config) in result.stderr
    config.write_text("x = " + "[" * _DEEP + "]" * _DEEP + "\n")
    result = invoke("run", "x")
    assert result.exit_code == 2 and "nest too deep" in result.stderr, result.output


@pytest.mark.parametrize("args", [["run", "--offline", "--output-schema", "{fifo}", "hi"], ["batch", "{fifo}"],
                                  ["replay", "{fifo}"]])
def test_a_fifo_is_refused_at_once_never_waited_on(args: list[str], tmp_path: Path) -> None:
    """A FIFO nobody writes to once blocked `harness run --output-schema` and `harness batch` for ever, silent."""
    fifo = tmp_path / "f"
    os.mkfifo(fifo)
    env = {**os.environ, "HARNESS_PROVIDER": "scripted", "HARNESS_RUNS_DIR": str(tmp_path / "runs"),
           "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    out = subprocess.run([sys.executable, "-m", "harness_core", *(a.format(fifo=fifo) for a in args)], env=env,
                         capture_output=True, timeout=60, stdin=subprocess.DEVNULL)
    said = " ".join(out.stderr.decode(errors="replace").split())
    assert out.returncode == 2 and f"{fifo} is a FIFO, not a file" in said and "give a regular file" in said, said
    assert "Traceback" not in said


def test_a_prompt_or_chat_line_on_stdin_that_never_ends_is_refused(tmp_path: Path) -> None:
    env = {**os.environ, "HARNESS_PROVIDER": "scripted", "HARNESS_RUNS_DIR": str(tmp_path / "runs")}
    for args in (["run", "-"], ["chat"]):
        with open("/dev/zero", "rb") as zero:
            out = subprocess.run([sys.executable, "-m", "harness_core", *args], stdin=zero, env=env,
                                 capture_output=True, timeout=120)
        said = out.stderr.decode(errors="replace")
        assert out.returncode == 2 and "longer than 64 MiB" in said and "Traceback" not in said, said[-2000:]


def test_a_schema_file_of_sensible_depth_still_works(tmp_path: Path) -> None:
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps({"type": "object", "properties": {"a": {"type": "array", "items": {
        "type": "object", "properties": {"b": {"type": "string"}}}}}}))
    result = invoke("run", "x", "--output-schema", str(schema), "-o", "scenario=say")
    assert "output schema" not in result.stderr or result.exit_code != 2
