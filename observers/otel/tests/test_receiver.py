"""End to end against a real OTLP receiver: Arize Phoenix (`arize-phoenix` from PyPI, pinned in tox.ini's `otel`
env), started here on 127.0.0.1 with its own working directory, taking OTLP/HTTP at /v1/traces. `harness run
--offline --otel`, a two-turn `harness chat --offline --otel` and an offline `harness batch --otel` export to it from
a subprocess, as a user's would; the trace is then queried back over Phoenix's REST API (`/v1/projects/P/spans`)
and checked against the run's own result. With the real Claude Code installed (`.tools`, scripts/install-clis.sh),
the issue's acceptance too: `harness run --offline --otel -p claude` (and `-p codex-appserver`, `-p gemini`) gives
one `invoke_agent` span with four `execute_tool` children and 600 input tokens.

Without Phoenix installed these tests skip, unless HARNESS_REQUIRE_OTLP_RECEIVER=1 (the `otel` tox env) makes that
a failure.
"""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.otlp_receiver

_STARTUP_DEADLINE = 240.0  # Phoenix creates its database on first start: ~30 s on a loaded 2-core machine
_ARRIVAL_DEADLINE = 30.0
_REPO = Path(__file__).resolve().parents[3]


def _require(what: str) -> None:
    if os.environ.get("HARNESS_REQUIRE_OTLP_RECEIVER") == "1":
        pytest.fail(what)
    pytest.skip(what)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.loads(response.read())


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Phoenix on 127.0.0.1 (a free HTTP port and gRPC port), its data in a temporary directory, no telemetry of its
    own; its base URL. Stopped after the module's tests."""
    if importlib.util.find_spec("phoenix") is None:  # not imported here: it is heavy, and it runs as a server
        _require("arize-phoenix is not installed (the otel tox env installs it)")
    executable = Path(sys.executable).parent / "phoenix"
    if not executable.exists():
        _require(f"no phoenix command beside {sys.executable}")
    work = tmp_path_factory.mktemp("phoenix")
    port = _free_port()
    env = {**os.environ, "PHOENIX_WORKING_DIR": str(work), "PHOENIX_HOST": "127.0.0.1", "PHOENIX_PORT": str(port),
           "PHOENIX_GRPC_PORT": str(_free_port()), "PHOENIX_TELEMETRY_ENABLED": "false"}
    with (work / "server.log").open("wb") as log:
        server = subprocess.Popen([str(executable), "serve"], env=env, stdout=log, stderr=subprocess.STDOUT,
                                  cwd=work)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + _STARTUP_DEADLINE
        while True:
            if server.poll() is not None:
                pytest.fail(f"phoenix exited ({server.returncode}):\n{(work / 'server.log').read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(f"{base}/healthz", timeout=5) as response:
                    if response.status == 200:
                        break
            except (urllib.error.URLError, OSError):
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"phoenix did not answer within {_STARTUP_DEADLINE:g} s:\n"
                            f"{(work / 'server.log').read_text()[-3000:]}")
            time.sleep(0.5)
        yield base
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=10)


def _spans(base: str, project: str, count: int) -> list[dict[str, Any]]:
    """The spans of `project` once at least `count` arrived (Phoenix ingests in the background)."""
    deadline = time.monotonic() + _ARRIVAL_DEADLINE
    found: list[dict[str, Any]] = []
    while time.monotonic() < deadline:
        try:
            found = _get(f"{base}/v1/projects/{project}/spans?limit=1000")["data"]
        except urllib.error.HTTPError as exc:  # 404 until the project's first span is in
            if exc.code != 404:
                raise
        if len(found) >= count:
            time.sleep(1.0)  # and nothing more than expected comes
            return list(_get(f"{base}/v1/projects/{project}/spans?limit=1000")["data"])
        time.sleep(0.5)
    raise AssertionError(f"{len(found)} span(s) of project {project!r} arrived within {_ARRIVAL_DEADLINE:g} s, "
                         f"not {count}: {[s['name'] for s in found]}")


def _harness(base: str, project: str, cwd: Path, *args: str, stdin: str | None = None,
             env: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """`harness ARGS --json` in a subprocess exporting to Phoenix as `project` (metrics off: Phoenix takes traces
    only); its JSON lines."""
    environ = {**os.environ, "OTEL_EXPORTER_OTLP_ENDPOINT": base, "OTEL_METRICS_EXPORTER": "none",
               "OTEL_RESOURCE_ATTRIBUTES": f"openinference.project.name={project}",
               "XDG_CONFIG_HOME": str(cwd / "xdg"), **(env or {})}
    environ.pop("HARNESS_OTEL", None)
    done = subprocess.run([sys.executable, "-m", "harness_core", *args, "--json"], cwd=cwd, env=environ,
                          input=stdin or "", capture_output=True, text=True, timeout=180, check=False)
    assert done.returncode == 0, done.stderr
    assert "could not be exported" not in done.stderr and "Traceback" not in done.stderr, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def _results(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [line["result"] for line in lines if line.get("type") == "done"]


def _children(spans: list[dict[str, Any]], parent: dict[str, Any]) -> list[dict[str, Any]]:
    return sorted((s for s in spans if s["parent_id"] == parent["context"]["span_id"]), key=lambda s: s["start_time"])


def _usage_matches(span: dict[str, Any], result: dict[str, Any]) -> None:
    attributes, usage = span["attributes"], result["usage"]
    assert attributes["gen_ai.usage.input_tokens"] == usage["input_tokens"]
    assert attributes["gen_ai.usage.output_tokens"] == usage["output_tokens"]
    assert attributes["gen_ai.usage.cache_read.input_tokens"] == usage["cached_input_tokens"]


_GENAI_PROVIDER = {"claude": "anthropic", "codex-appserver": "openai", "gemini": "gcp.gemini"}
"""`gen_ai.provider.name` of the providers these tests run, where it is not the provider's own name."""


def _one_run(spans: list[dict[str, Any]], result: dict[str, Any], provider: str, tools: int) -> dict[str, Any]:
    """The run's `invoke_agent` span, checked: a root, the result's run id, usage and status, `tools`
    `execute_tool` children in one trace; returns it."""
    (agent,) = [s for s in spans if s["name"] == f"invoke_agent {provider}"]
    attributes = agent["attributes"]
    assert agent["parent_id"] is None and agent["status_code"] == "UNSET"  # success leaves it unset (the spec)
    assert attributes["gen_ai.operation.name"] == "invoke_agent"
    # the convention's well-known name where the provider declares one (Claude Code: anthropic), else Harness's
    assert attributes["gen_ai.provider.name"] == _GENAI_PROVIDER.get(provider, provider)
    assert attributes["gen_ai.agent.name"] == provider
    assert attributes["harness.run_id"] == result["run_id"]
    assert attributes["harness.status"] == result["status"] == "success"
    assert attributes["gen_ai.conversation.id"] == result["session_id"]
    _usage_matches(agent, result)
    children = _children(spans, agent)
    assert len(children) == tools, [s["name"] for s in children]
    for tool in children:
        assert tool["name"].startswith("execute_tool ")
        assert tool["attributes"]["gen_ai.operation.name"] == "execute_tool"
        assert tool["attributes"]["gen_ai.tool.call.id"]
        assert tool["context"]["trace_id"] == agent["context"]["trace_id"]
    return agent


def test_an_offline_run_arrives_as_one_invoke_agent_span_with_its_tools(phoenix: str, tmp_path: Path) -> None:
    lines = _harness(phoenix, "run", tmp_path, "run", "--offline", "--otel", "-p", "scripted-offline",
                     "--runs-dir", str(tmp_path / "runs"))
    (result,) = _results(lines)
    spans = _spans(phoenix, "run", 5)
    assert len(spans) == 5
    agent = _one_run(spans, result, "scripted-offline", 4)
    assert [t["name"] for t in _children(spans, agent)] == ["execute_tool shell", "execute_tool read",
                                                          "execute_tool edit", "execute_tool write"]
    shell = _children(spans, agent)[0]["attributes"]
    assert shell["harness.tool.command"] == "echo harness-ok" and shell["process.exit.code"] == 0


def test_a_two_turn_chat_arrives_as_one_session_span_over_its_turns(phoenix: str, tmp_path: Path) -> None:
    lines = _harness(phoenix, "chat", tmp_path, "chat", "--offline", "--otel", "-p", "scripted-offline",
                     "--scenario", "tools", "--runs-dir", str(tmp_path / "runs"), stdin="one\ntwo\n")
    results = _results(lines)
    assert len(results) == 2
    spans = _spans(phoenix, "chat", 1 + 2 * 5)
    assert len(spans) == 11
    (session,) = [s for s in spans if s["parent_id"] is None]
    assert session["name"] == "invoke_agent scripted-offline"
    turns = _children(spans, session)
    assert [t["attributes"]["harness.session.turn"] for t in turns] == [0, 1]
    assert [t["attributes"]["harness.run_id"] for t in turns] == [r["run_id"] for r in results]
    conversation = {s["attributes"]["gen_ai.conversation.id"] for s in [session, *turns]}
    assert conversation == {results[0]["session_id"]}
    for turn, result in zip(turns, results, strict=True):
        _usage_matches(turn, result)
        assert len(_children(spans, turn)) == 4
        assert turn["context"]["trace_id"] == session["context"]["trace_id"]


def test_an_offline_batch_arrives_as_one_invoke_workflow_span_over_its_runs(phoenix: str, tmp_path: Path) -> None:
    tasks = tmp_path / "nightly.jsonl"
    tasks.write_text("".join(json.dumps({"id": name, "prompt": name, "scenario": "tools"}) + "\n"
                             for name in ("a", "b")))
    _harness(phoenix, "batch", tmp_path, "batch", str(tasks), "--offline", "--otel", "-p", "scripted-offline",
             "--runs-dir", str(tmp_path / "runs"))
    results = [json.loads(line) for line in (tmp_path / "nightly.results.jsonl").read_text().splitlines()]
    spans = _spans(phoenix, "batch", 1 + 2 * 5)
    assert len(spans) == 11
    (workflow,) = [s for s in spans if s["parent_id"] is None]
    assert workflow["name"] == "invoke_workflow nightly" and workflow["status_code"] == "UNSET"
    assert workflow["attributes"]["gen_ai.operation.name"] == "invoke_workflow"
    assert workflow["attributes"]["harness.batch.succeeded"] == 2
    runs = _children(spans, workflow)
    assert sorted(r["attributes"]["harness.run_id"] for r in runs) == sorted(r["run_id"] for r in results)
    assert all(len(_children(spans, run)) == 4 for run in runs)


_REAL = {"claude": ("harness_claude", "claude"), "codex-appserver": ("harness_codex_appserver", "codex"),
         "gemini": ("harness_acp", "gemini")}
"""The acceptance's agents: (provider package, CLI in .tools/bin)."""


@pytest.mark.parametrize("provider", list(_REAL))
def test_acceptance_real_agents_offline(provider: str, phoenix: str, tmp_path: Path) -> None:
    """The issue's acceptance: the real Claude Code, codex app-server and Gemini CLI on their scripted model backends
    (`harness run --offline --otel -p PROVIDER`): one `invoke_agent` span, four `execute_tool` children, 600 input
    tokens."""
    package, cli = _REAL[provider]
    if importlib.util.find_spec(package) is None:
        _require(f"{package} is not installed")
    tools = Path(os.environ.get("HARNESS_TOOLS_DIR") or _REPO / ".tools")
    if not (tools / "bin" / cli).exists():
        if os.environ.get("HARNESS_REQUIRE_REAL_CLIS") == "1":
            pytest.fail(f"the real {cli} is not in {tools}/bin: run scripts/install-clis.sh")
        pytest.skip(f"the real {cli} is not in {tools}/bin (scripts/install-clis.sh)")
    project = f"real-{provider}"
    lines = _harness(phoenix, project, tmp_path, "run", "--offline", "--otel", "-p", provider,
                     "--runs-dir", str(tmp_path / "runs"),
                     env={"HARNESS_TOOLS_DIR": str(tools), "PATH": f"{tools / 'bin'}{os.pathsep}{os.environ['PATH']}"})
    (result,) = _results(lines)
    spans = _spans(phoenix, project, 5)
    agent = _one_run(spans, result, provider, 4)
    assert agent["attributes"]["gen_ai.usage.input_tokens"] == 600
    assert agent["attributes"]["harness.cli.version"]
