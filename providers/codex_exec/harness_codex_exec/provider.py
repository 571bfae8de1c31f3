"""`CodexExecProvider`: one `codex exec --json` process per run, its JSONL stdout mapped to events.

Layer: provider (codex-exec) lifecycle. Owns the child (spawned through `ctx.spawn`), the binary probe (shared with
codex-appserver) and how a run ends; the line meanings live in `mapping`, the command line in `argv`. Knows nothing
of rendering, run logs or approvals. What this path cannot do: providers/codex_exec/README.md.
"""

from __future__ import annotations

import contextlib
import json
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

import anyio
from harness_codex_common import (
    MIN_CODEX_VERSION,
    NATIVE_GLOBS,
    TOOL_ALLOW_LISTS,
    TOOL_FILTERS,
    Reconnects,
    mcp_servers_failed,
    model_api_url,
    offline_setup,
    probe_codex,
    prompt_too_long,
    refused_events,
    session_not_found,
)
from harness_codex_common.auth import check_codex_auth
from harness_codex_common.tmpdir import spawn_with_private_tmpdir

from harness_codex_exec._version import __version__
from harness_codex_exec.argv import build_argv, build_env, redacted_argv
from harness_codex_exec.mapping import ExecMapping
from harness_codex_exec.options import CodexExecOptions
from harness_codex_exec.sessions import codex_home, read_previous_total, read_turn_records
from harness_core import AgentRunSpec, HarnessError, HarnessResult, InterruptedRunError, RunStatus, Usage
from harness_core.provider import (
    API_IMAGE_TYPES,
    AuthStatus,
    Capability,
    ChildProcess,
    CliInfo,
    OfflineSetup,
    Provider,
    ProviderInfo,
    RunContext,
    json_messages,
    traced_env,
)

if TYPE_CHECKING:
    from harness_core.scripted.scenarios import Scenario


__all__ = ["CodexExecProvider", "MIN_CODEX_VERSION", "NATIVE_GLOBS"]

_EXIT_WAIT = 10.0
"""How long a codex that printed its last line may take to exit before it is stopped."""


class CodexExecProvider(Provider[CodexExecOptions]):
    """Runs `codex exec --json` (the legacy one-shot path) and maps its JSONL to Harness events."""

    info: ClassVar[ProviderInfo] = ProviderInfo(
        name="codex-exec",
        genai_provider="openai",
        version=__version__,
        capabilities=frozenset({Capability.SESSION, Capability.STRUCTURED_OUTPUT, Capability.MCP_STDIO,
                                Capability.MCP_HTTP, Capability.IMAGE_INPUT}),
        tool_filters=TOOL_FILTERS,
        tool_allow_lists=TOOL_ALLOW_LISTS,
        attachment_types=API_IMAGE_TYPES,
        attachment_data=False,  # `-i FILE`: images by path only
        description="OpenAI Codex through the one-shot `codex exec --json` (no streaming, interrupt or "
        "approvals; use codex-appserver for those).",
        cli_name="codex",
        min_cli_version=MIN_CODEX_VERSION,
        tested_cli_version="0.169.0",
    )

    async def probe(self, options: CodexExecOptions) -> CliInfo:
        return await probe_codex(options.codex_bin)

    async def check_auth(self, options: CodexExecOptions, cli: CliInfo) -> AuthStatus:
        """`codex login status` in the CODEX_HOME a run would use, or an API key in the environment (no
        network; see `harness_codex_common.auth`)."""
        return await check_codex_auth(cli, options.codex_home)

    def offline_setup(self, scenario: Scenario, workspace: Path, state_dir: Path) -> OfflineSetup:
        """The real codex against a scripted Responses backend on 127.0.0.1, with its own CODEX_HOME under
        `state_dir` (see `harness_codex_common.offline_setup`)."""
        return offline_setup(scenario, workspace, state_dir)

    async def run(self, spec: AgentRunSpec, options: CodexExecOptions, ctx: RunContext) -> HarnessResult:
        if (too_long := prompt_too_long(spec.prompt)) is not None:
            raise too_long
        if spec.output_schema is None:
            return await self._run(spec, options, ctx, None)
        with tempfile.TemporaryDirectory(prefix="harness-codex-schema-") as folder:  # codex reads it from a file
            schema = Path(folder) / "output-schema.json"
            schema.write_text(json.dumps(spec.output_schema))
            return await self._run(spec, options, ctx, str(schema))

    async def _run(self, spec: AgentRunSpec, options: CodexExecOptions, ctx: RunContext,
                   schema_file: str | None) -> HarnessResult:
        codex = ctx.cli.path or options.codex_bin or "codex"
        argv = build_argv(codex, spec, options, output_schema_file=schema_file)
        previous: Usage | None = Usage()
        if spec.resume_session is not None:
            home = codex_home(options.codex_home, spec.env)
            previous = await read_previous_total(ctx, home, spec.resume_session)
        base_url = model_api_url(options.config, spec.env, options.codex_home)
        mapping = ExecMapping(
            cwd=str(spec.cwd),
            model=spec.model,
            resume_session=spec.resume_session,
            previous_total=previous,
            reconnects=Reconnects(options.max_reconnects, base_url),
        )
        ctx.log.debug("codex_exec_spawn", argv=redacted_argv(argv, tuple(spec.env.values())))
        interrupted = False
        # codex exec continues the trace in TRACEPARENT/TRACESTATE (its root span's parent): the run's, asked now
        env = traced_env(build_env(spec, options), ctx.trace_context())
        async with spawn_with_private_tmpdir(ctx, argv, env=env, spec_env=spec.env, cwd=spec.cwd,
                                             stdin_close_timeout=0.1) as child:
            await _give_prompt(child, spec.prompt)
            with anyio.CancelScope() as reading:
                async with anyio.create_task_group() as tg:
                    tg.start_soon(_cancel_on_interrupt, ctx, reading)
                    await _pump(child, mapping, ctx)
                    tg.cancel_scope.cancel()
            if reading.cancelled_caught:
                interrupted = True  # leaving the block stops the group: SIGTERM, then SIGKILL
            elif mapping.gave_up is None:  # else codex is still reconnecting: leaving the block stops it
                with anyio.move_on_after(_EXIT_WAIT):
                    await child.wait()
                if not mapping.finished:
                    raise _early_exit(child, spec)
        if mapping.finished and mapping.session_id is not None:
            home = codex_home(options.codex_home, spec.env)
            records = await read_turn_records(ctx, home, str(mapping.session_id))
            for event in refused_events(records, str(spec.cwd)):
                await ctx.emit(event)
        return _result(mapping, interrupted)


async def _give_prompt(child: ChildProcess, prompt: str) -> None:
    """The prompt on stdin, then stdin closed (codex reads it to its end; an exit meanwhile shows as the early
    exit the lines that follow, or their absence, tell)."""
    with contextlib.suppress(HarnessError):
        await child.send_input(prompt)
    await child.close_stdin()


def _early_exit(child: ChildProcess, spec: AgentRunSpec) -> HarnessError:
    """Why codex exited without a last line: a session it does not have to resume, an MCP server of the run that
    did not start, or it died."""
    if spec.resume_session is not None:
        missing = session_not_found(spec.resume_session, child.stderr_tail())
        if missing is not None:
            return missing
    if spec.mcp_servers and (servers := mcp_servers_failed(child.stderr_tail(), spec.mcp_servers)) is not None:
        return servers
    return child.exit_error(
        "codex exec ended before its turn finished"  # the error adds where its stderr is and what to do next
    )


async def _pump(child: ChildProcess, mapping: ExecMapping, ctx: RunContext) -> None:
    emit = ctx.emit
    async for msg in json_messages(child.lines(), emit):
        if mapping.gave_up is not None:
            return  # codex would go on reconnecting: the caller stops it
        if msg.get("type") == "item.started":
            # A tool starts: remember who runs it. When codex dies on its own, a helper it started with an
            # environment of its own (login-shell snapshot, a command in its own session) is reparented and
            # carries no run mark; the transport kills what it remembered at shutdown.
            await child.remember_descendants()
        for event in mapping.feed(msg):
            await emit(event)
        if mapping.gave_up is not None:
            return


async def _cancel_on_interrupt(ctx: RunContext, scope: anyio.CancelScope) -> None:
    await ctx.interrupt_requested.wait()
    scope.cancel()


def _result(mapping: ExecMapping, interrupted: bool) -> HarnessResult:
    outcome = mapping.outcome
    if interrupted or outcome is None:
        resume = f" resume it with --resume {mapping.session_id}" if mapping.session_id else ""
        error = InterruptedRunError(
            "the run was interrupted: codex exec cannot stop a turn cleanly, so its process group was "
            f"terminated and the turn's last steps may be lost;{resume or ' nothing was saved to resume'}"
        )
        return HarnessResult(
            status=RunStatus.INTERRUPTED,
            final_text=mapping.final_text,
            session_id=mapping.session_id,
            usage=mapping.usage,
            error=error.to_info(),
        )
    return outcome
