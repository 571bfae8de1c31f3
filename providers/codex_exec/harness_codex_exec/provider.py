"""`CodexExecProvider`: one `codex exec --json` process per run, its JSONL stdout mapped to events.

Layer: provider (codex-exec) lifecycle. Owns the child (through `harness_core.transport.ChildProcess`), the
binary probe (`harness_codex_common.cli.probe_codex`, shared with codex-appserver) and how a run ends; the line
meanings live in `mapping`, the command line in `argv`. Knows nothing of rendering, run logs or approvals.

What this path cannot do, and says so in its capabilities: no token streaming (one `text_delta` per message),
no clean interrupt (stopping means terminating the process group; the thread can be resumed later), no
approvals (`codex exec` never asks). Ctrl-C or cancel still stops the run and returns `interrupted`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

import anyio
import structlog

from harness_codex_exec import __version__
from harness_codex_exec.argv import CodexExecOptions, build_argv, redacted_argv
from harness_codex_exec.mapping import ExecMapping
from harness_codex_exec.sessions import codex_home, previous_total
from harness_core.capabilities import Capability, ProviderInfo
from harness_codex_common.cli import MIN_CODEX_VERSION, NATIVE_GLOBS, offline_setup, probe_codex
from harness_core.errors import InterruptedRunError, MessageTooLargeError
from harness_core.events import ErrorEvent, HarnessResult, ProviderRaw, RunStatus, Usage
from harness_core.provider import CliInfo, OfflineSetup, Provider, ProviderOptions, RunContext
from harness_core.spec import AgentRunSpec
from harness_core.transport import ChildProcess
from harness_core.transport.proctree import ProcEntry, descendants, kill_entries

if TYPE_CHECKING:
    from harness_core.offline.scenarios import Scenario

log = structlog.get_logger(__name__)

__all__ = ["CodexExecProvider", "MIN_CODEX_VERSION", "NATIVE_GLOBS"]

_EXIT_WAIT = 10.0
"""How long a codex that printed its last line may take to exit before it is stopped."""


class CodexExecProvider(Provider):
    """Runs `codex exec --json` (the legacy one-shot path) and maps its JSONL to Harness events."""

    info: ClassVar[ProviderInfo] = ProviderInfo(
        name="codex-exec",
        version=__version__,
        capabilities=frozenset({Capability.SESSION}),
        description="OpenAI Codex through the one-shot `codex exec --json` (no streaming, interrupt or "
        "approvals; use codex-appserver for those).",
        cli_name="codex",
        min_cli_version=MIN_CODEX_VERSION,
        tested_cli_version="0.169.0",
    )
    Options: ClassVar[type[ProviderOptions]] = CodexExecOptions

    async def probe(self, options: ProviderOptions) -> CliInfo:
        assert isinstance(options, CodexExecOptions)
        return await probe_codex(options.codex_bin)

    def offline_setup(self, scenario: Scenario, workspace: Path, state_dir: Path) -> OfflineSetup:
        """The real codex against a scripted Responses backend on 127.0.0.1, with its own CODEX_HOME under
        `state_dir` (see `harness_codex_common.cli.offline_setup`)."""
        return offline_setup(scenario, workspace, state_dir)

    async def run(self, spec: AgentRunSpec, options: ProviderOptions, ctx: RunContext) -> HarnessResult:
        assert isinstance(options, CodexExecOptions)
        codex = ctx.cli.path or options.codex_bin or "codex"
        argv = build_argv(codex, spec, options)
        env = _child_env(spec, options)
        previous: Usage | None = Usage()
        if spec.resume_session is not None:
            home = codex_home(options.codex_home, spec.env)
            previous = await anyio.to_thread.run_sync(previous_total, home, spec.resume_session)
        mapping = ExecMapping(
            cwd=str(spec.cwd),
            model=spec.model,
            resume_session=spec.resume_session,
            previous_total=previous,
        )
        ctx.log.debug("codex_exec_spawn", argv=redacted_argv(argv))
        interrupted = False
        seen: set[ProcEntry] = set()
        async with ChildProcess(
            argv, env=env, cwd=spec.cwd, stdin=False, stdin_close_timeout=0.1, on_line=ctx.record_wire
        ) as child:
            with anyio.CancelScope() as reading:
                async with anyio.create_task_group() as tg:
                    tg.start_soon(_cancel_on_interrupt, ctx, reading)
                    await _pump(child, mapping, ctx, seen)
                    tg.cancel_scope.cancel()
            if reading.cancelled_caught:
                interrupted = True  # leaving the block stops the group: SIGTERM, then SIGKILL
            else:
                with anyio.move_on_after(_EXIT_WAIT):
                    await child.wait()
                if not mapping.finished:
                    _kill_leftovers(seen)
                    raise child.exit_error(
                        "codex exec ended before its turn finished; see its stderr below, rerun with "
                        "`--record-wire` to keep every line it printed"
                    )
        _kill_leftovers(seen)
        return _result(mapping, interrupted)


async def _pump(child: ChildProcess, mapping: ExecMapping, ctx: RunContext, seen: set[ProcEntry]) -> None:
    async for line in child.lines():
        if isinstance(line, MessageTooLargeError):
            await ctx.emit(ErrorEvent(error=line.to_info()))
            continue
        if not line.strip():
            continue
        try:
            msg = json.loads(line)
        except ValueError:
            msg = None
        if not isinstance(msg, dict):
            text = line.decode("utf-8", "replace")
            ctx.log.warning("codex_exec_non_json_line", line=text[:300])
            await ctx.emit(ProviderRaw(method=None, payload=text))
            continue
        if msg.get("type") == "item.started":
            seen.update(await anyio.to_thread.run_sync(descendants, child.pid))
        for event in mapping.feed(msg):
            await ctx.emit(event)


def _kill_leftovers(seen: set[ProcEntry]) -> None:
    """Kill what codex started that outlived it. The transport snapshots the tree when it shuts the child
    down, but when codex dies on its own (killed, crashed) its helpers (login-shell snapshot, commands in
    their own session) are already reparented by then; these snapshots, taken as tools start, still know them.
    """
    killed = kill_entries(sorted(seen))
    if killed:
        log.debug("codex_exec_killed_leftovers", pids=killed)


async def _cancel_on_interrupt(ctx: RunContext, scope: anyio.CancelScope) -> None:
    await ctx.interrupt_requested.wait()
    scope.cancel()


def _result(mapping: ExecMapping, interrupted: bool) -> HarnessResult:
    common = {"final_text": mapping.final_text, "session_id": mapping.session_id, "usage": mapping.usage}
    if interrupted:
        resume = f" resume it with --resume {mapping.session_id}" if mapping.session_id else ""
        error = InterruptedRunError(
            "the run was interrupted: codex exec cannot stop a turn cleanly, so its process group was "
            f"terminated and the turn's last steps may be lost;{resume or ' nothing was saved to resume'}"
        )
        return HarnessResult(status=RunStatus.INTERRUPTED, error=error.to_info(), **common)
    if mapping.failure is not None:
        return HarnessResult(status=RunStatus.FAILED, error=mapping.failure.to_info(), **common)
    return HarnessResult(status=RunStatus.SUCCESS, **common)


def _child_env(spec: AgentRunSpec, options: CodexExecOptions) -> dict[str, str]:
    env = {**os.environ, **spec.env}
    if options.codex_home is not None:
        env["CODEX_HOME"] = str(codex_home(options.codex_home, spec.env))
    return env
