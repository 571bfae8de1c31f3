"""Tools passed by reference to another process (a background worker, a batch attempt, a Ray node): the tool made
again there is the one given — its name, `requires_approval`, timeout and description — even when decorated where
it is used; what no other process could import to the same function is refused before anything starts."""

from __future__ import annotations

import pickle
import textwrap
from pathlib import Path
from typing import Any

import anyio
import pytest

from harness_core import AgentRunSpec, InvalidSpecError, tool
from harness_core.batch import play_attempt
from harness_core.events import ApprovalRequested, ApprovalResolved, ToolResult
from harness_core.executor import TaskAttempt
from harness_core.jobs.launcher import JobPlan
from harness_core.plugins import PluginHost
from harness_core.store import log_path, read_events
from harness_core.tools.loader import resolve
from harness_core.tools.reference import ToolReference, load_references, references
from harness_core.tools.tool import Tool

PLAIN = """
import anyio


def deploy(service: str) -> str:
    "Deploy SERVICE."
    return f"{service} deployed"


async def nap(seconds: float) -> str:
    await anyio.sleep(seconds)
    return "rested"


class Deployer:
    def run(self, service: str) -> str:
        return service


def make():
    def inner(a: int) -> int:
        return a
    return inner


def rebound(a: int) -> int:
    return a


original = rebound


def rebound(a: int) -> int:  # noqa: F811 - the name now holds another function
    return -a
"""


@pytest.fixture
def plain(tmp_path: Path) -> Path:
    """A file of plain (undecorated) functions, as a user's module would be."""
    path = tmp_path / "plain_tools.py"
    path.write_text(textwrap.dedent(PLAIN))
    return path


def at_call_site(plain: Path) -> list[Tool]:
    """The file's functions decorated where they are used, not where they are defined."""
    return [tool(requires_approval=True, name="deploy_prod", timeout=5, description="Deploy to production.")(
                resolve(f"{plain}:deploy")),  # type: ignore[arg-type]
            tool(name="short_nap", timeout=0.5)(resolve(f"{plain}:nap"))]  # type: ignore[arg-type]


def options(made: Tool) -> tuple[Any, ...]:
    return made.name, made.requires_approval, made.timeout, made.description, made.fn


def test_a_background_runs_plan_carries_each_tools_options_to_the_worker(plain: Path) -> None:
    given = at_call_site(plain)
    plan = JobPlan(spec=AgentRunSpec(prompt="x"), run_id="r1", tools=references(given))
    shipped = JobPlan.model_validate_json(plan.model_dump_json())  # how the worker gets it: JSON over a pipe
    assert shipped.tools[0] == ToolReference(target=f"{plain}:deploy", name="deploy_prod",
                                             description="Deploy to production.", requires_approval=True, timeout=5)
    assert [options(t) for t in load_references(shipped.tools)] == [options(t) for t in given]


def test_a_tool_decorated_at_module_top_level_keeps_its_options_too(tmp_path: Path) -> None:
    path = tmp_path / "decorated.py"
    path.write_text("from harness_core import tool\n\n@tool(requires_approval=True, timeout=7)\n"
                    "def guarded(a: int) -> int:\n    return a\n")
    given = resolve(f"{path}:guarded")
    assert isinstance(given, Tool)
    assert [options(t) for t in load_references(references([given]))] == [options(given)]


@pytest.mark.parametrize(("what", "why"), [
    ("method", r"its module's Deployer\.run is another object"),
    ("inner", r"a lambda or is defined inside a function"),
    ("lambda", r"a lambda or is defined inside a function"),
    ("rebound", r"its module's rebound is another object"),
])
def test_what_no_other_process_can_import_to_the_same_function_is_refused(plain: Path, what: str, why: str) -> None:
    functions = {"method": lambda: resolve(f"{plain}:Deployer")().run,  # type: ignore[operator]
                 "inner": lambda: resolve(f"{plain}:make")(),  # type: ignore[operator]
                 "lambda": lambda: (lambda a: a),
                 "rebound": lambda: resolve(f"{plain}:original")}
    made = tool(name="x")(functions[what]())
    with pytest.raises(InvalidSpecError, match=rf"tool 'x' .* cannot be imported by another process .*: .*{why}.*; "
                                               r"define it at the top level of a module or a \.py file"):
        references([made])


@pytest.mark.anyio
async def test_a_batch_attempt_serves_the_call_site_tool_with_its_approval_name_and_timeout(
        host: PluginHost, runs_dir: Path, plain: Path) -> None:
    steps = [{"mcp": {"server": "harness", "tool": "deploy_prod", "args": {"service": "web"}}},
             {"mcp": {"server": "harness", "tool": "short_nap", "args": {"seconds": 30}}},
             {"say": "done"}]
    attempt = TaskAttempt(task_id="t0", attempt=1, run_id="attempt-1", provider="scripted", runs_dir=runs_dir,
                          spec=AgentRunSpec(prompt="x", provider_options={"scenario": {"steps": steps}}),
                          tools=references(at_call_site(plain)))
    shipped = pickle.loads(pickle.dumps(attempt))  # how an engine ships it to where it plays (Ray)
    with anyio.fail_after(60):
        result = await play_attempt(shipped, anyio.Event(), host=host)  # no approver: the default denies
    assert result.ok, result
    events = list(read_events(log_path(runs_dir, "attempt-1")))
    asked = [e for e in events if isinstance(e, ApprovalRequested)]
    assert [(a.display.title, a.display.raw) for a in asked] == [
        ("deploy_prod", {"server": "harness", "tool": "deploy_prod", "arguments": {"service": "web"}})]
    assert [e.decision.value for e in events if isinstance(e, ApprovalResolved)] == ["deny"]
    assert [e.output for e in events if isinstance(e, ToolResult)] == [
        "the call to deploy_prod was not approved (deny); do not retry it unchanged",
        "short_nap did not finish within its timeout of 0.5 s and was cancelled"]
