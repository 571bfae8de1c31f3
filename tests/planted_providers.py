"""Test-only providers: the scripted provider with one typical provider bug planted in each (issue 10, section 5).

Layer: tests. Each variant is the in-process scripted provider (`harness_core.testing.scripted`) with one bug a
provider author typically makes; `tests/testing/test_contract_planted_bugs.py` runs the shipped contract suite against
each and expects the named contract test to fail, and against `planted-none` (no bug) expecting it to pass.
`CliNoBug` / `CliIgnoresExitStatus` are the same for a provider that drives a CLI (a `python -c` agent that
streams text lines and, for the contract's `crash` fault, dies mid-turn).
Registered through the plugin host, never installed: `PluginHost.create(plugins=[("planted", this module)])`.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Callable
from typing import Any, ClassVar

import anyio
import sniffio

from harness_core import (
    AgentRunSpec,
    ApprovalRequested,
    HarnessEvent,
    HarnessResult,
    HarnessToolDetails,
    ProviderRaw,
    RunStatus,
    SessionStarted,
    TextDelta,
    ToolKind,
    ToolResult,
)
from harness_core.provider import (
    Capability,
    Provider,
    ProviderInfo,
    ProviderOptions,
    RunContext,
    hookimpl,
    json_messages,
)
from harness_core.testing.scripted import ScriptedOptions, ScriptedProvider
from tests.planted_port import HalfPorted

__all__ = ["PLANTED", "harness_register_providers"]


class _Ctx:
    """A `RunContext` whose `emit` a planted bug rewrites (everything else is the runner's own)."""

    def __init__(self, inner: RunContext, rewrite: Callable[[HarnessEvent], HarnessEvent | None]) -> None:
        self._inner = inner
        self._rewrite = rewrite

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def emit(self, event: HarnessEvent) -> None:
        rewritten = self._rewrite(event)
        if rewritten is not None:
            await self._inner.emit(rewritten)


def _info(name: str) -> ProviderInfo:
    return ProviderInfo(name=f"planted-{name}", version="1.0", capabilities=ScriptedProvider.info.capabilities,
                        description=f"the scripted provider with a planted bug: {name}")


class NoBug(ScriptedProvider):
    info: ClassVar[ProviderInfo] = _info("none")


class DropsAToolResult(ScriptedProvider):
    """Loses the second `tool_result` (a mapping that misses one message shape)."""

    info: ClassVar[ProviderInfo] = _info("drops-tool-result")

    async def run(self, spec: AgentRunSpec, options: ScriptedOptions, ctx: RunContext) -> HarnessResult:
        seen: list[ToolResult] = []

        def drop_second(event: HarnessEvent) -> HarnessEvent | None:
            if isinstance(event, ToolResult):
                seen.append(event)
                if len(seen) == 2:
                    return None
            return event

        return await super().run(spec, options, _Ctx(ctx, drop_second))  # type: ignore[arg-type]


class IgnoresInterrupt(ScriptedProvider):
    """Never looks at `ctx.interrupt_requested` (only the runner's hard stop ends the run)."""

    info: ClassVar[ProviderInfo] = _info("ignores-interrupt")

    async def run(self, spec: AgentRunSpec, options: ScriptedOptions, ctx: RunContext) -> HarnessResult:
        return await super().run(spec, options.model_copy(update={"ignore_interrupt": True}), ctx)


class EmitsAfterReturning(ScriptedProvider):
    """Returns the result while a task it started still has a text delta to emit (an unawaited reader)."""

    info: ClassVar[ProviderInfo] = _info("emits-after-return")

    async def run(self, spec: AgentRunSpec, options: ScriptedOptions, ctx: RunContext) -> HarnessResult:
        result = await super().run(spec, options, ctx)

        async def late() -> None:
            await anyio.sleep(0.01)
            with contextlib.suppress(RuntimeError):  # what the runner raises; a task nobody awaits loses it anyway
                await ctx.emit(TextDelta(text=" (late)"))

        if sniffio.current_async_library() == "trio":
            import trio

            trio.lowlevel.spawn_system_task(late)
        else:
            import asyncio

            task = asyncio.get_running_loop().create_task(late())
            _KEEP.add(task)
            task.add_done_callback(_KEEP.discard)
        return result


_KEEP: set[Any] = set()


class FakesResume(ScriptedProvider):
    """Declares `session`, ignores `resume_session`, and still reports the session as resumed."""

    info: ClassVar[ProviderInfo] = _info("fakes-resume")

    async def run(self, spec: AgentRunSpec, options: ScriptedOptions, ctx: RunContext) -> HarnessResult:
        wanted = spec.resume_session
        if wanted is None:
            return await super().run(spec, options, ctx)

        def claim(event: HarnessEvent) -> HarnessEvent | None:
            if isinstance(event, SessionStarted):
                return SessionStarted(session_id=wanted, resumed=True)
            return event

        fresh = spec.model_copy(update={"resume_session": None})
        result = await super().run(fresh, options, _Ctx(ctx, claim))  # type: ignore[arg-type]
        return result.model_copy(update={"session_id": wanted})


class SwallowsAnErrorAndHangs(ScriptedProvider):
    """Catches the model API's failure and keeps waiting for a message that never comes."""

    info: ClassVar[ProviderInfo] = _info("swallows-and-hangs")

    async def run(self, spec: AgentRunSpec, options: ScriptedOptions, ctx: RunContext) -> HarnessResult:
        try:
            return await super().run(spec, options, ctx)
        except Exception:  # noqa: BLE001 - the planted bug: the failure (a HarnessError, maybe in a group) is lost
            await anyio.sleep_forever()
            raise AssertionError("unreachable") from None


class LeaksSpecEnv(ScriptedProvider):
    """Puts the environment it gives its agent (`spec.env`) into a raw event."""

    info: ClassVar[ProviderInfo] = _info("leaks-spec-env")

    async def run(self, spec: AgentRunSpec, options: ScriptedOptions, ctx: RunContext) -> HarnessResult:
        await ctx.emit(ProviderRaw(method="agent_env", payload=dict(spec.env)))
        return await super().run(spec, options, ctx)


class LeaksProcessEnv(ScriptedProvider):
    """Puts a secret-looking variable of its own process environment into a raw event (a CLI's banner)."""

    info: ClassVar[ProviderInfo] = _info("leaks-process-env")

    async def run(self, spec: AgentRunSpec, options: ScriptedOptions, ctx: RunContext) -> HarnessResult:
        tokens = {k: v for k, v in os.environ.items() if k.endswith("_TOKEN")}
        await ctx.emit(ProviderRaw(method="banner", payload=tokens))
        return await super().run(spec, options, ctx)


class LeaksApiKey(ScriptedProvider):
    """Echoes the configuration it gives its agent in a raw event, API key included (`apiKey`: the value of the
    first `*_API_KEY` of its `spec.env`), as a CLI's start-up banner might; a short key passes the log's scrubbing."""

    info: ClassVar[ProviderInfo] = _info("leaks-api-key")

    async def run(self, spec: AgentRunSpec, options: ScriptedOptions, ctx: RunContext) -> HarnessResult:
        key = next((v for k, v in spec.env.items() if k.endswith("_API_KEY")), "")
        await ctx.emit(ProviderRaw(method="agent_config", payload={"model": "scripted", "apiKey": key}))
        return await super().run(spec, options, ctx)


class RecordsApiKey(ScriptedProvider):
    """Records the HTTP request it makes for its agent in the wire log with the API key in the JSON body (no event
    carries it: only a file does)."""

    info: ClassVar[ProviderInfo] = _info("records-api-key")

    async def run(self, spec: AgentRunSpec, options: ScriptedOptions, ctx: RunContext) -> HarnessResult:
        key = next((v for k, v in spec.env.items() if k.endswith("_API_KEY")), "")
        ctx.record_wire("out", json.dumps({"model": "scripted", "api_key": key, "input": spec.prompt}))
        return await super().run(spec, options, ctx)


LEFT_RUNNING: list[subprocess.Popen[bytes]] = []
"""The children `LeavesItsChildRunning` left behind (the test that planted it kills them)."""


class LeavesItsChildRunning(ScriptedProvider):
    """Starts a helper process for its agent and returns without stopping or reaping it."""

    info: ClassVar[ProviderInfo] = _info("leaves-child-running")

    async def run(self, spec: AgentRunSpec, options: ScriptedOptions, ctx: RunContext) -> HarnessResult:
        LEFT_RUNNING.append(subprocess.Popen([sys.executable, "-c", "import time; time.sleep(8)"]))  # noqa: ASYNC220 - the bug
        return await super().run(spec, options, ctx)


class AsksAndHangs(ScriptedProvider):
    """Emits `approval_requested` itself (never asking the runner, so no approver answers) and waits for ever."""

    info: ClassVar[ProviderInfo] = _info("asks-and-hangs")

    async def run(self, spec: AgentRunSpec, options: ScriptedOptions, ctx: RunContext) -> HarnessResult:
        display = HarnessToolDetails(kind=ToolKind.SHELL, title="Running command", command="true")
        await ctx.emit(ApprovalRequested(request_id="planted-1", display=display))
        await anyio.sleep_forever()
        raise AssertionError("unreachable")


PLANTED: tuple[type[ScriptedProvider], ...] = (NoBug, DropsAToolResult, IgnoresInterrupt, EmitsAfterReturning,
                                               FakesResume, SwallowsAnErrorAndHangs, LeaksSpecEnv, LeaksProcessEnv,
                                               LeaksApiKey, RecordsApiKey, LeavesItsChildRunning, AsksAndHangs)

# --- a provider that drives a CLI: a child process whose exit status it must check ----------------------------

_AGENT = """
import json, os, signal, sys
print(json.dumps({"text": "Working on it."}), flush=True)
if os.environ.get("PLANTED_AGENT_CRASH") == "1":
    os.kill(os.getpid(), signal.SIGKILL)  # dies mid-turn, as a CLI killed by the OOM killer would
print(json.dumps({"text": " Done."}), flush=True)
"""


class CliOptions(ProviderOptions):
    scenario: str = "say"
    crash: bool = False
    """The agent dies mid-turn (the contract's `crash` fault, played by this provider's own agent)."""


class CliNoBug(Provider[CliOptions]):
    """Streams the text lines of a small agent CLI (`python -c`) and checks how the agent exited."""

    info: ClassVar[ProviderInfo] = ProviderInfo(
        name="planted-cli-none", version="1.0", capabilities=frozenset({Capability.STREAMING}),
        description="a CLI-driving test provider, without a bug")
    checks_exit_status: ClassVar[bool] = True

    async def run(self, spec: AgentRunSpec, options: CliOptions, ctx: RunContext) -> HarnessResult:
        env = {**os.environ, **spec.env, "PLANTED_AGENT_CRASH": "1" if options.crash else "0"}
        text: list[str] = []
        async with ctx.spawn([sys.executable, "-c", _AGENT], env=env) as child:
            async for message in json_messages(child.lines(), ctx.emit):
                text.append(str(message["text"]))
                await ctx.emit(TextDelta(text=text[-1]))
            code = await child.wait()
        if code != 0 and self.checks_exit_status:
            raise child.exit_error("the agent exited before finishing its turn")
        return HarnessResult(status=RunStatus.SUCCESS, final_text="".join(text))


class CliIgnoresExitStatus(CliNoBug):
    """Reports success whatever the agent's exit status (it read every line it got, so all looks well)."""

    info: ClassVar[ProviderInfo] = CliNoBug.info.model_copy(update={"name": "planted-ignores-exit-status"})
    checks_exit_status: ClassVar[bool] = False


@hookimpl
def harness_register_providers(register: Callable[[type[Provider[Any]]], None]) -> None:
    for cls in (*PLANTED, HalfPorted, CliNoBug, CliIgnoresExitStatus):
        register(cls)
