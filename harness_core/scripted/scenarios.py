"""One scenario vocabulary for every fake CLI, every scripted model backend and the contract suite.

Layer: offline. Knows no provider's wire format: each fake CLI and each scripted backend translates these
steps into its own protocol. A step is one model response (say, think, one tool call, a failure or a stall).
Pure data (plus `apply_file_step`, which fakes use to make file steps real): importing it starts nothing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Union

from harness_core._facade import missing_name

__all__ = [
    "apply_file_step",
    "command_sleep",
    "CallMcpTool",
    "ReportAttachments",
    "TOOL_RESULT",
    "EditFile",
    "Expected",
    "ExpectedTool",
    "Fail",
    "LEAK_ENV",
    "LEAK_SHAPED",
    "ReadFile",
    "RunCommand",
    "SCENARIOS",
    "Say",
    "Scenario",
    "Stall",
    "Step",
    "TakeLong",
    "Think",
    "WriteFile",
]


@dataclass(frozen=True)
class Say:
    """The model streams `text` (split into `chunks` deltas) and ends its turn."""

    text: str
    chunks: int = 3
    delay: float = 0.0
    """Seconds between chunks (a slowly streaming model, for interrupts while streaming)."""


@dataclass(frozen=True)
class Think:
    """The model streams reasoning text before the next step (same model response as the next step)."""

    text: str


@dataclass(frozen=True)
class RunCommand:
    """The model runs a shell command; `output`/`exit_code` are what fakes report (real CLIs run it)."""

    command: str
    output: str = ""
    exit_code: int = 0


@dataclass(frozen=True)
class ReadFile:
    """The model reads a file (a `cat PATH` command or a read tool, as the agent has). `path` is relative to
    the cwd; `content` is what fakes report when the file is missing."""

    path: str
    content: str = ""


@dataclass(frozen=True)
class WriteFile:
    """The model creates a file with `content` (a patch that adds it, or a write tool)."""

    path: str
    content: str


@dataclass(frozen=True)
class EditFile:
    """The model replaces `old` by `new` in an existing file (a patch that updates it, or an edit tool)."""

    path: str
    old: str
    new: str


@dataclass(frozen=True)
class Fail:
    """The model API answers this HTTP status (e.g. 500, 401, 429) instead of a stream."""

    status: int
    message: str = "scripted failure"


@dataclass(frozen=True)
class Stall:
    """The model API starts a stream and then sends nothing for `seconds` (a hung backend)."""

    seconds: float = 3600.0


@dataclass(frozen=True)
class TakeLong:
    """The model API waits `seconds` before answering the next step (a slow turn, for interrupts)."""

    seconds: float


@dataclass(frozen=True)
class CallMcpTool:
    """The model calls tool `tool` of MCP server `server` with `args`: the backend finds the tool in the request's
    tool list whatever the agent prefixes it with (`mcp__harness__add`, `harness__add`, `add`, ...). Fakes report
    `output`; a real CLI calls the server. The next `Say` may quote the result the model saw (`TOOL_RESULT`)."""

    server: str
    tool: str
    args: Mapping[str, Any] = field(default_factory=dict)
    output: str = ""


@dataclass(frozen=True)
class ReportAttachments:
    """The model answers with one line per attachment its request carried (`image/png 1234 bytes`), or `no
    attachments`: what a test reads to prove an image or a file arrived, exactly."""

    chunks: int = 1


TOOL_RESULT = "{tool_result}"
"""In a `Say`'s text: the text of the last tool result the model received (in the request it answers)."""


_SLEEP = re.compile(r"(?:^|[;&|]\s*)sleep\s+(\d+(?:\.\d+)?)\s*(?:$|[;&|])")


def command_sleep(command: str) -> float:
    """Seconds a fake should spend "running" `command`: the sum of its `sleep N` parts (`echo x; sleep 30`)."""
    return sum(float(m) for m in _SLEEP.findall(command.strip()))


def apply_file_step(step: ReadFile | WriteFile | EditFile, cwd: str | Path, *, read_only: bool = False) -> str:
    """Do a file step for real inside `cwd` (fakes and the scripted provider use it, so approvals and sandboxes
    have visible effects) and return its output. A path leaving `cwd` raises `ValueError`."""
    root = Path(cwd).resolve()
    target = (root / step.path).resolve()
    if not target.is_relative_to(root):
        raise ValueError(f"scenario path {step.path!r} leaves the workspace {root}")
    if isinstance(step, ReadFile):
        return target.read_text() if target.exists() else step.content
    if read_only:
        return "refused: the sandbox is read-only"
    if isinstance(step, WriteFile):  # as agents' write tools do, it makes the directories on the way
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(step.content)
        return step.content
    if target.exists():
        target.write_text(target.read_text().replace(step.old, step.new))
    return ""


Step = Union[Say, Think, RunCommand, ReadFile, WriteFile, EditFile, CallMcpTool, ReportAttachments, Fail, Stall,
             TakeLong]


@dataclass(frozen=True)
class ExpectedTool:
    kind: Literal["read", "write", "edit", "search", "shell", "mcp", "web", "agent", "unknown"]
    path: str | None = None
    command_contains: str | None = None
    exit_code: int | None = None


@dataclass(frozen=True)
class Expected:
    """The outline of the events a scenario must produce, whatever the provider."""

    status: Literal["success", "failed", "interrupted"] = "success"
    final_text: str | None = None
    tools: tuple[ExpectedTool, ...] = ()
    error_code: str | None = None


@dataclass(frozen=True)
class Scenario:
    name: str
    steps: tuple[Step, ...]
    expected: Expected = field(default_factory=Expected)
    files: dict[str, str] = field(default_factory=dict)
    """Files to create in the workspace before the run (relative path → content)."""
    description: str = ""
    """What the scripted model does, in one line (`harness scenarios` lists it)."""

    @property
    def writes(self) -> tuple[str, ...]:
        """Every path (relative to the workspace) the scenario creates or changes: its seeded `files`, then the
        files its steps write or edit, each once, in order (commands may change more: they are not parsed)."""
        paths = [*self.files, *(s.path for s in self.steps if isinstance(s, (WriteFile, EditFile)))]
        return tuple(dict.fromkeys(paths))


LEAK_ENV = {"HARNESS_PROBE_VALUE": "hpv-4b1f9e27c35d", "HARNESS_PROBE_TOKEN": "hpt-9c03a7e51b6f"}
"""The secrets `print_secrets` prints: the first is meant for `spec.env`, the second (a secret-looking name) for
the environment of the process that runs Harness; beside them it prints `LEAK_SHAPED`, a credential shape."""
LEAK_SHAPED = "sk-proj-Qm7Tz2Lx9Vb4Nc8Rw1"
_LEAKED = f"{LEAK_ENV['HARNESS_PROBE_VALUE']} {LEAK_ENV['HARNESS_PROBE_TOKEN']} {LEAK_SHAPED}"

SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in (
        Scenario(
            "say", (Say("Hello from the scripted model."),), Expected(final_text="Hello from the scripted model."),
            description="The model says hello; no tools.",
        ),
        Scenario(
            "tools",
            (
                RunCommand("echo harness-ok", output="harness-ok\n"),
                ReadFile("notes.txt", content="alpha\n"),
                EditFile("notes.txt", old="alpha", new="beta"),
                WriteFile("new.txt", content="fresh\n"),
                Say("All four tools ran."),
            ),
            Expected(
                final_text="All four tools ran.",
                tools=(
                    ExpectedTool("shell", command_contains="echo harness-ok", exit_code=0),
                    ExpectedTool("read", path="notes.txt"),
                    ExpectedTool("edit", path="notes.txt"),
                    ExpectedTool("write", path="new.txt"),
                ),
            ),
            files={"notes.txt": "alpha\n"},
            description="Runs `echo harness-ok`, reads notes.txt, edits it (alpha -> beta), writes new.txt.",
        ),
        Scenario(
            "think",
            (Think("Let me consider the question."), Say("Thought it through.")),
            Expected(final_text="Thought it through."),
            description="The model reasons (shown with -v), then answers.",
        ),
        Scenario("fail_500", (Fail(500, "internal error"),), Expected(status="failed", error_code="model_error"),
                 description="The model API answers HTTP 500: the run fails (model_error)."),
        Scenario("fail_401", (Fail(401, "invalid api key"),), Expected(status="failed", error_code="auth_failed"),
                 description="The model API refuses the key (HTTP 401): the run fails (auth_failed)."),
        Scenario("fail_429", (Fail(429, "slow down"),), Expected(status="failed", error_code="rate_limited"),
                 description="The model API rate-limits (HTTP 429): the run fails (rate_limited)."),
        Scenario("stall", (Stall(),), Expected(status="failed", error_code="idle_timeout"),
                 description="The model API goes silent for an hour: pass --idle-timeout, or press Ctrl-C."),
        Scenario(
            "slow_command",
            # Not a bare `sleep 30`: some CLIs refuse a command that starts with a long sleep.
            (RunCommand("echo waiting; sleep 30", output="waiting\n"), Say("done sleeping")),
            Expected(status="interrupted"),
            description="Runs `echo waiting; sleep 30`, for trying Ctrl-C and `harness cancel` on a command.",
        ),
        Scenario(
            "print_secrets",  # a command prints secrets, and the model repeats one: none may reach a file
            (RunCommand("cat token.txt", output=_LEAKED + "\n"), Say(f"The token is {LEAK_SHAPED}.", chunks=1)),
            Expected(final_text=f"The token is {LEAK_SHAPED}."),
            files={"token.txt": _LEAKED + "\n"},
            description="Runs `cat token.txt` (fake secrets) and repeats one: the logs mask the key-shaped one, and "
                        "the others when HARNESS_PROBE_VALUE / HARNESS_PROBE_TOKEN hold them (a task's `env`, or "
                        "Harness's environment).",
        ),
        Scenario(
            "slow_text",
            (Say("a slow answer " * 20, chunks=40, delay=1.0),),
            Expected(status="interrupted"),
            description="The model streams a long answer over 40 s, for trying Ctrl-C while it speaks.",
        ),
        Scenario(
            "tools_mcp",
            (CallMcpTool("harness", "add", {"a": 2, "b": 3}, output="5"), Say(f"The tool said {TOOL_RESULT}.")),
            Expected(final_text="The tool said 5.", tools=(ExpectedTool("mcp"),)),
            description="Calls the Python tool `add(a=2, b=3)` of the `harness` MCP server (--tools "
                        "examples/tools.py), then says the result it received.",
        ),
        Scenario(
            "tools_echo",
            (CallMcpTool("everything", "echo", {"message": "harness-echo"}, output="Echo: harness-echo"),
             Say(f"The server said {TOOL_RESULT}.")),
            Expected(final_text="The server said Echo: harness-echo.", tools=(ExpectedTool("mcp"),)),
            description="Calls `echo` of the MCP server `everything` (--mcp-server everything=mcp-server-everything), "
                        "then says the result it received.",
        ),
        Scenario(
            "attachments",
            (ReportAttachments(),),
            Expected(),
            description="Says what attachments its request carried, one line each (`image/png 1234 bytes`); try -i "
                        "FILE.",
        ),
        Scenario(  # a JSON answer, for `output_schema` (the contract's structured-output check)
            "json",
            (Say('{"answer": "hello", "count": 3}', chunks=2),),
            Expected(final_text='{"answer": "hello", "count": 3}'),
            description='The model answers the JSON {"answer": "hello", "count": 3} (for --output-schema).',
        ),
    )
}


if not TYPE_CHECKING:  # hidden from type checkers, which would otherwise accept any name

    def __getattr__(name: str) -> Any:
        """A name this façade does not export: an ImportError saying where it is (`harness_core._facade`)."""
        raise missing_name(__name__, name)
