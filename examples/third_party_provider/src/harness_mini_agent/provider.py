"""`MiniAgentProvider`: the Harness-facing class — static info, the run's lifecycle, the offline setup.

Layer: plugin (lifecycle only). Knows the Harness `Provider` interface; must not know the Responses event
shapes, the patch format or process handling (`mapping`, `wire`, `patch`, `tools`; the loop is in `agent`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

import anyio
from harness_core import AgentRunSpec, Capability, HarnessResult, ProviderInfo
from harness_core.provider import OfflineSetup, Provider, RunContext

from harness_mini_agent.options import MiniAgentOptions, api_key

if TYPE_CHECKING:
    from harness_core.offline import Scenario

__all__ = ["MiniAgentProvider"]


class MiniAgentProvider(Provider[MiniAgentOptions]):
    info: ClassVar[ProviderInfo] = ProviderInfo(
        name="mini-agent",
        version="0.1.0",
        capabilities=frozenset(
            {Capability.STREAMING, Capability.SESSION, Capability.INTERRUPT, Capability.APPROVALS}
        ),
        description="A small coding agent speaking the OpenAI Responses API over HTTP (no CLI).",
    )

    async def run(self, spec: AgentRunSpec, options: MiniAgentOptions, ctx: RunContext) -> HarnessResult:
        from harness_mini_agent.agent import Agent, InterruptWatch  # httpx: only a run pays for it
        from harness_mini_agent.client import ResponsesClient

        key = api_key(options, spec.env)
        watch = InterruptWatch(ctx.interrupt_requested)
        agent = Agent(spec, options, ctx, watch, options.api_key_env)
        outcome: list[HarnessResult | Exception] = []
        async with anyio.create_task_group() as tg:
            tg.start_soon(watch.watch)
            try:
                async with ResponsesClient(
                    options.base_url, key, options.api_key_env, options.request_timeout, ctx.record_wire
                ) as client:
                    outcome.append(await agent.play(client))
            except Exception as exc:  # noqa: BLE001 - re-raised below, outside the task group (no group)
                outcome.append(exc)
            finally:
                tg.cancel_scope.cancel()
        (result,) = outcome  # a cancelled run never gets here: the task group re-raises the cancellation
        if isinstance(result, Exception):
            raise result
        return result

    def offline_setup(self, scenario: Scenario, workspace: Path, state_dir: Path) -> OfflineSetup:
        """Play `scenario` with the scripted Responses backend on 127.0.0.1 (no credentials, no network)."""
        from harness_mini_agent.offline import offline_setup  # the scripted backends: offline runs only

        return offline_setup(scenario, workspace)
