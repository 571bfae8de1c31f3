"""Sessions: several turns on one agent, each turn a run (`open_session`, `Session`; exported by `harness_core`).

Layer: core runtime (a run owner, like `open_run`). Knows the run API's checks, `LiveRun`, the provider's
session interface and the run logs; knows nothing of any concrete provider or of rendering. Live and resumed
sessions, one turn at a time, budgets: docs/sessions.md.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
from anyio.abc import TaskStatus
from pydantic import ValidationError

from harness_core._logging import get_logger
from harness_core._provider_interface import ProviderOptions, ProviderSession, RunContext
from harness_core._run.api import played, unwrap_caller_exception
from harness_core._run.approvals import Approver
from harness_core._run.budget import Budget
from harness_core._run.live import LiveRun, Steer
from harness_core._run.pipe import EventCallback
from harness_core._run.probe import ProbedProvider, prepare
from harness_core._run.run_files import RunLogs
from harness_core._run.session.provider_context import SessionProcessContext
from harness_core._run.started import capabilities_of
from harness_core._run.tool_serving import checked_tools, new_tool_server, served, tool_transport
from harness_core.capabilities import Capability, missing_capabilities
from harness_core.errors import (
    InvalidSpecError,
    SessionBusyError,
    SessionClosedError,
    UnsupportedFeatureError,
)
from harness_core.events import HarnessResult, SessionTurn, Usage
from harness_core.mcp import server_secrets
from harness_core.plugins import PluginHost, get_host
from harness_core.redaction import RunSecrets
from harness_core.spec import AgentRunSpec, ApprovalPolicy, SandboxMode, SessionSpec
from harness_core.store import new_run_id, validate_run_id
from harness_core.tools.tool import Tool

if TYPE_CHECKING:
    from harness_core.tools.server import ToolServer

__all__ = ["Session", "open_session"]

_CLOSE_DEADLINE = 20.0
"""Seconds a live session's provider gets to shut its process down before the runner cancels it."""
_TURN_END_DEADLINE = 5.0
"""Seconds past the interrupt grace a live turn gets to end when its session closes, before its stream closes."""
_OVERRIDES = ("model", "approval", "sandbox", "effort", "output_schema")
"""The spec fields `Session.turn` takes as per-turn overrides."""
_ENDS_THE_PROCESS = frozenset({"process_exited"})
"""Error codes of a turn after which a live session's process is gone."""


@asynccontextmanager
async def open_session(
    spec: SessionSpec | AgentRunSpec | None = None,
    provider: str | None = None,
    *,
    approver: Approver | None = None,
    on_event: EventCallback | None = None,
    runs_dir: str | Path | None = None,
    run_log: bool = True,
    host: PluginHost | None = None,
    session_id: str | None = None,
    buffer: int = 256,
    interrupt_grace: float = 5.0,
    tools: Iterable[Tool] | None = None,
) -> AsyncIterator[Session]:
    """Open a session on `provider` with `spec`'s settings (an `AgentRunSpec`'s prompt is not played: each
    turn brings its own) and give it to the caller; closing the block closes the session (a live turn is
    interrupted, then the process is shut down in bounded steps).

    Raises (before any turn): ProviderNotFoundError, UnsupportedFeatureError (the provider has no sessions, or
    lacks what the spec needs), InvalidSpecError, CliNotFoundError, CliVersionUnsupportedError, and what a live
    provider raises when its process cannot start. The caller's own exception propagates unchanged.

    `tools`: `@tool` functions every turn's agent may call, served for the whole session (as `open_run`'s).
    """
    host = host or get_host()
    settings = spec if isinstance(spec, SessionSpec) else SessionSpec.of(spec) if spec is not None else SessionSpec()
    given_tools = checked_tools(tools, settings)
    probed = await prepare(settings, provider, host)
    capabilities = capabilities_of(probed)
    if Capability.SESSION not in capabilities and Capability.LIVE_SESSION not in capabilities:
        others = [p for p in host.providers_with(Capability.SESSION) if p != probed.name]
        raise UnsupportedFeatureError(probed.name, Capability.SESSION.value, others,
                                      "a session plays several turns of one conversation")
    tool_server = new_tool_server(given_tools, settings,
                                  object_results=probed.registered.cls.info.mcp_object_results)
    serves = tool_server is not None and bool(tool_server.served)
    transport = tool_transport(probed.name, capabilities, host.providers_with) if serves else None
    async with served(tool_server, settings, transport) as served_settings:
        session = Session(served_settings, probed, host=host, session_id=session_id or new_run_id(),
                          approver=approver, on_event=on_event, runs_dir=runs_dir, run_log=run_log, buffer=buffer,
                          interrupt_grace=interrupt_grace, tools=tool_server)
        session._observe_opened()
        try:
            async with _held(session) as held:
                yield held
        finally:
            session._observe_closed()  # once (a process that never started is closed here too)


@asynccontextmanager
async def _held(session: Session) -> AsyncIterator[Session]:
    """The session's host task (a live one's process) around the caller's block; closed (shielded) after it. The
    caller's own exception comes out unchanged."""
    thrown: BaseException | None = None
    try:
        async with anyio.create_task_group() as tg:
            if session.live:
                try:
                    await tg.start(session._host)
                except BaseException as exc:  # the process did not start: the caller gets why, unwrapped
                    thrown = exc
                    raise
            try:
                yield session
            except BaseException as exc:
                thrown = exc
                raise
            finally:
                await session.aclose()  # shielded inside
    except BaseException as group:
        unwrap_caller_exception(group, thrown)
        raise


class Session:
    """A conversation with one agent: `turn()` plays the next turn live, `run()` plays it to the end.

    `session_id` (Harness's, shared by the turns' runs), `provider`, `live` (one process for all turns) and
    `turns` (played so far) are known from the start; `provider_session_id` (the agent's own, to `--resume`
    later) once a turn reported it; `usage` sums the turns'; `pid` is the live agent process's; `closed` says
    why the session cannot play another turn (None while it can).
    """

    def __init__(self, spec: SessionSpec, probed: ProbedProvider, *, host: PluginHost, session_id: str,
                 approver: Approver | None, on_event: EventCallback | None, runs_dir: str | Path | None,
                 run_log: bool, buffer: int, interrupt_grace: float, tools: ToolServer | None = None) -> None:
        self._spec = spec
        self._tools = tools
        self._session_id = validate_run_id(session_id)
        self._provider_name = probed.name
        self._live = Capability.LIVE_SESSION in capabilities_of(probed)
        self._turns = 0
        self._provider_session_id: str | None = spec.resume_session
        self._usage = Usage()
        self._closed: str | None = None
        self._probed = probed
        self._host_plugins = host
        self._approver = approver
        self._on_event = on_event
        self._runs_dir = runs_dir
        self._run_log = run_log
        self._buffer = buffer
        self._grace = interrupt_grace
        info = probed.registered.cls.info
        self._secrets = RunSecrets.of_run(spec.env, spec.provider_options, secret_flags=info.secret_flags,
                                          public_env=info.public_env).with_values(server_secrets(spec.mcp_servers))
        if tools is not None:
            self._secrets = self._secrets.with_values([tools.secret])
        self._log = get_logger("harness.session").bind(session_id=self.session_id, provider=probed.name)
        self._context = SessionProcessContext(self.session_id, probed.cli, spec, self._log,
                                              trace_context=lambda: host.trace_context(self._session_id))
        self._observed = False  # `harness_session_opened` was called: `harness_session_closed` is owed
        self._provider_session: ProviderSession | None = None
        self._live_turn: LiveRun | None = None
        self._closing = anyio.Event()
        self._host_done = anyio.Event()
        self._host_scope = anyio.CancelScope()

    @property
    def session_id(self) -> str:
        """Harness's id of the session: every turn's `run_started` names it (`harness runs --session ID`)."""
        return self._session_id

    @property
    def provider(self) -> str:
        """The name of the provider playing the session."""
        return self._provider_name

    @property
    def live(self) -> bool:
        """Whether one agent process plays every turn (`live_session`); else each turn is a new process resuming
        the conversation (`session`)."""
        return self._live

    @property
    def turns(self) -> int:
        """How many turns were started so far (the next turn's index)."""
        return self._turns

    @property
    def provider_session_id(self) -> str | None:
        """The agent's own session id, once a turn reported it (or the spec's `resume_session`): pass it as
        `resume_session` (on the command line `--resume`) to continue the conversation later."""
        return self._provider_session_id

    @property
    def usage(self) -> Usage:
        """The turns' usage (tokens, cost) summed: what the session's budgets are checked against."""
        return self._usage

    @property
    def closed(self) -> str | None:
        """Why the session can play no more turns (its process is gone, it was closed); None while it can."""
        return self._closed

    @property
    def spec(self) -> SessionSpec:
        """The session's settings (every turn starts from them; read-only: a turn's overrides are its own)."""
        return self._spec

    @property
    def overridable(self) -> frozenset[str]:
        """The spec fields a turn may override (`turn(model=...)`): all of them for a session that plays each turn
        as a new process; for a live one, those its provider can change on the running process."""
        if not self.live:
            return frozenset(_OVERRIDES)
        return frozenset(_OVERRIDES) & self._probed.registered.cls.info.session_overrides

    @property
    def pid(self) -> int | None:
        """The pid of the live session's process as spawned (the agent's supervisor, which takes the agent down
        with it when killed); None for a session without one, or before it started."""
        return self._context.pid

    # --- turns ---------------------------------------------------------------------------------------------

    @asynccontextmanager
    async def turn(self, prompt: str, *, model: str | None = None, approval: ApprovalPolicy | str | None = None,
                   sandbox: SandboxMode | str | None = None, effort: str | None = None,
                   output_schema: dict[str, Any] | None = None, run_id: str | None = None) -> AsyncIterator[LiveRun]:
        """Play the next turn and give it to the caller live, exactly like `open_run`'s run (iterate it, then
        `wait()`; `interrupt()`, `steer()`). The overrides apply to this turn only: the next turn without them
        gets the session's settings back.

        Raises (before the turn starts): SessionBusyError, SessionClosedError, InvalidSpecError,
        UnsupportedFeatureError (an override the provider cannot honour, naming the providers that can),
        BudgetExceededError (earlier turns already spent the session's budget).
        """
        overrides = {"model": model, "approval": approval, "sandbox": sandbox, "effort": effort,
                     "output_schema": output_schema}
        spec = self._turn_spec(prompt, {k: v for k, v in overrides.items() if v is not None})
        rid = validate_run_id(run_id) if run_id is not None else new_run_id()
        budget = Budget.of(spec, used=self.usage, scope="session")
        spent = budget.spent() if budget is not None else None
        if spent is not None:
            raise spent
        logs = RunLogs.open(self._runs_dir, rid, run_log=self._run_log, secrets=self._secrets)
        steer: Steer | None = None
        if self.live and Capability.STEER in capabilities_of(self._probed):
            steer = self._steer
        live = LiveRun(spec, self._probed, host=self._host_plugins, run_id=rid, logs=logs, approver=self._approver,
                       on_event=self._on_event, buffer=self._buffer, interrupt_grace=self._grace,
                       play=self._play if self.live else None, steer=steer, budget=budget,
                       session_turn=SessionTurn(session=self.session_id, index=self.turns, live=self.live,
                                                pid=self.pid),
                       idle_interrupts=self.live, tools=self._tools)
        self._live_turn = live
        self._turns += 1
        try:
            async with played(live):
                yield live
        finally:
            logs.close()
            self._live_turn = None
            if live.result is not None:
                self._after_turn(live.result, stopped_by_runner=live.stopped_by_runner)

    async def run(self, prompt: str, *, model: str | None = None, approval: ApprovalPolicy | str | None = None,
                  sandbox: SandboxMode | str | None = None, effort: str | None = None,
                  output_schema: dict[str, Any] | None = None, run_id: str | None = None) -> HarnessResult:
        """Play the next turn to the end and return its result (keyword arguments as for `turn`)."""
        async with self.turn(prompt, model=model, approval=approval, sandbox=sandbox, effort=effort,
                             output_schema=output_schema, run_id=run_id) as live:
            return await live.wait()

    def _turn_spec(self, prompt: str, overrides: dict[str, Any]) -> AgentRunSpec:
        if self.closed is not None:
            raise SessionClosedError(self._closed_message(), session=self.session_id, reason=self.closed,
                                     provider_session_id=self.provider_session_id)
        if self._live_turn is not None:
            raise SessionBusyError(
                f"turn {self._live_turn.session_turn.index if self._live_turn.session_turn else '?'} of this "
                "session is still live; turns are played one at a time: let it end (`await live.wait()`, or "
                "`live.interrupt()`) and leave its `async with session.turn(...)` block before the next",
                session=self.session_id)
        overrides = {k: v for k, v in overrides.items() if _value(v) != _value(getattr(self._spec, k))}
        if self.live:
            refused = sorted(set(overrides) - self.overridable)
            if refused:
                can = sorted(name for name, p in self._host_plugins.providers.items()
                             if {Capability.SESSION, Capability.LIVE_SESSION} & p.cls.info.capabilities
                             and (Capability.LIVE_SESSION not in p.cls.info.capabilities
                                  or refused[0] in p.cls.info.session_overrides))
                raise UnsupportedFeatureError(
                    self.provider, f"a per-turn {refused[0]}", can,
                    f"its live session keeps {refused[0]} for the whole session: set it on the session instead "
                    f"(SessionSpec({refused[0]}=...); harness chat --{refused[0].replace('_', '-')})")
        if not self.live and self.provider_session_id is not None:
            overrides["resume_session"] = self.provider_session_id
        try:
            spec = self._spec.turn(prompt, **overrides)
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'turn'}: {e['msg']}" for e in exc.errors())
            raise InvalidSpecError(f"invalid turn: {problems}", session=self.session_id) from None
        missing = missing_capabilities(spec.needed_capabilities(), capabilities_of(self._probed))
        if missing:
            others = [p for p in self._host_plugins.providers_with(missing[0]) if p != self.provider]
            raise UnsupportedFeatureError(self.provider, missing[0].value, others, "the turn needs it")
        return spec

    async def _play(self, spec: AgentRunSpec, options: ProviderOptions, ctx: RunContext) -> HarnessResult:
        psession = self._provider_session
        if psession is None or self._host_done.is_set():
            raise SessionClosedError(self._closed_message(), session=self.session_id)
        return await psession.turn(spec, ctx)

    async def _steer(self, text: str, ctx: RunContext) -> bool:
        psession = self._provider_session
        if psession is None:
            return False
        return await psession.steer(text, ctx)

    def _after_turn(self, result: HarnessResult, *, stopped_by_runner: bool) -> None:
        self._usage = self.usage + result.usage
        if result.session_id:
            self._provider_session_id = result.session_id
        if not self.live:
            return
        error = result.error
        broken = self._provider_session.broken if self._provider_session is not None else None
        if broken:
            self._end(broken)
        elif error is not None and error.code in _ENDS_THE_PROCESS:
            self._end("its agent process exited (or was killed)")
        elif stopped_by_runner:  # the agent may still be playing that turn: the next must not go to it
            why = "did not end when interrupted" if error is None or error.code != "idle_timeout" else "went silent"
            self._end(f"its last turn {why} and was stopped hard")

    def _end(self, why: str) -> None:
        if self.closed is None:
            self._closed = why
            self._log.info("session_closed", reason=why)
        self._closing.set()

    def _closed_message(self) -> str:
        resume = (f"; its conversation continues in a new session resuming {self.provider_session_id!r} "
                  f"(SessionSpec(resume_session=...); on the command line --resume {self.provider_session_id})"
                  if self.provider_session_id else "")
        return f"session {self.session_id} is closed ({self.closed or 'its agent process is gone'}){resume}"

    # --- the live process ----------------------------------------------------------------------------------

    async def _host(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """The live session's process, in its own task for the whole session: entered, ready, then held until
        the session closes. What fails before it is ready propagates to `open_session`; after that it closes
        the session instead (a live turn is interrupted and ends with the provider's error)."""
        probed = self._probed
        started = False
        try:
            with self._host_scope:
                async with probed.instance.open_session(self._spec, probed.options, self._context) as psession:
                    self._provider_session = psession
                    started = True
                    # From now on only `aclose` (shielded, bounded) takes the process down, after the live turn:
                    # the caller's cancelled scope must not kill it under a turn still being interrupted.
                    self._host_scope.shield = True
                    task_status.started()
                    await self._closing.wait()
        except Exception as exc:
            if not started:
                raise
            self._log.warning("session_process_failed", error=f"{type(exc).__name__}: {exc}")
            self._end(f"its agent process failed: {type(exc).__name__}: {exc}")
        finally:
            self._host_done.set()
            if self._live_turn is not None and started:
                self._live_turn.interrupt()

    async def aclose(self) -> None:
        """Close the session: a live turn is interrupted (grace, then hard stop), then the process is shut down
        (bounded). Idempotent; shielded."""
        with anyio.CancelScope(shield=True):
            live = self._live_turn
            if live is not None:  # closed from another task while a turn plays: its consumer still reads it to
                live.interrupt()  # `done`; its stream closes when its `async with session.turn(...)` block ends
                with anyio.move_on_after(self._grace + _TURN_END_DEADLINE):
                    await live.finished.wait()
                if not live.finished.is_set():
                    live.stop()
                    with anyio.move_on_after(_TURN_END_DEADLINE):
                        await live.finished.wait()
            if self.closed is None:
                self._closed = "closed by its owner"
            self._closing.set()
            if self.live:
                with anyio.move_on_after(_CLOSE_DEADLINE):
                    await self._host_done.wait()
                if not self._host_done.is_set():
                    self._log.error("session_close_overran", deadline=_CLOSE_DEADLINE)
                    self._host_scope.cancel()
                    with anyio.move_on_after(_CLOSE_DEADLINE):
                        await self._host_done.wait()
            self._observe_closed()

    # --- observers -----------------------------------------------------------------------------------------

    def _observe_opened(self) -> None:
        """`harness_session_opened`, before the live process is spawned (skipped when no plugin observes runs)."""
        host = self._host_plugins
        if not host.observes_runs:
            return
        self._observed = True
        try:
            host.pm.hook.harness_session_opened(session_id=self.session_id, spec=self._spec, provider=self.provider,
                                                ts=time.time(), secrets=self._secrets.known,
                                                genai_provider=self._probed.registered.cls.info.genai_provider)
        except Exception:  # noqa: BLE001 - observers must not break sessions
            self._log.exception("harness_session_opened plugin raised; ignored")

    def _observe_closed(self) -> None:
        """`harness_session_closed`, once, for a session `harness_session_opened` was called for."""
        if not self._observed:
            return
        self._observed = False
        try:
            self._host_plugins.pm.hook.harness_session_closed(session_id=self.session_id,
                                                              reason=self.closed or "closed", ts=time.time())
        except Exception:  # noqa: BLE001
            self._log.exception("harness_session_closed plugin raised; ignored")


def _value(value: Any) -> Any:
    """An override's value as the spec holds it (an enum's string), to tell a real override from a repeat."""
    return getattr(value, "value", value)
