"""harness-otel on offline runs of every named provider: the real pinned CLI (`.tools`, scripts/install-clis.sh) on
its scripted model backend, in process, with the SDK's in-memory span exporter. Per provider: one `invoke_agent`
span with an `execute_tool` child per tool action of the run's log (parent/child, one trace, times inside the run),
the attributes the GenAI conventions require, usage equal to the run's result, and no secret of the run's
environment in any span, content capture on. (That each agent gets its run span as parent: the providers' own
real-CLI tests, which read it where the agent does.)

A provider whose package or CLI is missing skips, unless HARNESS_REQUIRE_REAL_CLIS=1 (the `otel` tox env)."""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import anyio
import pytest
from harness_core import AgentRunSpec, HarnessResult, ToolUse, run
from harness_core.offline import offline_workspace
from harness_core.plugins import ENV_DISABLE, PluginHost
from harness_core.spans import run_spans
from harness_core.store import read_events
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import SpanKind, StatusCode

from .test_observer import Telemetry

_REPO = Path(__file__).resolve().parents[3]
SECRET = "otel-secret-7d41c9e2b8a0"
"""A value of the run's own environment (`spec.env`): the redaction policy hides it wherever it shows up."""

PROVIDERS = {
    # provider: (its package, its CLI in .tools/bin, gen_ai.provider.name)
    "claude": ("harness_claude", "claude", "anthropic"),
    "codex-appserver": ("harness_codex_appserver", "codex", "openai"),
    "codex-exec": ("harness_codex_exec", "codex", "openai"),
    "gemini": ("harness_acp", "gemini", "gcp.gemini"),
    "qwen": ("harness_acp", "qwen", "qwen"),
    "codex-acp": ("harness_acp", "codex-acp", "openai"),
    "claude-acp": ("harness_acp", "claude-agent-acp", "anthropic"),
}
NO_USAGE = {"codex-acp"}
"""Agents that report no tokens (codex-acp's prompt result is only its stop reason: providers/acp/docs/adapters.md):
their spans carry the result's zeros."""


def _tools_dir() -> Path:
    return Path(os.environ.get("HARNESS_TOOLS_DIR") or _REPO / ".tools")


def _require(provider: str) -> None:
    package, cli, _ = PROVIDERS[provider]
    missing = None
    if importlib.util.find_spec(package) is None:
        missing = f"{package} is not installed (the otel tox env installs every provider)"
    elif not (_tools_dir() / "bin" / cli).exists():
        missing = f"the real {cli} is not in {_tools_dir()}/bin: run scripts/install-clis.sh"
    if missing is not None:
        if os.environ.get("HARNESS_REQUIRE_REAL_CLIS") == "1":
            pytest.fail(missing)
        pytest.skip(missing)


def _offline_run(provider: str, telemetry: Telemetry, tmp_path: Path) -> HarnessResult:
    """`harness run --offline -p PROVIDER` in process, the observer under test the only `otel` plugin."""
    host = PluginHost.create(env={**os.environ, ENV_DISABLE: "otel"}, plugins=[("otel-under-test",
                                                                                  telemetry.observer)])
    spec = AgentRunSpec(prompt=f"run the scenario; the token is {SECRET}", env={"MY_TOKEN": SECRET})

    async def main() -> HarnessResult:
        with offline_workspace(spec, provider, host=host) as offline:
            return await run(offline, provider, host=host, runs_dir=tmp_path / "runs")

    return anyio.run(main)


def _children(spans: list[ReadableSpan], parent: ReadableSpan) -> list[ReadableSpan]:
    assert parent.context is not None
    return sorted((s for s in spans if s.parent is not None and s.parent.span_id == parent.context.span_id),
                  key=lambda s: s.start_time or 0)


@pytest.mark.parametrize("provider", list(PROVIDERS))
def test_an_offline_run_of_every_provider_is_its_trace(provider: str, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    _require(provider)
    tools = _tools_dir()
    monkeypatch.setenv("HARNESS_TOOLS_DIR", str(tools))
    monkeypatch.setenv("PATH", f"{tools / 'bin'}{os.pathsep}{os.environ['PATH']}")
    telemetry = Telemetry(content=True)
    result = _offline_run(provider, telemetry, tmp_path)
    assert result.status.value == "success", result.error
    events = list(read_events(tmp_path / "runs" / f"{result.run_id}.jsonl"))
    spans = telemetry.finished()

    (agent,) = [s for s in spans if s.name.startswith("invoke_agent")]
    assert agent.name == f"invoke_agent {provider}" and agent.parent is None and agent.kind is SpanKind.CLIENT
    attributes = dict(agent.attributes or {})
    assert attributes["gen_ai.operation.name"] == "invoke_agent"
    assert attributes["gen_ai.provider.name"] == PROVIDERS[provider][2]
    assert attributes["gen_ai.agent.name"] == provider
    assert attributes["harness.run_id"] == result.run_id
    assert attributes["harness.status"] == "success"
    assert attributes["harness.cli.version"]
    assert attributes["gen_ai.conversation.id"] == result.session_id
    assert attributes["gen_ai.usage.input_tokens"] == result.usage.input_tokens
    assert attributes["gen_ai.usage.output_tokens"] == result.usage.output_tokens
    assert (result.usage.input_tokens > 0 and result.usage.output_tokens > 0) is (provider not in NO_USAGE)
    assert attributes["gen_ai.usage.cache_read.input_tokens"] == result.usage.cached_input_tokens
    assert agent.status.status_code is StatusCode.UNSET
    assert agent.start_time == int(events[0].ts * 1e9) and agent.end_time == int(events[-1].ts * 1e9)

    # one execute_tool child per tool action the run's log holds: the scenario's shell, read, edit and write
    calls = list(dict.fromkeys(e.tool_id for e in events if isinstance(e, ToolUse)))
    assert len(calls) >= 3, calls
    tools_spans = _children(spans, agent)
    assert len(spans) == 1 + len(tools_spans)
    assert sorted(str(dict(s.attributes or {})["gen_ai.tool.call.id"]) for s in tools_spans) == sorted(calls)
    tree = run_spans(events)  # what `harness trace` prints of the same log
    assert tree is not None and sorted(c.name for c in tree.children) == sorted(s.name for s in tools_spans)
    for tool in tools_spans:
        tool_attributes = dict(tool.attributes or {})
        assert tool.name == f"execute_tool {tool_attributes['gen_ai.tool.name']}"
        assert tool_attributes["gen_ai.operation.name"] == "execute_tool"
        assert tool_attributes["harness.tool.kind"]
        assert tool.context is not None and agent.context is not None
        assert tool.context.trace_id == agent.context.trace_id
        assert agent.start_time is not None and agent.end_time is not None and tool.start_time is not None
        assert agent.start_time <= tool.start_time <= agent.end_time

    messages = json.loads(str(attributes["gen_ai.input.messages"]))  # content capture is on: scrubbed
    assert messages[0]["role"] == "user" and "run the scenario" in messages[0]["parts"][0]["content"]
    for span in spans:
        text = json.dumps({key: str(value) for key, value in (span.attributes or {}).items()})
        assert SECRET not in text, span.name
