"""The codex-appserver provider: Codex's app-server, one thread, one turn per run or many turns per live session.

Layer: provider lifecycle. Spawns `codex app-server --listen stdio://` through `ctx.spawn`; turns are played by
`thread.AppThread` and `turn.Turn`, a live session is `session.AppServerSession`. Knows nothing of rendering, run
logs or how approvals are decided (the runner's `request_approval`). Thread defaults: its README.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import anyio
from harness_codex_common import (
    MIN_CODEX_VERSION,
    NATIVE_GLOBS,
    TOOL_ALLOW_LISTS,
    TOOL_FILTERS,
    offline_setup,
    probe_codex,
    prompt_too_long,
)
from harness_codex_common.auth import check_codex_auth
from harness_codex_common.tmpdir import spawn_with_private_tmpdir
from harness_core import AgentRunSpec, HarnessResult, SessionSpec, SessionStarted
from harness_core.provider import (
    API_IMAGE_TYPES,
    AuthStatus,
    Capability,
    CliInfo,
    OfflineSetup,
    Provider,
    ProviderInfo,
    ProviderSession,
    RunContext,
    SessionContext,
    traced_env,
)

from harness_codex_appserver._version import __version__
from harness_codex_appserver.argv import build_argv, build_env, redacted_argv
from harness_codex_appserver.options import CodexAppServerOptions
from harness_codex_appserver.session import AppServerSession
from harness_codex_appserver.thread import AppThread

if TYPE_CHECKING:
    from harness_core.scripted.scenarios import Scenario

__all__ = ["MIN_CODEX_VERSION", "NATIVE_GLOBS", "CodexAppServerProvider"]


class CodexAppServerProvider(Provider[CodexAppServerOptions]):
    """OpenAI Codex through `codex app-server --listen stdio://` (JSON-RPC over stdio)."""

    info: ClassVar[ProviderInfo] = ProviderInfo(
        name="codex-appserver",
        genai_provider="openai",
        aliases=frozenset({"codex"}),
        version=__version__,
        capabilities=frozenset(
            {
                Capability.STREAMING,
                Capability.SESSION,
                Capability.INTERRUPT,
                Capability.APPROVALS,
                Capability.LIVE_SESSION,
                Capability.STEER,
                Capability.STRUCTURED_OUTPUT,
                Capability.EFFORT,
                Capability.MCP_STDIO,
                Capability.MCP_HTTP,
                Capability.IMAGE_INPUT,
            }
        ),
        tool_filters=TOOL_FILTERS,
        tool_allow_lists=TOOL_ALLOW_LISTS,
        attachment_types=API_IMAGE_TYPES,
        description="OpenAI Codex via its app-server: streaming, live sessions, steering, interrupt, approvals, "
        "structured output, reasoning effort. Tools of the MCP servers you give run without asking, whatever the "
        "approval policy.",
        cli_name="codex",
        min_cli_version=MIN_CODEX_VERSION,
        tested_cli_version=MIN_CODEX_VERSION,
        session_overrides=frozenset({"model", "approval", "sandbox", "effort", "output_schema"}),
        project_config=(".codex/config.toml",),
    )

    async def probe(self, options: CodexAppServerOptions) -> CliInfo:
        return await probe_codex(options.codex_bin)

    async def check_auth(self, options: CodexAppServerOptions, cli: CliInfo) -> AuthStatus:
        """`codex login status` in the CODEX_HOME a run would use, or an API key in the environment (no
        network; see `harness_codex_common.auth`)."""
        return await check_codex_auth(cli, options.codex_home)

    def offline_setup(self, scenario: Scenario, workspace: Path, state_dir: Path) -> OfflineSetup:
        """The real codex against a scripted Responses backend on 127.0.0.1, with its own CODEX_HOME under
        `state_dir` (see `harness_codex_common.offline_setup`)."""
        return offline_setup(scenario, workspace, state_dir)

    async def run(self, spec: AgentRunSpec, options: CodexAppServerOptions, ctx: RunContext) -> HarnessResult:
        if (too_long := prompt_too_long(spec.prompt)) is not None:
            raise too_long
        argv = self._argv(spec.env, options, ctx.cli, ctx.log)
        env = traced_env(build_env(spec.env, options), ctx.trace_context())
        async with spawn_with_private_tmpdir(ctx, argv, env=env, spec_env=spec.env, cwd=spec.cwd) as child:
            thread = AppThread(options, child, ctx.log)

            async def start() -> None:  # inside the turn's interruptible start-up
                await thread.open(spec, ctx.trace_context())
                await ctx.emit(
                    SessionStarted(session_id=str(thread.thread_id), resumed=spec.resume_session is not None,
                                   model=thread.sticky.model_for(spec))
                )

            async with anyio.create_task_group() as tg:
                tg.start_soon(thread.read)
                try:
                    return await thread.play(spec, ctx, live=False, prelude=start)
                finally:
                    tg.cancel_scope.cancel()
        raise AssertionError("unreachable")  # pragma: no cover  (mypy: the task group may swallow a return)

    @asynccontextmanager
    async def open_session(
        self, spec: SessionSpec, options: CodexAppServerOptions, ctx: SessionContext
    ) -> AsyncIterator[ProviderSession]:
        """One app-server process and one thread (`thread/start`, or `thread/resume` of `spec.resume_session`)
        for every turn of the session; the process is shut down (stdin closed, then TERM, then KILL: the
        transport's bounded steps) when the session closes."""
        argv = self._argv(spec.env, options, ctx.cli, ctx.log)
        # the session's trace context for the process and its thread; each turn/start carries its turn's
        env = traced_env(build_env(spec.env, options), ctx.trace_context())
        async with spawn_with_private_tmpdir(ctx, argv, env=env, spec_env=spec.env, cwd=spec.cwd) as child:
            thread = AppThread(options, child, ctx.log)
            async with anyio.create_task_group() as tg:
                tg.start_soon(thread.read)  # for the whole session: it notices the process dying between turns
                try:
                    await thread.open(spec, ctx.trace_context())
                    yield AppServerSession(thread, resumed=spec.resume_session is not None)
                finally:
                    tg.cancel_scope.cancel()

    @staticmethod
    def _argv(env: dict[str, str], options: CodexAppServerOptions, cli: CliInfo, log: Any) -> list[str]:
        argv = build_argv(cli.path or options.codex_bin or "codex", options)
        log.debug("codex_appserver_spawn", argv=redacted_argv(argv, tuple(env.values())))
        return argv
