"""The `claude` provider: runs Claude Code (`claude -p`) in bidirectional stream-json mode.

Layer: provider (lifecycle). Owns probing the CLI, spawning it, the control protocol on its stdin and stdout and
the end of the turn (`turn.Turn`; a live session is `session`); the command line is `argv`'s, the mapping
`mapping`'s, the policy `permissions`'. Knows nothing of rendering, run logs or how approvals are decided.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
from harness_core import AgentRunSpec, HarnessResult, SessionSpec
from harness_core.provider import (
    AuthStatus,
    Capability,
    CliInfo,
    OfflineSetup,
    Provider,
    ProviderInfo,
    ProviderSession,
    RunContext,
    SessionContext,
    json_batches,
    probe_cli,
    traced_env,
)

from harness_claude.argv import PROJECT_CONFIG, SECRET_FLAGS, build_argv, build_env, redacted_argv
from harness_claude.auth import check_claude_auth
from harness_claude.mapping import ClaudeMapper
from harness_claude.mcpfile import mcp_config_file
from harness_claude.options import ClaudeOptions
from harness_claude.outcome import Limits
from harness_claude.session import claude_session
from harness_claude.toolconfig import ATTACHMENT_TYPES, TOOL_FILTERS, content_blocks, tool_config
from harness_claude.turn import Turn

if TYPE_CHECKING:
    from harness_core.scripted.scenarios import Scenario

__all__ = ["INSTALL_HINT", "MIN_VERSION", "ClaudeProvider"]

MIN_VERSION = "2.1.328"
INSTALL_HINT = "npm install -g @anthropic-ai/claude-code@2.1.328"
NATIVE_GLOBS = ("@anthropic-ai/claude-code/bin/claude.exe",)


class ClaudeProvider(Provider[ClaudeOptions]):
    info = ProviderInfo(
        name="claude",
        genai_provider="anthropic",
        version="0.1.0",
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
                Capability.MAX_TURNS,
                Capability.COST,
                Capability.MCP_STDIO,
                Capability.MCP_HTTP,
                Capability.MCP_SSE,
                Capability.IMAGE_INPUT,
                Capability.FILE_INPUT,
            }
        ),
        tool_filters=TOOL_FILTERS,
        tool_allow_mcp_tools=False,  # `--allowedTools mcp__SERVER`: by server only
        attachment_types=ATTACHMENT_TYPES,
        session_overrides=frozenset({"model", "approval"}),
        description="Claude Code (claude -p) over bidirectional stream-json",
        cli_name="claude",
        min_cli_version=MIN_VERSION,
        tested_cli_version=MIN_VERSION,
        secret_flags=SECRET_FLAGS,
        public_env=frozenset({"ANTHROPIC_BASE_URL", "CLAUDE_CONFIG_DIR", "CLAUDE_CODE_TMPDIR"}),  # offline's paths
        project_config=PROJECT_CONFIG,
    )

    async def probe(self, options: ClaudeOptions) -> CliInfo:
        return await probe_cli(
            "claude",
            options.claude_bin,
            install_hint=INSTALL_HINT,
            option_name="claude_bin",
            minimum=MIN_VERSION,
            native_globs=NATIVE_GLOBS,
        )

    async def check_auth(self, options: ClaudeOptions, cli: CliInfo) -> AuthStatus:
        """`claude auth status`: logged in (claude.ai, an API key and where it comes from) or not, with the next
        step. No model call. See `harness_claude.auth`."""
        return await check_claude_auth(cli)

    def offline_setup(self, scenario: Scenario, workspace: Path, state_dir: Path) -> OfflineSetup:
        """The real CLI against a scripted Messages backend on 127.0.0.1 (`harness run --offline`, the demo,
        the contract suite's real mode). See `harness_claude.offline`."""
        from harness_claude.offline import offline_setup  # the scripted backends (uvicorn): offline runs only

        return offline_setup(scenario, workspace, state_dir)

    async def run(self, spec: AgentRunSpec, options: ClaudeOptions, ctx: RunContext) -> HarnessResult:
        binary = ctx.cli.path or (await self.probe(options)).path or "claude"
        is_root = hasattr(os, "geteuid") and os.geteuid() == 0
        env = traced_env(build_env(spec, options, is_root=is_root, base=os.environ), ctx.trace_context())
        content = content_blocks(spec.prompt, spec.attachments) if not spec.attachments else \
            await anyio.to_thread.run_sync(content_blocks, spec.prompt, spec.attachments)  # reads: off the loop;
        # an attachment Claude cannot take is refused here, before spawn
        limits = Limits(max_turns=spec.max_turns, max_cost_usd=spec.max_cost_usd)
        mapper = ClaudeMapper(str(spec.cwd), resumed=spec.resume_session is not None, limits=limits,
                              servers=spec.mcp_servers)
        config = tool_config(spec, keep_user_servers=options.keep_user_mcp_servers).mcp_config
        with mcp_config_file(config) as config_file:
            argv = build_argv(binary, spec, options, is_root=is_root, mcp_config_file=config_file)
            ctx.log.debug("claude_spawn", argv=redacted_argv(argv, tuple(spec.env.values())))
            async with ctx.spawn(argv, env=env, cwd=spec.cwd) as child:
                turn = Turn(spec, options, ctx, child, mapper=mapper, content=content)
                return await turn.play(json_batches(child.lines(), ctx.emit))

    @asynccontextmanager
    async def open_session(
        self, spec: SessionSpec, options: ClaudeOptions, ctx: SessionContext
    ) -> AsyncIterator[ProviderSession]:
        """One `claude -p` process for the whole session (stdin open across turns); see `harness_claude.session`."""
        binary = ctx.cli.path or (await self.probe(options)).path or "claude"
        async with claude_session(binary, spec, options, ctx) as session:
            yield session
