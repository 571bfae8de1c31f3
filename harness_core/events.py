"""The typed event stream of a run: one small model per event type, joined in one discriminated union.

Layer: core model. Knows nothing of providers or wire protocols. Events are frozen for everyone who
receives them; providers build them without the envelope fields (`run_id`, `seq`, `ts`), which the runner
stamps exactly once, before any observer sees the event (see `harness_core._run.pipe`).
"""

from __future__ import annotations

import enum
from typing import Annotated, Any, Literal, Union

import orjson
from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, TypeAdapter, model_serializer

from harness_core.capabilities import Capability

__all__ = [
    "CLI_WARNING",
    "ApprovalDecision",
    "ApprovalRequested",
    "ApprovalResolved",
    "ContextUsage",
    "Done",
    "ErrorEvent",
    "Notice",
    "ErrorInfo",
    "EVENT_ADAPTER",
    "FileChange",
    "FilesChanged",
    "HarnessEvent",
    "HarnessResult",
    "HarnessToolDetails",
    "ProviderRaw",
    "ReasoningDelta",
    "RunStarted",
    "RunStatus",
    "SessionStarted",
    "SessionTurn",
    "TextDelta",
    "ToolKind",
    "ToolResult",
    "ToolStatus",
    "ToolSummary",
    "ToolUse",
    "Usage",
    "event_json",
    "fast_text_delta",
    "parse_event",
]

_FROZEN = ConfigDict(frozen=True, extra="forbid")
# Built at import, not deferred (`defer_build`): a deferred event class leaves pydantic-core's inferred serialization
# (an event inside an `Any` field, `to_jsonable_python`) without a serializer, and pydantic before 2.14 builds
# deferred models racily across threads; deferring saved ~2% of a run's start-up.


class ToolKind(str, enum.Enum):
    READ = "read"
    WRITE = "write"
    EDIT = "edit"
    SEARCH = "search"
    SHELL = "shell"
    MCP = "mcp"
    WEB = "web"
    AGENT = "agent"
    UNKNOWN = "unknown"


class ToolStatus(str, enum.Enum):
    STARTED = "started"
    COMPLETED = "completed"
    FAILED = "failed"
    DECLINED = "declined"
    INTERRUPTED = "interrupted"
    """The run was interrupted or stopped (Ctrl-C, `cancel`, a budget, the idle timeout) before the tool's result
    came: the runner sets it on every result that arrives after that, whatever the agent reported (cut short,
    or never run), so every provider shows the same. Its output, if any, is the agent's."""


class RunStatus(str, enum.Enum):
    SUCCESS = "success"
    FAILED = "failed"
    INTERRUPTED = "interrupted"


class ApprovalDecision(str, enum.Enum):
    APPROVE = "approve"
    """Let the agent do it."""
    DENY = "deny"
    """Refuse this action; the turn goes on."""
    ABORT = "abort"
    """Refuse and stop the turn."""


class FileChange(BaseModel):
    """One file's change, provider-neutral: what an edit tool is about to do or did (`HarnessToolDetails.changes`),
    or what a run changed in its workspace (`FilesChanged.files`)."""

    model_config = _FROZEN

    path: str = Field(description="Relative to the run's cwd when inside it, else absolute.")
    kind: Literal["add", "modify", "delete", "rename"] = "modify"
    diff: str | None = Field(
        default=None,
        description="A unified diff (`--- a/PATH`, `+++ b/PATH`, hunks); a hunk header without line numbers "
        "(`@@ @@`) when where it lands is not known. None when the change's content is not known.",
    )
    move_path: str | None = Field(default=None, description="With `rename`: the new path.")
    note: str | None = Field(default=None, description="Why the diff is missing or partial (binary, too large).")
    before_sha256: str | None = Field(
        default=None, description="In `files_changed`: the SHA-256 of the file's bytes before the run (None: it did "
        "not exist, or was not read). With `diff`, what `harness undo` checks the content it rebuilds against.")
    after_sha256: str | None = Field(
        default=None, description="In `files_changed`: the SHA-256 of the file's bytes as the run left it (at "
        "`move_path` for a rename; None: it no longer exists, or was not read). `harness undo` reverts the file "
        "only while it still holds these bytes.")

    @model_serializer(mode="wrap")
    def _without_no_digests(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """The digests are left out when unknown: a tool's own description of a change has none."""
        data: dict[str, Any] = handler(self)
        for key in ("before_sha256", "after_sha256"):
            if data.get(key) is None:
                data.pop(key, None)
        return data


class HarnessToolDetails(BaseModel):
    """Provider-neutral description of one tool action, ready to display ("Reading file src/x.py")."""

    model_config = _FROZEN

    kind: ToolKind = ToolKind.UNKNOWN
    title: str = Field(description='Human label: "Reading file", "Running command", "Editing file", ...')
    path: str | None = None
    command: str | None = None
    cwd: str | None = None
    status: ToolStatus = ToolStatus.STARTED
    exit_code: int | None = None
    duration_ms: int | None = None
    summary: str | None = Field(default=None, description="Short output summary (bounded).")
    raw: dict[str, Any] | None = Field(default=None, description="The provider's own fields, for tools.")
    changes: tuple[FileChange, ...] = Field(
        default=(), description="The file changes the tool makes (or made), when the provider knows them."
    )

    @model_serializer(mode="wrap")
    def _without_no_changes(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """`changes` is left out when empty: most tools change no file, and the run log need not say so."""
        data: dict[str, Any] = handler(self)
        if not self.changes:
            data.pop("changes", None)
        return data


class Usage(BaseModel):
    """Token usage of one run (not cumulative over a provider thread)."""

    model_config = _FROZEN

    input_tokens: int = Field(default=0, ge=0)
    cached_input_tokens: int = Field(default=0, ge=0)
    output_tokens: int = Field(default=0, ge=0)
    reasoning_tokens: int = Field(default=0, ge=0)
    cost_usd: float | None = Field(default=None, ge=0)

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        """Figures summed (two turns' usage); the cost is known when either cost is."""
        if not isinstance(other, Usage):
            return NotImplemented
        costs = [c for c in (self.cost_usd, other.cost_usd) if c is not None]
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            cached_input_tokens=self.cached_input_tokens + other.cached_input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens,
            cost_usd=sum(costs) if costs else None,
        )

    def __sub__(self, other: Usage) -> Usage:
        """`self - other` per figure, never below zero: one run's usage from two cumulative totals of a
        provider thread. The cost is known only when both are."""
        if not isinstance(other, Usage):
            return NotImplemented
        cost = None
        if self.cost_usd is not None and other.cost_usd is not None:
            cost = max(0.0, self.cost_usd - other.cost_usd)
        return Usage(
            input_tokens=max(0, self.input_tokens - other.input_tokens),
            cached_input_tokens=max(0, self.cached_input_tokens - other.cached_input_tokens),
            output_tokens=max(0, self.output_tokens - other.output_tokens),
            reasoning_tokens=max(0, self.reasoning_tokens - other.reasoning_tokens),
            cost_usd=cost,
        )


class ErrorInfo(BaseModel):
    """A failure in stable, machine-readable form (`code` from `harness_core.errors`)."""

    model_config = _FROZEN

    code: str
    message: str
    retryable: bool = False
    details: dict[str, Any] = Field(default_factory=dict)


class HarnessResult(BaseModel):
    """The outcome of a run; carried by the final `done` event."""

    model_config = _FROZEN

    status: RunStatus
    final_text: str = ""
    session_id: str | None = None
    usage: Usage = Field(default_factory=Usage)
    duration_ms: int = Field(default=0, ge=0)
    error: ErrorInfo | None = None
    run_id: str = ""
    provider: str = ""
    structured_output: Any = Field(
        default=None, description="With `output_schema`: the final answer parsed as JSON and valid against it."
    )
    files_changed: tuple[str, ...] = Field(
        default=(), description="The files the run changed (paths of its `files_changed` event, which has the diffs)."
    )

    @model_serializer(mode="wrap")
    def _without_no_files(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """`files_changed` is left out when empty (a run that changed no file, and every run before it existed)."""
        data: dict[str, Any] = handler(self)
        if not self.files_changed:
            data.pop("files_changed", None)
        return data

    @property
    def ok(self) -> bool:
        return self.status is RunStatus.SUCCESS


class _Event(BaseModel):
    model_config = _FROZEN

    run_id: str = ""
    seq: int = -1
    ts: float = 0.0


class SessionTurn(BaseModel):
    """Which turn of which `open_session` session a run is (`RunStarted.session_turn`)."""

    model_config = _FROZEN

    session: str = Field(description="The Harness session's id (shared by all its turns' runs).")
    index: int = Field(ge=0, description="The turn's index in the session, from 0.")
    live: bool = Field(description="Whether the session keeps one agent process across its turns.")
    pid: int | None = Field(default=None, description="The live session's process (as spawned), when it has one.")


class RunStarted(_Event):
    """Always the first event: who runs, with what, and the (redacted) spec."""

    type: Literal["run_started"] = "run_started"
    provider: str
    provider_version: str
    genai_provider: str | None = Field(
        default=None, description="The OpenTelemetry `gen_ai.provider.name` of the agent's model (`ProviderInfo`'s)."
    )
    cli_version: str | None = None
    capabilities: list[Capability] = Field(default_factory=list)
    spec: dict[str, Any] = Field(default_factory=dict, description="The spec, secrets redacted.")
    session_turn: SessionTurn | None = Field(default=None, description="Set when the run is a session's turn.")


class SessionStarted(_Event):
    type: Literal["session_started"] = "session_started"
    session_id: str
    resumed: bool = False
    model: str | None = None


class TextDelta(_Event):
    type: Literal["text_delta"] = "text_delta"
    text: str
    item_id: str | None = None


class ReasoningDelta(_Event):
    type: Literal["reasoning_delta"] = "reasoning_delta"
    text: str
    item_id: str | None = None


class ToolUse(_Event):
    type: Literal["tool_use"] = "tool_use"
    tool_id: str
    name: str
    display: HarnessToolDetails
    input: dict[str, Any] | None = None


class ToolResult(_Event):
    type: Literal["tool_result"] = "tool_result"
    tool_id: str
    name: str
    display: HarnessToolDetails
    output: str | None = Field(default=None, description="Output, truncated to a bounded size.")
    is_error: bool = False


class ToolSummary(_Event):
    """Progress of a tool or the turn: coalesced command output, a plan, a diff."""

    type: Literal["tool_summary"] = "tool_summary"
    tool_id: str | None = None
    kind: Literal["output", "plan", "diff", "todo", "note"] = "output"
    text: str


class ApprovalRequested(_Event):
    type: Literal["approval_requested"] = "approval_requested"
    request_id: str
    tool_id: str | None = None
    display: HarnessToolDetails
    reason: str | None = None


class ApprovalResolved(_Event):
    type: Literal["approval_resolved"] = "approval_resolved"
    request_id: str
    decision: ApprovalDecision
    decided_by: Literal["callback", "hook", "default", "runner"] = "callback"
    reason: str | None = None


class ContextUsage(_Event):
    type: Literal["context_usage"] = "context_usage"
    usage: Usage
    cumulative: bool = Field(
        default=False, description="True when the figures are the provider's thread totals, not this run's."
    )
    context_window: int | None = None


class ErrorEvent(_Event):
    type: Literal["error"] = "error"
    error: ErrorInfo


CLI_WARNING = "cli_warning"
"""`Notice.code` of a warning the agent CLI itself gave (its configuration, a missing sandbox helper): the terminal
shows these with `-v` only."""


class Notice(_Event):
    """Something the user should know that is not an error (yet): the agent reconnecting to its model API, a
    retry, a degraded feature, the agent CLI's own warning (`CLI_WARNING`). A run that then fails says so with an
    `error` event and its result."""

    type: Literal["notice"] = "notice"
    level: Literal["info", "warning"] = "warning"
    code: str = Field(description="Stable, machine-readable: e.g. `reconnecting`.")
    message: str
    details: dict[str, Any] = Field(default_factory=dict)


class ProviderRaw(_Event):
    """A provider message with no mapping, kept so nothing is lost."""

    type: Literal["provider_raw"] = "provider_raw"
    method: str | None = None
    payload: Any = None


class FilesChanged(_Event):
    """What the run changed in its workspace: each file a tool announced a change to, as it was before the run
    compared with after it. Emitted by the runner once, just before `done`, when any tool announced one."""

    type: Literal["files_changed"] = "files_changed"
    files: tuple[FileChange, ...] = ()


class Done(_Event):
    """Always the last event, exactly once."""

    type: Literal["done"] = "done"
    result: HarnessResult


HarnessEvent = Annotated[
    Union[
        RunStarted,
        SessionStarted,
        TextDelta,
        ReasoningDelta,
        ToolUse,
        ToolResult,
        ToolSummary,
        ApprovalRequested,
        ApprovalResolved,
        ContextUsage,
        ErrorEvent,
        Notice,
        ProviderRaw,
        FilesChanged,
        Done,
    ],
    Field(discriminator="type"),
]

EVENT_ADAPTER: TypeAdapter[HarnessEvent] = TypeAdapter(HarnessEvent)


def parse_event(line: str | bytes) -> HarnessEvent:
    """Parse one run-log line into its typed event (raises `pydantic.ValidationError`)."""
    return EVENT_ADAPTER.validate_json(line)


def event_json(event: HarnessEvent) -> bytes:
    """The event's run-log line (what `harness run --json` prints too), without the newline: pydantic's compiled
    serializer called directly, which skips `model_dump_json`'s argument handling (identical output). A streamed
    delta (its six fields: str, int, a float `ts`, None) is `orjson.dumps` of its fields, four times cheaper and
    byte-identical (a test compares them); anything else, or what orjson refuses (a lone surrogate), is pydantic's."""
    if event.__class__ in _PLAIN_EVENTS:
        fields = event.__dict__
        if len(fields) == 6 and fields["ts"].__class__ is float:
            try:
                return _dumps(fields)
            except TypeError:
                pass
    return event.__pydantic_serializer__.to_json(event)


def fast_text_delta(text: str, item_id: str | None = None) -> TextDelta:
    """`TextDelta(text=text, item_id=item_id)` without pydantic's validation (half the cost), for a provider's
    hot path: the caller guarantees the types (`text` a str, `item_id` a str or None). The event is equal to the
    validated one in every way (fields, fields set, JSON, copy); a test checks it."""
    event = _new_event(TextDelta)
    _set_attr(event, "__dict__", {"run_id": "", "seq": -1, "ts": 0.0, "type": "text_delta", "text": text,
                                  "item_id": item_id})
    _set_attr(event, "__pydantic_fields_set__", {"text", "item_id"})
    _set_attr(event, "__pydantic_extra__", None)
    _set_attr(event, "__pydantic_private__", None)
    return event


_PLAIN_EVENTS = frozenset({TextDelta, ReasoningDelta})
_dumps = orjson.dumps
_new_event = object.__new__
_set_attr = object.__setattr__
