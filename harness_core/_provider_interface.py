"""The provider interface: what a provider plugin implements, and the context a run gives it.

Layer: plugin contract (re-exported by the `harness_core.provider` façade). Knows nothing of concrete
providers or of how events are rendered or stored. A provider is `class MyProvider(Provider[MyOptions])`
with `info`, `probe` and `run`; the runner does the rest (docs/providers.md, the provider interface).
"""

from __future__ import annotations

import abc
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Protocol, TypeVar, get_args, get_origin

from pydantic import BaseModel, ConfigDict, ValidationError

from harness_core.capabilities import Capability, ProviderInfo
from harness_core.errors import InvalidSpecError

if TYPE_CHECKING:
    import anyio

    from harness_core._logging import BoundLogger
    from harness_core.events import ApprovalDecision, ApprovalRequested, HarnessEvent, HarnessResult
    from harness_core.scripted.backends import ScriptedBackend
    from harness_core.scripted.scenarios import Scenario
    from harness_core.spec import AgentRunSpec, SessionSpec
    from harness_core.transport import ChildProcess

__all__ = [
    "AuthStatus",
    "CliInfo",
    "NoOptions",
    "OfflineSetup",
    "OptionsT",
    "Provider",
    "ProviderOptions",
    "ProviderSession",
    "RunContext",
    "SessionContext",
    "trace_env",
    "traced_env",
]


class ProviderOptions(BaseModel):
    """Base of every provider's options model: frozen, unknown keys rejected."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class NoOptions(ProviderOptions):
    """For providers that take no options."""


class CliInfo(BaseModel):
    """What `Provider.probe` found: the CLI that will run, and its version."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    path: str | None = None
    version: str | None = None
    capabilities: frozenset[Capability] | None = None
    """What this agent can do, when the provider learns it from the agent itself (a generic protocol provider
    whose agents differ): the runner then checks the spec against these, after the probe and before spawning
    the run, and `run_started` lists them. None: the provider's static `info.capabilities` hold."""


class AuthStatus(BaseModel):
    """What `Provider.check_auth` found out about the agent's credentials, without calling a model."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    logged_in: bool
    """Whether the agent has credentials it would use (it may still be refused when it calls its model)."""
    detail: str
    """What was found, for a person: e.g. "API key from ANTHROPIC_API_KEY", "not logged in". No secrets."""
    next_step: str | None = None
    """When not logged in: what to do, e.g. "run `agent login`, or set AGENT_API_KEY"."""


@dataclass
class OfflineSetup:
    """How to run a provider's real CLI against an embedded scripted model backend on 127.0.0.1.

    The caller starts `backend` (a context manager) before the run, if there is one, and merges
    `provider_options` and `env` into the spec. Used by `harness run --offline`, `harness demo` and the
    contract suite (which also uses it, without a backend, to point a provider at its fake CLI).

    An offline run stays offline whatever the caller adds (`harness_core.offline.offline_spec`): the caller's
    options are merged into `provider_options` key by key (nested tables merged, lists joined), and an option or
    variable that could take the agent off its backend is refused with an `InvalidSpecError` naming it and why:
    one at, under or above a path of `pinned_options`, one named by `pinned_env`, one `check_options` objects to.
    """

    backend: ScriptedBackend | None = None
    provider_options: dict[str, Any] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    pinned_options: Mapping[str, str] | None = None
    """The options that decide where the agent connects (its model API, its config that could name another),
    as dotted paths (`config.model_provider`), each with why (for the error: "chooses the model API"). None: every
    option `provider_options` sets."""
    pinned_env: Mapping[str, str] | None = None
    """The environment variables that decide it, each with why; a caller's `spec.env` may not set one. None: every
    variable `env` sets."""
    check_options: Callable[[Mapping[str, Any]], str | None] | None = None
    """For options a path cannot judge (a free-form argument list): given the caller's options (validated, only
    those set), what would take the agent off its backend — a sentence naming the option — or None."""


class RunContext(Protocol):
    """What the runner gives a provider for one run."""

    @property
    def run_id(self) -> str: ...

    @property
    def log(self) -> BoundLogger:
        """A logger (`harness.run`, standard `logging` underneath) with `run_id` and `provider` bound. Silent
        unless the application configures logging."""
        ...

    @property
    def cli(self) -> CliInfo:
        """What the runner's probe found (path and version of the CLI)."""
        ...

    @property
    def interrupt_requested(self) -> anyio.Event:
        """Set when the operation asks to stop the turn. A provider with the `interrupt` capability watches it,
        stops the turn on its wire and returns an `interrupted` result; the runner stops it hard after a grace
        period either way."""
        ...

    async def emit(self, event: HarnessEvent) -> None:
        """Send one event downstream. Awaits when the consumer is behind (backpressure): a provider must call
        it from the task that reads its child's output, so a slow consumer slows the child, not memory."""
        ...

    def emit_now(self, event: HarnessEvent) -> Awaitable[None] | None:
        """`emit` without a coroutine, for a provider's hot read loop, under the hot-path contract
        (`harness_core.provider.NotificationHandler`): what it returns is awaited before reading on, exactly as
        `await emit(event)` would have waited (the consumer is behind, or an `on_event` callback is set)."""
        ...

    async def request_approval(self, request: ApprovalRequested) -> ApprovalDecision:
        """Ask the operation (callback, then the `harness_approve` hook, then deny). Emits
        `approval_requested` and `approval_resolved` itself. Call it from its own task, not the reader."""
        ...

    async def withdraw_approval(self, request_id: str, reason: str) -> None:
        """Settle a request still waiting in `request_approval` (its CLI withdrew it, the turn is ending): the runner
        writes its one `approval_resolved` now (`abort`, decided by the runner, with `reason`); then cancel the task
        waiting in `request_approval`. A no-op for a request already settled. Never emit `approval_resolved`."""
        ...

    def spawn(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | Path | None = None,
        **options: Any,
    ) -> ChildProcess:
        """The agent's child process for this run (not started: use it as `async with`). Wire recording is
        wired here: with `--record-wire`, every line to and from the child reaches the wire log. `env` defaults
        to `{**os.environ, **spec.env}` and `cwd` to `spec.cwd`; `options` are `ChildProcess`'s own (`stdin`,
        `max_line_bytes`, `stderr_tail_bytes`, the shutdown timeouts). For the agent's own child only: a tool
        command a provider runs itself is not agent protocol — start it with `ChildProcess` directly."""
        ...

    def trace_context(self) -> dict[str, str]:
        """The W3C trace context of this run (its span; in a session, this turn's), as a carrier:
        `{"traceparent": "00-<trace id>-<span id>-<flags>", "tracestate": ...}` (`tracestate` only when there is
        one), or `{}` when no observer traces the run. Ask for it each time it is handed on — when spawning the
        agent (`TRACEPARENT`/`TRACESTATE` in its environment:
        `env=traced_env({**os.environ, **spec.env}, ctx.trace_context())`, which also drops an inherited
        `TRACESTATE` that would pair with the run's `TRACEPARENT`), on each request that starts a turn (a
        protocol's own field for it) — never keep one from an earlier run or turn. Cheap: no call at all without
        an observer."""
        ...

    def record_wire(self, direction: str, line: bytes | str) -> None:
        """Record one raw exchange that does not go through a spawned child (an HTTP request a provider makes
        itself, say); `direction` is "in" or "out". A no-op unless the operation asked for a wire log."""
        ...

    def clock(self) -> float:
        """Seconds on a monotonic clock, to time what the agent does when its wire does not say (a tool's
        `duration_ms` from its start line to its result line). With a wire log each reading is recorded (a `clock`
        record) and `harness replay` answers the readings in order from the recording, so a duration computed from
        it replays exactly; one timed with `time.monotonic()` differs on every replay (a replay does not wait)."""
        ...

    async def read_side_input(self, name: str, read: Callable[[], bytes | None]) -> bytes | None:
        """Read something the provider needs besides its child's pipe (a file its CLI writes beside it, such as
        a session transcript): `read` runs in a worker thread and returns the bytes, or None when there are none.
        With a wire log the answer is recorded under `name` (a `file` record, scrubbed like every wire line), and
        `harness replay` answers from that record instead of calling `read`, so a replayed run sees what the
        recorded one saw, wherever it is replayed. `name` says what was read, not where (`transcript:<session
        id>`); reads of the same `name` are answered in the order they were made."""
        ...


class SessionContext(Protocol):
    """What the runner gives a provider for a live session (`Provider.open_session`): its process, for all
    its turns. Each turn still gets its own `RunContext` (emit, approvals, the interrupt flag)."""

    @property
    def session_id(self) -> str:
        """The Harness session's id (each turn's `run_started.session_turn.session`)."""
        ...

    @property
    def log(self) -> BoundLogger:
        """A logger (`harness.session`) with the session's id and the provider bound."""
        ...

    @property
    def cli(self) -> CliInfo:
        """What the runner's probe found."""
        ...

    def spawn(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | Path | None = None,
        **options: Any,
    ) -> ChildProcess:
        """The session's agent process, kept across its turns (not started: the provider enters it as `async
        with` in `open_session`, so it is shut down when the session closes). Defaults as `RunContext.spawn`;
        no wire recording (a session's turns record none)."""
        ...

    def trace_context(self) -> dict[str, str]:
        """The W3C trace context of the session (its span, the parent of every turn's), as a carrier (see
        `RunContext.trace_context`): for the process spawned once for all turns. Each turn's own context is its
        `RunContext.trace_context()`."""
        ...


class ProviderSession(abc.ABC):
    """A live session's provider side: one agent process, several turns, one at a time.

    Made by `Provider.open_session` (an async context manager that starts the process and shuts it down);
    the runner calls `turn` once per turn, each with that turn's `RunContext`, and never two at once. Events of
    a turn go to that turn's context: a reader task that outlives turns must emit into the current turn's.
    """

    broken: str | None = None
    """Set (to why, for a person) when the process can no longer be trusted with a turn though it still runs — an
    interrupt the agent never confirmed, say, so its turn may still be playing: the runner then closes the session
    after the current turn, and the next `turn()` is refused naming the reason."""

    @abc.abstractmethod
    async def turn(self, spec: AgentRunSpec, ctx: RunContext) -> HarnessResult:
        """Play one turn as `Provider.run` plays a run: `spec` is the session's settings with the turn's prompt
        and overrides applied (an override the session made sticky in the agent must be put back when a later
        turn's spec no longer has it). Raise `ProcessExitedError` when the process is gone; the runner then
        closes the session."""

    async def steer(self, text: str, ctx: RunContext) -> bool:
        """Add `text` to the running turn (`steer` capability): return once the agent took it, False when no
        turn was running. Called from the consumer's task while `turn` runs."""
        raise NotImplementedError


OptionsT = TypeVar("OptionsT", bound=ProviderOptions)


class Provider(abc.ABC, Generic[OptionsT]):
    """Base class of every provider: `class MyProvider(Provider[MyOptions])`, set `info`, implement `run`.

    `Options` is taken from the type argument (a provider without options subclasses `Provider[NoOptions]`),
    so `probe` and `run` receive the provider's own options type, validated: no casts, no isinstance checks.
    """

    info: ClassVar[ProviderInfo]
    Options: ClassVar[type[ProviderOptions]] = NoOptions

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "Options" in cls.__dict__:
            return
        for base in getattr(cls, "__orig_bases__", ()):
            origin = get_origin(base)
            if isinstance(origin, type) and issubclass(origin, Provider):  # Provider[X], or a generic base[X]
                options = [a for a in get_args(base) if isinstance(a, type) and issubclass(a, ProviderOptions)]
                if options:
                    cls.Options = options[0]
                    return

    def parse_options(self, raw: Mapping[str, Any]) -> OptionsT:
        """Validate `provider_options` with `Options`; a bad key or value becomes an `InvalidSpecError`
        that lists the valid options."""
        try:
            parsed = self.Options.model_validate(dict(raw))
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or 'options'}: {err['msg']}" for err in exc.errors()
            )
            valid = ", ".join(sorted(self.Options.model_fields)) or "none"
            raise InvalidSpecError(
                f"invalid options for provider {self.info.name!r}: {problems}. Valid options: {valid} "
                "(provider_options={KEY: VALUE}; on the command line -o KEY=VALUE).",
                provider=self.info.name,
            ) from None
        return parsed  # type: ignore[return-value]  # `Options` is OptionsT's class (set in __init_subclass__)

    async def probe(self, options: OptionsT) -> CliInfo:
        """Check that the provider can run here (binary found, version supported) and say what it found.

        Raises:
            CliNotFoundError: the CLI is not installed where the options say.
            CliVersionUnsupportedError: the CLI is older than `info.min_cli_version`.
        """
        return CliInfo()

    async def check_auth(self, options: OptionsT, cli: CliInfo) -> AuthStatus | None:
        """Whether the agent has credentials, found out without a model call (a login-status command
        of the CLI, an API key in the environment): `harness doctor` calls it, under a deadline, after a successful
        `probe` (`cli` is what the probe found). Return None when the provider cannot tell (the default: doctor
        shows "credentials: not checked"). Raise a `HarnessError` when the check itself fails.
        """
        return None

    def offline_setup(self, scenario: Scenario, workspace: Path, state_dir: Path) -> OfflineSetup | None:
        """Point this provider's real CLI at a scripted model backend playing `scenario` in `workspace` (the
        run's cwd); the CLI's own state (home, config) goes under `state_dir`. Return None when the provider
        cannot run offline (the default)."""
        return None

    def open_session(
        self, spec: SessionSpec, options: OptionsT, ctx: SessionContext
    ) -> AbstractAsyncContextManager[ProviderSession]:
        """A live session (`live_session` capability): start the agent process (`ctx.spawn`), get it ready for
        turns, and yield its `ProviderSession`; on exit shut it down (bounded). Raise a `HarnessError` when it
        cannot start. Providers without `live_session` do not override it: their sessions play each turn with
        `run`, resuming the previous turn's session."""
        raise NotImplementedError(f"provider {self.info.name!r} has no live sessions")

    @abc.abstractmethod
    async def run(self, spec: AgentRunSpec, options: OptionsT, ctx: RunContext) -> HarnessResult:
        """Play one turn of `spec`, emitting events through `ctx.emit`, and return its result.

        The runner has already checked capabilities and options. Do not emit `run_started` or `done`: the
        runner does. Raise a `HarnessError` subclass for a classified failure; anything else is reported as a
        provider crash. When cancelled, shut the child down (the transport does this under a shielded scope).
        """


def trace_env(carrier: Mapping[str, str]) -> dict[str, str]:
    """A trace-context carrier (`RunContext.trace_context()`) as the environment variables an agent CLI reads it
    from (`TRACEPARENT`, `TRACESTATE`: the OpenTelemetry convention for processes): `{}` for an empty carrier."""
    return {_TRACE_VARS[key]: value for key, value in carrier.items() if key in _TRACE_VARS and value}


def traced_env(env: Mapping[str, str], carrier: Mapping[str, str]) -> dict[str, str]:
    """`env` (an agent's environment) carrying `carrier` (`trace_env`) in place of any `TRACEPARENT`/`TRACESTATE`
    it had, so a `TRACESTATE` inherited from the caller never pairs with the run's `TRACEPARENT`; `env` as it is
    for an empty carrier (nothing traces the run: what the caller's environment says stays)."""
    extra = trace_env(carrier)
    if not extra:
        return dict(env)
    return {**{k: v for k, v in env.items() if k not in _TRACE_VARS.values()}, **extra}


_TRACE_VARS = {"traceparent": "TRACEPARENT", "tracestate": "TRACESTATE"}
