"""One ACP agent process: the JSON-RPC peer, the handshake, the session, and where each message goes.

Layer: provider lifecycle. Knows the client side of ACP around a prompt turn (`initialize`, `session/new|load|
resume`, `session/set_mode`, `session/set_config_option`) and routes updates and permission requests to the prompt
turn being played (`turn.PromptTurn`). Knows nothing of rendering, run logs or how approvals are decided.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from harness_core import (
    AgentRunSpec,
    AuthFailedError,
    HarnessError,
    HarnessResult,
    InvalidSpecError,
    ProtocolError,
    ProviderRaw,
    SessionNotFoundError,
    SessionSpec,
    UnsupportedFeatureError,
)
from harness_core.provider import ChildProcess, JsonRpcError, JsonRpcPeer

from harness_acp._version import __version__
from harness_acp.errors import prompt_error
from harness_acp.mcp_servers import session_servers
from harness_acp.options import AcpOptions
from harness_acp.profiles import ModeKey
from harness_acp.turn import PromptTurn, trace_meta

__all__ = ["PROTOCOL_VERSION", "READ_ONLY_MODE_IDS", "AcpConnection", "client_initialize"]

READ_ONLY_MODE_IDS = ("read-only", "readonly", "read_only", "plan")
"""Session mode ids that are read-only modes in the agents seen so far (codex-acp read-only; Gemini CLI and Qwen
Code plan), tried in this order for an agent without a profile under `--sandbox read-only`."""

PROTOCOL_VERSION = 1
_METHOD_NOT_FOUND = -32601
_AUTH_REQUIRED = -32000  # ACP's "authentication required"
_RESOURCE_NOT_FOUND = -32002
_INVALID_PARAMS = -32602
_SESSION_STATE = frozenset({"current_mode_update", "config_option_update", "usage_update"})


def client_initialize() -> dict[str, Any]:
    """The `initialize` params Harness sends: no client file system, no terminals (the agent uses its own tools)."""
    return {
        "protocolVersion": PROTOCOL_VERSION,
        "clientCapabilities": {"fs": {"readTextFile": False, "writeTextFile": False}, "terminal": False},
        "clientInfo": {"name": "harness", "title": "Harness", "version": __version__},
    }


class AcpConnection:
    """The agent process's peer and its one ACP session. `open` does the handshake and opens the session;
    `play` plays one prompt turn. `closed` once the agent's stdout ended."""

    def __init__(self, child: ChildProcess, opts: AcpOptions, log: Any, *, agent: str,
                 modes: dict[ModeKey, str] | None = None, untrusted_modes: dict[ModeKey, str] | None = None,
                 session_meta: Callable[[AgentRunSpec | SessionSpec], dict[str, Any]] | None = None,
                 handles: frozenset[str] = frozenset(), warnings: re.Pattern[str] | None = None,
                 set_model_first: bool = False) -> None:
        self.child, self.opts, self.log, self.agent = child, opts, log, agent
        self.modes = modes or {}
        self.untrusted_modes = untrusted_modes or {}  # replace `modes` where the spec does not trust the project
        self.session_meta, self.handles, self.warnings = session_meta, handles, warnings
        self.set_model_first = set_model_first
        self.opened: AgentRunSpec | SessionSpec | None = None  # the spec the session was opened with
        self.applied_model: str | None = None
        self.init: dict[str, Any] = {}
        self.session_id: str | None = None
        self.session: dict[str, Any] = {}  # session/new's (or load's) answer: modes, configOptions, models
        self.current_mode: str | None = None
        self.initial_mode: str | None = None
        self.initial_config: dict[str, Any] = {}
        self.closed = False
        self.turn: PromptTurn | None = None
        self.broken: str | None = None
        self.cost: float | None = None  # the session's cumulative cost, as the agent last reported it
        self.path: str | None = None  # the agent's PATH, where a stdio MCP server's bare command is looked up
        self.peer = JsonRpcPeer(child, on_notification=self._on_notification, on_request=self._on_request,
                                on_error=self._on_error, closed_error=self.closed_error)

    def closed_error(self) -> HarnessError:
        return self.child.exit_error(f"{self.agent} exited before answering")

    async def read(self) -> None:
        """The peer's read loop, for the life of the process."""
        try:
            await self.peer.run()
        finally:
            self.closed = True
            if self.turn is not None:
                self.turn.connection_closed()

    async def request(self, method: str, params: dict[str, Any], timeout: float | None) -> Any:
        try:
            return await self.peer.request(method, params, timeout=timeout)
        except TimeoutError:
            if self.closed:
                raise self.closed_error() from None
            raise ProtocolError(
                f"{self.agent} did not answer {method} within {timeout:g}s; raise -o startup_timeout / "
                "-o request_timeout if the machine is slow", method=method) from None

    # -- handshake and session -----------------------------------------------------------------------------

    @property
    def capabilities(self) -> dict[str, Any]:
        caps = self.init.get("agentCapabilities")
        return caps if isinstance(caps, dict) else {}

    async def initialize(self) -> dict[str, Any]:
        """`initialize`; the agent's answer (also kept in `init`).

        Raises:
            ProtocolError: no answer within `startup_timeout`, an error, or a protocol version other than 1.
        """
        hint = ("; is it an ACP agent? Many need a flag to speak ACP on stdio (such as --acp): check the command "
                "with the agent's documentation")
        try:
            result = await self.request("initialize", client_initialize(), self.opts.startup_timeout)
        except JsonRpcError as exc:
            raise ProtocolError(f"{self.agent} refused initialize ({exc.message}){hint}", method="initialize",
                                rpc_code=exc.code) from None
        except ProtocolError as exc:
            raise ProtocolError(f"{exc.message}{hint}", **exc.details) from None
        except HarnessError as exc:  # it exited: the error says how, with its stderr
            exc.message = f"{exc.message}{hint}"
            exc.args = (exc.message,)
            raise
        if not isinstance(result, dict):
            raise ProtocolError(f"{self.agent} answered initialize with no object{hint}", line=str(result))
        version = result.get("protocolVersion")
        if version != PROTOCOL_VERSION:
            raise ProtocolError(f"{self.agent} speaks ACP protocol version {version!r}; Harness speaks version "
                                f"{PROTOCOL_VERSION}: use a release of the agent that supports ACP v1",
                                method="initialize")
        self.init = result
        return result

    async def open(self, spec: AgentRunSpec | SessionSpec, trace: Mapping[str, str] | None = None) -> None:
        """`initialize`, then a new session or the session `spec.resume_session` names (its `_meta` carrying
        `trace`, a W3C carrier), then its mode, model and reasoning effort.

        Raises:
            AuthFailedError: the agent wants a login first.
            SessionNotFoundError: the session to resume is unknown to the agent.
            UnsupportedFeatureError: the agent can neither load nor resume sessions.
            InvalidSpecError: a mode, model or effort the agent does not offer.
            ProtocolError: the agent refused or did not answer.
        """
        await self.initialize()
        cwd = str(spec.cwd)
        servers = session_servers(spec.mcp_servers, self.capabilities, agent=self.agent, path=self.path)
        params: dict[str, Any] = {"cwd": cwd, "mcpServers": servers}
        meta = {**(self.session_meta(spec) if self.session_meta is not None else {}), **trace_meta(trace)}
        if meta:
            params["_meta"] = meta
        self.opened = spec
        self.applied_model = spec.model  # what the launch set, for agents that take it there (`handles`)
        timeout = self.opts.startup_timeout
        if spec.resume_session is None:
            result = await self._session_request("session/new", params, timeout)
            self.session_id = str(result.get("sessionId") or "")
            if not self.session_id:
                raise ProtocolError(f"{self.agent} answered session/new without a sessionId", line=str(result))
        else:
            method = self._resume_method()
            params["sessionId"] = spec.resume_session
            result = await self._session_request(method, params, timeout, resume=spec.resume_session)
            self.session_id = spec.resume_session
        self.session = result
        modes = result.get("modes")
        self.current_mode = self.initial_mode = modes.get("currentModeId") if isinstance(modes, dict) else None
        self.initial_config = {str(o.get("category") or o.get("id")): o.get("currentValue")
                               for o in result.get("configOptions") or [] if isinstance(o, dict)}
        models = result.get("models")
        if "model" not in self.initial_config and isinstance(models, dict):  # `session/set_model` agents
            self.initial_config["model"] = models.get("currentModelId")
        await self.apply(spec)

    def _resume_method(self) -> str:
        caps = self.capabilities
        if caps.get("loadSession") is True:
            return "session/load"
        if isinstance((caps.get("sessionCapabilities") or {}).get("resume"), dict):
            return "session/resume"
        raise UnsupportedFeatureError(self.agent, "session", [], "the agent advertises neither loadSession nor "
                                      "session resume in its initialize answer")

    async def _session_request(self, method: str, params: dict[str, Any], timeout: float, *,
                               resume: str | None = None) -> dict[str, Any]:
        try:
            result = await self.request(method, params, timeout)
        except JsonRpcError as exc:
            if exc.code == _AUTH_REQUIRED or "auth" in exc.message.lower():
                methods = [str(m.get("name") or m.get("id")) for m in self.init.get("authMethods") or []
                           if isinstance(m, dict)]
                raise AuthFailedError(
                    f"{self.agent} needs a login before a session ({exc.message}); log in with the agent itself"
                    + (f" ({', '.join(methods)})" if methods else "") + ", or set its API key in the environment",
                    rpc_code=exc.code) from None
            if resume is not None and (exc.code == _RESOURCE_NOT_FOUND or "not found" in exc.message.lower()):
                raise SessionNotFoundError(resume, f"{self.agent}: {exc.message}", agent=self.agent) from None
            raise ProtocolError(f"{self.agent} refused {method}: {exc.message}", method=method,
                                rpc_code=exc.code) from None
        return result if isinstance(result, dict) else {}

    async def apply(self, spec: AgentRunSpec | SessionSpec) -> None:
        """Put the session in the mode the spec's sandbox and approval choose (or `-o mode`), with its model and
        reasoning effort (each only when it differs from the session's current one).

        Raises:
            InvalidSpecError: the agent offers no such mode, or no way to choose the model or effort.
        """
        assert self.session_id is not None
        key = (spec.sandbox.value, "never" if spec.approval.value == "never" else "ask")
        modes = self.session.get("modes")
        table = self.modes if spec.trust_project else {**self.modes, **self.untrusted_modes}
        mode = self.opts.mode or table.get(key) or self._read_only_mode(spec, modes) or self.initial_mode
        if mode is not None and mode != self.current_mode and isinstance(modes, dict):
            offered = [str(m.get("id")) for m in modes.get("availableModes") or [] if isinstance(m, dict)]
            if offered and mode not in offered:
                raise InvalidSpecError(f"{self.agent} has no session mode {mode!r}; it offers: {', '.join(offered)} "
                                       "(-o mode=ID)")
            await self._set("session/set_mode", {"sessionId": self.session_id, "modeId": mode})
            self.current_mode = mode
        if "model" not in self.handles:
            await self._config("model", spec.model, "--model")
        elif spec.model != self.applied_model:  # the launch set the session's model; a turn's differs (or is back)
            await self._config("model", spec.model or self.initial_config.get("model"), "--model")
        self.applied_model = spec.model
        await self._config("thought_level", spec.effort, "--effort")

    def _read_only_mode(self, spec: AgentRunSpec | SessionSpec, modes: Any) -> str | None:
        """For an agent Harness knows no modes of (the generic provider): its read-only mode under `read-only`,
        found by its usual ids. Without one the sandbox cannot be honoured: Harness answers the permission
        requests it gets, but cannot know that the agent asks before it writes.

        Raises:
            InvalidSpecError: `read-only` and the agent offers no mode known to be read-only.
        """
        if self.modes or spec.sandbox.value != "read-only":
            return None
        offered = [str(m.get("id")) for m in (modes or {}).get("availableModes") or [] if isinstance(m, dict)] \
            if isinstance(modes, dict) else []
        found = next((m for m in READ_ONLY_MODE_IDS if m in offered), None)
        if found is None:
            raise InvalidSpecError(
                f"{self.agent} offers no read-only mode Harness knows ({', '.join(offered) or 'no modes at all'}), "
                "so --sandbox read-only cannot be honoured: name its read-only mode with -o mode=ID, or run with "
                "--sandbox workspace-write and --approval on-request to decide what it asks")
        return found

    async def _config(self, category: str, value: str | None, flag: str) -> None:
        restoring = value is None
        if value is None:  # the agent's own choice: put back if an earlier turn changed it
            value = self.initial_config.get(category)
            current = next((o.get("currentValue") for o in self.session.get("configOptions") or []
                            if isinstance(o, dict) and (o.get("category") or o.get("id")) == category), None)
            models = self.session.get("models")
            if current is None and category == "model" and isinstance(models, dict):
                current = models.get("currentModelId")
            if value is None or current == value:
                return
        options = [o for o in self.session.get("configOptions") or [] if isinstance(o, dict)]
        option = next((o for o in options if o.get("category") == category or o.get("id") == category), None)
        models = self.session.get("models")
        if (option is None or self.set_model_first) and category == "model" and isinstance(models, dict):
            await self._set_model(value, models)
            return
        if option is None and restoring:  # no longer offered (another model has no efforts): nothing to put back
            return
        if option is None:
            raise InvalidSpecError(f"{self.agent} offers no way to choose the {category.replace('_', ' ')} over ACP; "
                                   f"omit {flag}")
        if option.get("currentValue") == value:
            return
        try:  # the agent judges the value (its list may not name every model it can use)
            answer = await self.request("session/set_config_option", {
                "sessionId": self.session_id, "configId": option.get("id"), "value": value},
                self.opts.request_timeout)
        except JsonRpcError as exc:
            values = [str(v.get("value")) for v in option.get("options") or [] if isinstance(v, dict)]
            raise InvalidSpecError(f"{self.agent} refused {category.replace('_', ' ')} {value!r} ({exc.message}); "
                                   f"it offers: {', '.join(values) or 'none listed'} ({flag})") from None
        option["currentValue"] = value
        if isinstance(answer, dict) and isinstance(answer.get("configOptions"), list):
            self.session["configOptions"] = answer["configOptions"]

    async def _set_model(self, value: str, models: dict[str, Any]) -> None:
        """`session/set_model` (an unstable ACP method, offered by agents that answer `session/new` with `models`)."""
        if models.get("currentModelId") == value:
            return
        try:
            await self.request("session/set_model", {"sessionId": self.session_id, "modelId": value},
                               self.opts.request_timeout)
        except JsonRpcError as exc:
            offered = [str(m.get("modelId")) for m in models.get("availableModels") or [] if isinstance(m, dict)]
            raise InvalidSpecError(f"{self.agent} refused model {value!r} ({exc.message}); it offers: "
                                   f"{', '.join(offered) or 'none listed'} (--model)") from None
        models["currentModelId"] = value

    async def _set(self, method: str, params: dict[str, Any]) -> Any:
        try:
            return await self.request(method, params, self.opts.request_timeout)
        except JsonRpcError as exc:
            raise ProtocolError(f"{self.agent} refused {method}: {exc.message}", method=method,
                                rpc_code=exc.code) from None

    @property
    def model(self) -> str | None:
        for option in self.session.get("configOptions") or []:
            if isinstance(option, dict) and (option.get("category") == "model" or option.get("id") == "model"):
                value = option.get("currentValue")
                return str(value) if value is not None else None
        models = self.session.get("models")
        if isinstance(models, dict) and models.get("currentModelId"):
            return str(models["currentModelId"])
        return None

    async def play(self, turn: PromptTurn) -> HarnessResult:
        """Play `turn` on the session (it must be this connection's); its result."""
        self.turn = turn
        try:
            return await turn.play()
        finally:
            if self.turn is turn:
                self.turn = None

    def prompt_failed(self, exc: JsonRpcError) -> HarnessError:
        return prompt_error(self.agent, exc)

    # -- wire callbacks ------------------------------------------------------------------------------------

    def _on_notification(self, method: str, params: Any, msg: dict[str, Any]) -> Any:
        turn = self.turn
        if method == "session/update" and params.__class__ is dict:
            update = params.get("update")
            if update.__class__ is dict and update.get("sessionUpdate") in _SESSION_STATE:
                self._track(update)
            if turn is not None and params.get("sessionId") in (None, self.session_id):
                return turn.on_update(update)
            self.log.debug("acp_update_outside_a_turn", kind=(update or {}).get("sessionUpdate"))
            return None
        if turn is not None:
            return turn.ctx.emit(ProviderRaw(method=method, payload=params))
        self.log.debug("acp_notification_outside_a_turn", method=method)
        return None

    def _track(self, update: dict[str, Any]) -> None:
        """The session's state the agent changes by itself, in or out of a turn: its mode (an agent may leave the
        mode Harness chose), its config options, and its cumulative cost (also while `session/load` replays)."""
        kind = update.get("sessionUpdate")
        if kind == "current_mode_update" and isinstance(update.get("currentModeId"), str):
            self.current_mode = update["currentModeId"]
        elif kind == "config_option_update" and isinstance(update.get("configOptions"), list):
            self.session["configOptions"] = update["configOptions"]
        elif kind == "usage_update" and self.turn is None:
            cost = update.get("cost")
            if isinstance(cost, dict) and isinstance(cost.get("amount"), (int, float)):
                self.cost = float(cost["amount"])

    async def _on_request(self, method: str, params: Any, msg: dict[str, Any]) -> Any:
        turn = self.turn
        if method == "session/request_permission" and not isinstance(params, dict):
            raise JsonRpcError(_INVALID_PARAMS, "session/request_permission needs an object of params")
        if method == "session/request_permission" and isinstance(params, dict):
            if turn is None:
                self.log.warning("acp_permission_outside_a_turn")
                return {"outcome": {"outcome": "cancelled"}}
            return await turn.on_permission(params, str(msg.get("id")))
        if turn is not None:
            await turn.ctx.emit(ProviderRaw(method=method, payload=params))
        raise JsonRpcError(_METHOD_NOT_FOUND, f"harness does not offer {method!r} (it advertised no fs or terminal "
                           "capabilities)")

    async def _on_error(self, err: HarnessError) -> None:
        if self.turn is None:
            self.log.warning("acp_protocol_error_outside_a_turn", error=str(err))
            return
        await self.turn.on_error(err)
