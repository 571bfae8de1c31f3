"""`harness run --tools`: the README example's tools called by the agent, the load errors as one clear line, and a
background run whose worker imports the same file again. Real `harness` processes; the scripted provider is
found by its entry point (the test env installs `tests/plugins/scripted`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest

from harness_core import AgentRunSpec, InvalidSpecError, jobs, tool
from harness_core.plugins import get_host
from harness_core.store import log_path, read_events, summarize
from harness_core.tools.loader import resolve
from tests.cli.test_streams import _ASKED, play

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "tools.py"
_DEADLINE = 90.0

pytestmark = pytest.mark.skipif("scripted" not in get_host().providers,
                                reason="the scripted provider is not installed as a plugin (tox installs it)")


@pytest.fixture
def harness(runs_dir: Path) -> tuple[list[str], dict[str, str]]:
    env = {**os.environ, "HARNESS_PROVIDER": "scripted", "HARNESS_RUNS_DIR": str(runs_dir), "NO_COLOR": "1"}
    return [sys.executable, "-m", "harness_core"], env


def _harness(harness: tuple[list[str], dict[str, str]], *args: str) -> subprocess.CompletedProcess[str]:
    cmd, env = harness
    return subprocess.run([*cmd, *args], env=env, capture_output=True, text=True, timeout=_DEADLINE,
                          stdin=subprocess.DEVNULL)


def test_run_with_the_example_tools_gets_the_result(harness: tuple[list[str], dict[str, str]],
                                                    runs_dir: Path) -> None:
    done = _harness(harness, "run", "-o", "scenario=tools_mcp", "--tools", str(EXAMPLE), "--json", "add 2 and 3")
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    results = [e for e in events if e["type"] == "tool_result"]
    assert [(r["display"]["kind"], r["display"]["title"], r["output"]) for r in results] == [("mcp", "add", "5")]
    assert events[-1]["result"]["final_text"] == "The tool said 5."


@pytest.mark.parametrize(("ref", "said"), [
    ("nowhere.py", "no such file"),
    ("{example}:subtract", "has no 'subtract'; the tools it has: add, count_lines"),
])
def test_a_bad_tools_reference_is_one_line_and_exit_2_with_nothing_run(harness: tuple[list[str], dict[str, str]],
                                                                      runs_dir: Path, ref: str, said: str) -> None:
    done = _harness(harness, "run", "-o", "scenario=tools_mcp", "--tools", ref.format(example=EXAMPLE), "x")
    assert done.returncode == 2
    assert said in done.stderr and "Traceback" not in done.stderr
    assert not list(runs_dir.glob("*.jsonl")) if runs_dir.exists() else True


def test_a_background_run_imports_the_tools_again_in_its_worker(harness: tuple[list[str], dict[str, str]],
                                                                runs_dir: Path) -> None:
    started = _harness(harness, "run", "--background", "-o", "scenario=tools_mcp", "--tools", f"{EXAMPLE}:add", "x")
    assert started.returncode == 0, started.stderr
    run_id = started.stdout.strip()
    attached = _harness(harness, "attach", run_id, "--json")
    assert attached.returncode == 0, attached.stderr
    events = list(read_events(log_path(runs_dir, run_id)))
    assert [e.output for e in events if e.type == "tool_result"] == ["5"]  # type: ignore[attr-defined]
    assert events[-1].result.final_text == "The tool said 5."  # type: ignore[attr-defined]


@pytest.mark.anyio
async def test_jobs_start_refuses_a_tool_no_worker_can_import(runs_dir: Path) -> None:
    @tool
    def local(a: int) -> int:
        return a

    with pytest.raises(InvalidSpecError, match=r"cannot be imported by another process.*define it at the top level"):
        await jobs.start(AgentRunSpec(prompt="x"), "scripted", runs_dir=runs_dir, tools=[local])
    assert not await anyio.Path(runs_dir).exists()  # nothing started


_PLAIN = """
import anyio


def deploy(service: str) -> str:
    return f"{service} deployed"


async def nap(seconds: float) -> str:
    await anyio.sleep(seconds)
    return "rested"
"""


@pytest.mark.anyio
async def test_jobs_start_keeps_a_call_site_tools_approval_name_and_timeout(runs_dir: Path, tmp_path: Path) -> None:
    plain = tmp_path / "plain_tools.py"
    plain.write_text(_PLAIN)
    given = [tool(requires_approval=True, name="deploy_prod")(resolve(f"{plain}:deploy")),  # type: ignore[arg-type]
             tool(name="short_nap", timeout=0.5)(resolve(f"{plain}:nap"))]  # type: ignore[arg-type]
    steps = [{"mcp": {"server": "harness", "tool": "deploy_prod", "args": {"service": "web"}}},
             {"mcp": {"server": "harness", "tool": "short_nap", "args": {"seconds": 30}}}, {"say": "done"}]
    job = await jobs.start(AgentRunSpec(prompt="x", provider_options={"scenario": {"steps": steps}}), "scripted",
                           runs_dir=runs_dir, tools=given)
    asked, outputs = [], []
    with anyio.fail_after(_DEADLINE):
        async for event in job.events():
            if event.type == "approval_requested":
                asked.append(event.display.title)  # type: ignore[attr-defined]
                job.approve(event.request_id, "deny")  # type: ignore[attr-defined]
            if event.type == "tool_result":
                outputs.append(event.output)  # type: ignore[attr-defined]
        result = await job.wait()
    assert result is not None and result.ok
    assert asked == ["deploy_prod"]
    assert outputs == ["the call to deploy_prod was not approved (deny); do not retry it unchanged",
                       "short_nap did not finish within its timeout of 0.5 s and was cancelled"]


def test_a_background_runs_tool_waits_for_harness_approve(harness: tuple[list[str], dict[str, str]],
                                                          runs_dir: Path, tmp_path: Path) -> None:
    counted = tmp_path / "three.txt"
    counted.write_text("a\nb\nc\n")
    steps = [{"mcp": {"server": "harness", "tool": "count_lines", "args": {"path": str(counted)}}},
             {"say": "lines: {tool_result}"}]
    started = _harness(harness, "run", "--background", "-o", "scenario=" + json.dumps({"steps": steps}),
                       "--tools", str(EXAMPLE), "x")
    assert started.returncode == 0, started.stderr
    run_id = started.stdout.strip()
    path = log_path(runs_dir, run_id)
    try:
        status = _wait_status(path, "waiting for approval", "success", "failed")
        assert status == "waiting for approval"
        listed = _harness(harness, "approve", run_id)
        assert listed.returncode == 0 and f"count_lines(path='{counted}')" in listed.stdout, \
            listed.stdout + listed.stderr
        answered = _harness(harness, "approve", run_id, listed.stdout.split()[0], "allow")
        assert answered.returncode == 0, answered.stderr
        assert _wait_status(path, "success", "failed") == "success"
    finally:  # a failed check must not leave the run waiting for an answer forever
        _harness(harness, "cancel", run_id)
    assert list(read_events(path))[-1].result.final_text == "lines: 3"  # type: ignore[attr-defined]


def test_a_foreground_run_on_a_terminal_asks_about_a_tool_under_the_default_policy(
        harness: tuple[list[str], dict[str, str]], tmp_path: Path) -> None:
    """`requires_approval` asks under every policy: `harness run` on a terminal asks it there, as chat does, with
    the call's arguments, though the default `approval=never` asks nothing of the agent's own actions."""
    counted = tmp_path / "three.txt"
    counted.write_text("a\nb\nc\n")
    steps = [{"mcp": {"server": "harness", "tool": "count_lines", "args": {"path": str(counted)}}},
             {"say": "lines: {tool_result}"}]
    played = play(harness, ["-o", "scenario=" + json.dumps({"steps": steps}), "--tools", str(EXAMPLE), "x"],
                  stdout_tty=True, stderr_tty=True, keys=[(_ASKED, b"y\n")])
    view = played.terminal.decode().replace("\r\n", "\n")
    assert played.status == 0, view
    assert f"[approval] count_lines(path='{counted}') (the tool asks for approval before each call) \u2014 " \
           f"{_ASKED.decode()}y\n" in view
    assert "approved by you" in view and "lines: 3" in view


def test_ctrl_c_at_a_tools_question_reads_as_the_users_interrupt(harness: tuple[list[str], dict[str, str]],
                                                                 tmp_path: Path) -> None:
    steps = [{"mcp": {"server": "harness", "tool": "count_lines", "args": {"path": str(EXAMPLE)}}}, {"say": "done"}]
    played = play(harness, ["-o", "scenario=" + json.dumps({"steps": steps}), "--tools", str(EXAMPLE), "x"],
                  stdout_tty=True, stderr_tty=True, keys=[(_ASKED, b"\x03")])
    view = played.terminal.decode().replace("\r\n", "\n")
    assert played.status == 130, view
    assert "\u2298 count_lines (not run: interrupted)" in view, view
    assert "by runner" not in view and "cut short" not in view


def test_off_a_terminal_the_denial_says_first_what_a_command_line_user_can_do(
        harness: tuple[list[str], dict[str, str]], tmp_path: Path) -> None:
    steps = [{"mcp": {"server": "harness", "tool": "count_lines", "args": {"path": str(EXAMPLE)}}}, {"say": "done"}]
    done = _harness(harness, "run", "-o", "scenario=" + json.dumps({"steps": steps}), "--tools", str(EXAMPLE), "x")
    said = done.stderr.replace("\n", " ")
    assert "denied by default (no one could answer: run it on a terminal to be asked, or start it with `harness run " \
           "--background` and answer with `harness approve`" in said, done.stderr
    assert said.index("harness_approve plugin") < said.index("from Python, pass approver= to run()")
    assert "--approval never" not in said  # it asks under every policy


def _wait_status(path: Path, *wanted: str) -> str:
    deadline = time.monotonic() + _DEADLINE
    while time.monotonic() < deadline:
        status = summarize(path).status
        if status in wanted:
            return status
        time.sleep(0.05)  # a background run's log, read from outside: polled, under a deadline
    raise AssertionError(f"{path.name} never reached {wanted} (now {summarize(path).status})")


def test_chat_serves_the_tools_to_every_turn(harness: tuple[list[str], dict[str, str]], runs_dir: Path) -> None:
    cmd, env = harness
    done = subprocess.run([*cmd, "chat", "-o", "scenario=tools_mcp", "--tools", f"{EXAMPLE}:add", "--json"], env=env,
                          input="first\nsecond\n", capture_output=True, text=True, timeout=_DEADLINE)
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert [e["output"] for e in events if e["type"] == "tool_result"] == ["5", "5"]
    assert [e["result"]["final_text"] for e in events if e["type"] == "done"] == ["The tool said 5."] * 2


_STUCK = '''
import threading

from harness_core import tool


@tool(timeout=1)
def stuck() -> str:
    """Blocks forever, as a read that never returns would."""
    threading.Event().wait()
    return "never"
'''


def test_a_sync_tool_stuck_past_its_timeout_does_not_keep_harness_alive(harness: tuple[list[str], dict[str, str]],
                                                                       tmp_path: Path) -> None:
    tools = tmp_path / "stuck.py"
    tools.write_text(_STUCK)
    scenario = json.dumps({"steps": [{"mcp": {"server": "harness", "tool": "stuck", "args": {}}},
                                     {"say": "{tool_result}"}]})
    cmd, env = harness
    with subprocess.Popen([*cmd, "run", "--json", "-o", f"scenario={scenario}", "--tools", str(tools), "go"],
                          env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True) as proc:
        try:
            assert proc.stdout is not None
            done = None
            for line in proc.stdout:  # the run itself ends: the call's deadline bounds it
                event = json.loads(line)
                if event["type"] == "done":
                    done = event
                    break
            assert done is not None, proc.stderr.read() if proc.stderr else ""
            proc.wait(timeout=20)  # and so does the process, though the thread still blocks
        finally:
            if proc.poll() is None:
                proc.kill()
    assert proc.returncode == 0
    assert done["result"]["final_text"] == (
        "stuck did not finish within its timeout of 1 s; it is still running in the background (a sync function "
        "cannot be stopped) and its result will be dropped")
