"""Shell completion: what each completable argument offers (provider names and aliases, `-o` keys of the chosen
provider, scenario names, run ids newest first with `last`, session ids, wire logs), the scripts, and that a
completion never fails loudly."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from click.shell_completion import BashComplete

import harness_core.testing.scripted as scripted
from harness_core.cli import cli
from harness_core.offline import SCENARIOS
from harness_core.plugins import PluginHost, reset_host


@pytest.fixture(autouse=True)
def host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    reset_host(PluginHost.create(entry_points=False, plugins=[("scripted", scripted)]))
    monkeypatch.setenv("HARNESS_PROVIDER", "scripted")
    monkeypatch.setenv("HARNESS_RUNS_DIR", str(tmp_path / "runs"))
    yield
    reset_host(None)


def complete(line: str) -> list[str]:
    """What `harness LINE<TAB>` offers (the last word of `line` is the one being completed)."""
    args = line.split(" ")
    return [item.value for item in BashComplete(cli, {}, "harness", "_HARNESS_COMPLETE").get_completions(
        args[:-1], args[-1])]


def _log(runs: Path, run_id: str, *, mtime: float, session: str | None = None, harness_session: str | None = None,
         wire: bool = False) -> None:
    runs.mkdir(exist_ok=True)
    started = {"type": "run_started", "run_id": run_id, "seq": 0, "provider": "scripted",
               "spec": {"prompt": f"prompt of {run_id}"}}
    if harness_session:
        started["session_turn"] = {"session": harness_session, "index": 0, "live": True}
    lines = [started] + ([{"type": "session_started", "session_id": session}] if session else [])
    path = runs / f"{run_id}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    os.utime(path, (mtime, mtime))
    if wire:
        (runs / f"{run_id}.wire.jsonl").write_text("{}\n")


def test_provider_names() -> None:
    assert complete("run -p ") == ["scripted"]
    assert complete("chat --provider scr") == ["scripted"]
    assert complete("providers ") == ["scripted"]
    assert complete("runs --provider s") == ["scripted"]
    assert complete("replay -p x") == []


def test_option_keys_of_the_chosen_provider() -> None:
    assert complete("run -o ") == ["scenario=", "crash=", "ignore_interrupt=", "state_dir=", "cost_usd="]
    assert complete("run -p scripted -o cr") == ["crash="]
    assert complete("chat -o crash=") == ["crash=true", "crash=false"]
    assert complete("run -o scenario=x") == []
    assert complete("run -p nosuch -o ") == []  # an unknown provider completes nothing, quietly


def test_scenario_names() -> None:
    assert complete("run --offline --scenario ") == [*SCENARIOS, "help"]
    assert complete("chat --scenario fail_") == ["fail_500", "fail_401", "fail_429"]


def test_run_ids_newest_first_with_last(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    _log(runs, "20260101T000000-aaaaaaaa", mtime=1_000)
    _log(runs, "20260102T000000-bbbbbbbb", mtime=2_000, wire=True)
    newest_first = ["last", "20260102T000000-bbbbbbbb", "20260101T000000-aaaaaaaa"]
    for command in ("show", "attach", "cancel", "approve"):
        assert complete(f"{command} ") == newest_first
    assert complete("show 20260101") == ["20260101T000000-aaaaaaaa"]
    other = tmp_path / "other"
    _log(other, "20270101T000000-cccccccc", mtime=3_000)
    assert complete(f"show --runs-dir {other} ") == ["last", "20270101T000000-cccccccc"]
    assert complete("replay ") == ["20260102T000000-bbbbbbbb"]  # the runs with a wire log, by id
    assert complete("replay la") == ["last"]
    assert complete(f"replay {runs}/") == [str(runs / "20260102T000000-bbbbbbbb.wire.jsonl")]


def test_session_ids(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    _log(runs, "r1", mtime=1_000, session="agent-old")
    _log(runs, "r2", mtime=2_000, session="agent-new", harness_session="hs-1")
    assert complete("run --resume ") == ["agent-new", "agent-old"]
    assert complete("chat --resume agent-o") == ["agent-old"]
    assert complete("runs --session ") == ["hs-1", "agent-new", "agent-old"]


def test_nothing_to_complete_is_quiet(tmp_path: Path) -> None:
    assert complete("show ") == []  # no runs dir yet: nothing, not even `last`
    (tmp_path / "runs").write_text("not a directory")
    assert complete("show x") == []


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_prints_clicks_script(shell: str) -> None:
    from click.testing import CliRunner

    result = CliRunner().invoke(cli, ["completion", shell], catch_exceptions=False)
    assert result.exit_code == 0
    assert "_HARNESS_COMPLETE" in result.output and f"{shell}_complete" in result.output


def test_completion_without_a_known_shell_says_how() -> None:
    from click.testing import CliRunner

    result = CliRunner(env={"SHELL": "/bin/tcsh"}).invoke(cli, ["completion"])
    assert result.exit_code == 2 and "harness completion bash|zsh|fish" in result.output


def test_the_installed_command_completes_through_the_environment(tmp_path: Path) -> None:
    """As the shell calls it: the real `harness` entry point, `_HARNESS_COMPLETE=bash_complete`."""
    env = {**os.environ, "_HARNESS_COMPLETE": "bash_complete", "COMP_WORDS": "harness sce", "COMP_CWORD": "1"}
    out = subprocess.run([sys.executable, "-m", "harness_core", ], env=env, capture_output=True, text=True,
                         timeout=60, check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["plain,scenarios"]
    env.update(COMP_WORDS="harness run --scenario sa", COMP_CWORD="3")
    out = subprocess.run([sys.executable, "-m", "harness_core"], env=env, capture_output=True, text=True,
                         timeout=60, check=False)
    assert out.stdout.split() == ["plain,say"]


def _config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str) -> Path:
    """A user configuration file holding `text` (and a $HOME of its own: no project file above)."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    path = tmp_path / "xdg" / "harness" / "config.toml"
    path.parent.mkdir(parents=True)
    path.write_text(text)
    return path


def test_completion_follows_the_configured_runs_dir_and_provider(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HARNESS_RUNS_DIR")
    monkeypatch.delenv("HARNESS_PROVIDER")
    configured = tmp_path / "configured-runs"
    _log(configured, "20280101T000000-dddddddd", mtime=4_000, session="agent-conf")
    _config_home(tmp_path, monkeypatch, f'runs_dir = "{configured}"\nprovider = "scripted"\n')
    assert complete("show ") == ["last", "20280101T000000-dddddddd"]
    assert complete("run --resume ") == ["agent-conf"]
    assert complete("run -o cr") == ["crash="]  # the configured provider's options, not the built-in default's
    project = tmp_path / "proj"
    project.mkdir()
    other = tmp_path / "proj-runs"
    _log(other, "20290101T000000-eeeeeeee", mtime=5_000, session="agent-proj")
    (tmp_path / "xdg" / "harness" / "config.toml").write_text(f'trusted_projects = ["{project}"]\n')
    (project / ".harness.toml").write_text(f'runs_dir = "{other}"\n')
    assert complete(f"run -C {project} --resume ") == ["agent-proj"]  # the project file -C names


def test_a_broken_configuration_completes_quietly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capfd: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("HARNESS_RUNS_DIR")
    _config_home(tmp_path, monkeypatch, "runs_dir = \n")
    assert complete("show ") == [] and complete("runs --session ") == []
    assert complete("run -p scr") == ["scripted"]
    out, err = capfd.readouterr()
    assert (out, err) == ("", "")


def _parameters(command: click.Command, path: tuple[str, ...] = ()
                ) -> Iterator[tuple[tuple[str, ...], click.Parameter]]:
    if isinstance(command, click.Group):
        for name, sub in command.commands.items():
            yield from _parameters(sub, (*path, name))
    for param in command.params:
        yield path, param


def _takes_a_path(param: click.Parameter) -> bool:
    metavar = getattr(param, "metavar", None) or ""
    return isinstance(param.type, click.Path) or any(word in metavar for word in ("FILE", "DIR", "REPO", ".json"))


def test_every_file_and_directory_argument_completes_file_names() -> None:
    """`batch TASKS`, `--output-schema FILE`, `--results`, `--cwd`, `--patches`, ...: the shell's own file (or
    directory) names, unless a parameter offers better (the wire logs of `replay`)."""
    checked = []
    for path, param in _parameters(cli):
        if not _takes_a_path(param):
            continue
        words = ["harness", *path] if param.param_type_name == "argument" else ["harness", *path, param.opts[0]]
        if path == ("batch",) and param.param_type_name != "argument":
            words.append("tasks.jsonl")
        items = BashComplete(cli, {}, "harness", "_HARNESS_COMPLETE").get_completions(words[1:], "no-such-name")
        assert items and {item.type for item in items} <= {"file", "dir"}, (path, param.name, items)
        checked.append(f"{' '.join(path)} {param.opts[0]}")
    assert {"batch tasks", "run --output-schema", "chat --output-schema", "batch --results", "run --cwd"} <= set(
        checked), checked


def test_the_shell_gets_file_names_for_a_tasks_file_and_a_schema(tmp_path: Path) -> None:
    env = {**os.environ, "_HARNESS_COMPLETE": "bash_complete", "COMP_WORDS": "harness batch ta", "COMP_CWORD": "2"}
    out = subprocess.run([sys.executable, "-m", "harness_core"], env=env, capture_output=True, text=True,
                         timeout=60, check=False)
    assert out.stdout.split() == ["file,ta"], out.stderr  # the script then lists the files: `compgen -f ta`
    env.update(COMP_WORDS="harness run --output-schema exa", COMP_CWORD="3")
    out = subprocess.run([sys.executable, "-m", "harness_core"], env=env, capture_output=True, text=True,
                         timeout=60, check=False)
    assert out.stdout.split() == ["file,exa"], out.stderr


_SLOW_LOAD = """
import os, pathlib, sys, threading
import harness_core.plugins as plugins

def slow_host(*args, **kwargs):  # a plugin host that takes long to load, as on a loaded machine
    pathlib.Path(os.environ["LOADING_MARK"]).write_text("loading")
    threading.Event().wait(120)
    raise AssertionError("not interrupted")

plugins.get_host = slow_host
from harness_core.cli import main
main()
"""


def test_ctrl_c_during_a_slow_completion_ends_it_without_a_traceback(tmp_path: Path) -> None:
    import signal
    import time

    script = tmp_path / "harness_slow.py"
    script.write_text(_SLOW_LOAD)
    mark = tmp_path / "loading"
    env = {**os.environ, "_HARNESS_COMPLETE": "bash_complete", "COMP_WORDS": "harness run -p ", "COMP_CWORD": "3",
           "LOADING_MARK": str(mark)}
    child = subprocess.Popen([sys.executable, str(script)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while not mark.exists():
            assert time.monotonic() < deadline and child.poll() is None, child.communicate(timeout=60)
            time.sleep(0.02)
        child.send_signal(signal.SIGINT)  # the user gives up on the TAB
        out, err = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(timeout=60)
    assert child.returncode == -signal.SIGINT, err
    assert err == b"" and out == b""  # nothing written into the user's command line
