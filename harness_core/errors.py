"""The error hierarchy: one root, one stable `code` per class, messages that say what to do next.

Layer: core. Knows nothing of any provider. Codes appear in `error` events, in `HarnessResult.error` and,
through `exit_status`, in CLI exit statuses.
"""

from __future__ import annotations

import difflib
import errno
import re
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from harness_core.events import ErrorInfo, HarnessResult, RunStatus
from harness_core.redaction import scrub

__all__ = [
    "AuthFailedError",
    "CliNotFoundError",
    "CliVersionUnsupportedError",
    "HarnessError",
    "IdleTimeoutError",
    "InterruptedRunError",
    "InvalidSpecError",
    "LogWriteFailedError",
    "MessageTooLargeError",
    "ModelError",
    "ProcessExitedError",
    "ProtocolError",
    "ProviderCrashedError",
    "ProviderNotFoundError",
    "RateLimitedError",
    "SCRIPTED_REFUSAL",
    "SessionNotFoundError",
    "SpawnFailedError",
    "UnsupportedFeatureError",
    "error_for_status",
    "EXIT_FAILED",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_UNAVAILABLE",
    "EXIT_USAGE",
    "BudgetExceededError",
    "SessionBusyError",
    "SessionClosedError",
    "StructuredOutputError",
    "UndoRefusedError",
    "exit_status_for",
    "exit_status_for_code",
    "truncate",
]

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_UNAVAILABLE = 3
EXIT_INTERRUPTED = 130

_MAX_QUOTED = 500


def truncate(text: str, limit: int = _MAX_QUOTED) -> str:
    """Shorten `text` for a message, saying how much was cut."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [{len(text) - limit} more characters]"


def exit_status_for_code(code: str) -> int:
    """The CLI exit status of an error code (for errors that arrive as data, e.g. in a result)."""
    for cls in _all_subclasses(HarnessError):
        if cls.code == code:
            return cls.exit_status
    return EXIT_FAILED


def exit_status_for(result: HarnessResult | None) -> int:
    """The CLI exit status of a run: 0 success, 130 interrupted (or no result); a failure's follows its error code
    (3 for an unavailable CLI)."""
    if result is None or result.status is RunStatus.INTERRUPTED:
        return EXIT_INTERRUPTED
    if result.status is RunStatus.SUCCESS:
        return EXIT_OK
    return exit_status_for_code(result.error.code) if result.error is not None else EXIT_FAILED


def _all_subclasses(cls: type[HarnessError]) -> list[type[HarnessError]]:
    found: list[type[HarnessError]] = []
    for sub in cls.__subclasses__():
        found.append(sub)
        found.extend(_all_subclasses(sub))
    return found


_PICK_PROVIDER = "provider=NAME; on the command line -p/--provider NAME"
"""How a refusal says to pick another provider: the Python argument, then the flag (the CLI keeps the flag)."""


class HarnessError(Exception):
    """Root of every error Harness raises on purpose."""

    code: ClassVar[str] = "harness_error"
    exit_status: ClassVar[int] = EXIT_FAILED
    retryable: bool = False
    """Whether trying the same run again may succeed (a class default; an instance may say otherwise)."""
    names_fields: ClassVar[bool] = False
    """Its message names the fields of a file the user wrote (a batch's task lines): the command line says it as
    is, not in its flags' words."""

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.details: dict[str, Any] = {k: v for k, v in details.items() if v is not None}

    def to_info(self) -> ErrorInfo:
        return ErrorInfo(code=self.code, message=self.message, retryable=self.retryable, details=self.details)


class ProviderNotFoundError(HarnessError):
    code = "provider_not_found"
    exit_status = EXIT_USAGE

    def __init__(self, name: str, installed: list[str], broken: str | None = None, *,
                 aliases: Mapping[str, str] | None = None, claimed_by: Sequence[str] = ()) -> None:
        have = ", ".join(installed) if installed else "none"
        known = [*installed, *(aliases or {})]  # "did you mean" offers the other names too
        if broken is not None:
            message = (f"provider {name!r} is installed but its plugin failed to load ({broken}); fix or reinstall "
                       f"its distribution (`harness doctor` shows details). Working providers: {have}.")
        elif claimed_by:
            message = (f"{name!r} is another name of more than one provider ({', '.join(claimed_by)}), so it names "
                       f"none of them: pick one by its own name ({_PICK_PROVIDER})")
        elif close := difflib.get_close_matches(name, known, n=1, cutoff=0.6):
            message = (f"no provider named {name!r}; did you mean {close[0]!r}? Installed providers: {have}.")
        else:
            message = (f"no provider named {name!r}; installed providers: {have}. Pick one of those "
                       f"({_PICK_PROVIDER}), or install the distribution that provides it (its documentation names "
                       "it).")
        super().__init__(message, provider=name, installed=installed, broken=broken)


class UnsupportedFeatureError(HarnessError):
    code = "unsupported_feature"
    exit_status = EXIT_USAGE

    def __init__(self, provider: str, feature: str, providers_with_it: list[str], why: str = "", *,
                 have: str = "have it", none: str = "has it") -> None:
        """`feature`: a capability's name (quoted) or a phrase naming what is refused; `why`: a clause saying
        why; `have`/`none`: what the providers named do (``Providers that have it: ...``, ``No installed
        provider has it``)."""
        named = repr(feature) if " " not in feature else feature
        reason = f": {why}" if why else ""
        alt = (f"Providers that {have}: {', '.join(providers_with_it)} ({_PICK_PROVIDER})" if providers_with_it
               else f"No installed provider {none}")
        super().__init__(
            f"provider {provider!r} does not support {named}{reason}. {alt}. Nothing was started.",
            provider=provider,
            feature=feature,
            providers_with_it=providers_with_it,
        )


class InvalidSpecError(HarnessError):
    code = "invalid_spec"
    exit_status = EXIT_USAGE


class CliNotFoundError(HarnessError):
    code = "cli_not_found"
    exit_status = EXIT_UNAVAILABLE


class CliVersionUnsupportedError(HarnessError):
    code = "cli_version_unsupported"
    exit_status = EXIT_UNAVAILABLE


class SpawnFailedError(HarnessError):
    code = "spawn_failed"
    exit_status = EXIT_UNAVAILABLE


class AuthFailedError(HarnessError):
    code = "auth_failed"


class ModelError(HarnessError):
    code = "model_error"


class RateLimitedError(HarnessError):
    code = "rate_limited"
    retryable = True


PROCESS_EXITED_NEXT_STEP = (
    "to see why, run again with -vv (debug log) and --record-wire (every line to and from the agent, in the "
    "run's .wire.jsonl beside its log); `harness doctor` checks the agent's CLI"
)


class ProcessExitedError(HarnessError):
    """The agent's CLI exited (or was killed) before the turn ended. The message says how it ended, where to look
    next (`PROCESS_EXITED_NEXT_STEP`) and, below, the last lines it wrote to stderr."""

    code = "process_exited"

    def __init__(self, message: str, *, exit_code: int | None, stderr_tail: str = "", **details: Any) -> None:
        tail = scrub(stderr_tail.strip())
        first = f"{message}; {'its last stderr lines are below; ' if tail else ''}{PROCESS_EXITED_NEXT_STEP}"
        full = first if not tail else f"{first}\n--- last stderr lines ---\n{truncate(tail, 2000)}"
        super().__init__(full, exit_code=exit_code, stderr_tail=tail or None, **details)
        self.exit_code = exit_code
        self.stderr_tail = tail


class ProtocolError(HarnessError):
    code = "protocol_error"

    def __init__(self, message: str, *, line: str | bytes | None = None, **details: Any) -> None:
        quoted = None
        if line is not None:
            text = line.decode("utf-8", "replace") if isinstance(line, bytes) else line
            quoted = truncate(scrub(text), 300)
        super().__init__(message if quoted is None else f"{message}: {quoted}", line=quoted, **details)


class MessageTooLargeError(HarnessError):
    code = "message_too_large"


class IdleTimeoutError(HarnessError):
    code = "idle_timeout"


class ProviderCrashedError(HarnessError):
    """A provider raised something that is not a `HarnessError`: a bug in the provider."""

    code = "provider_error"


class SessionNotFoundError(HarnessError):
    """`resume` named a session the agent does not know (expired, another machine, another agent home)."""

    code = "session_not_found"
    exit_status = EXIT_USAGE

    def __init__(self, session_id: str, detail: str = "", **details: Any) -> None:
        said = f" ({truncate(scrub(detail.strip()), 300)})" if detail.strip() else ""
        super().__init__(
            f"the agent has no session {session_id!r} to resume{said}; `harness runs` lists the sessions of earlier "
            "runs (resume one of those, or start a new run without resume_session (--resume))",
            session_id=session_id, **details)
        self.session_id = session_id


class InterruptedRunError(HarnessError):
    code = "interrupted"
    exit_status = EXIT_INTERRUPTED


_BUDGET_UNITS = {"max_cost_usd": "USD", "max_output_tokens": "output tokens", "max_turns": "agent steps"}


class BudgetExceededError(HarnessError):
    """A run (or the session it is a turn of) went over one of the spec's budgets: `max_cost_usd`,
    `max_output_tokens` or `max_turns`. The runner interrupted it; `details` say which limit and what was used."""

    code = "budget_exceeded"

    def __init__(self, budget: str, limit: float, used: float | None, *, scope: str = "run", before_turn: bool = False,
                 **details: Any) -> None:
        unit = _BUDGET_UNITS.get(budget, "")
        figures = f"{budget} = {limit:g} {unit}" + ("" if used is None else f", used {used:g}")
        flag = "--" + budget.replace("_", "-")
        if scope == "session" and before_turn:
            message = (f"the session has used its whole budget ({figures}); no turn was started. To go on, continue "
                       f"the conversation in a new session with a higher {budget} (resume_session=the agent's session "
                       f"id; on the command line --resume ID {flag} ...)")
        elif scope == "session":
            message = (f"the session went over its budget ({figures}) and this turn was stopped. To go on, continue "
                       f"the conversation in a new session with a higher {budget} (resume_session=the agent's session "
                       f"id; on the command line --resume ID {flag} ...)")
        else:
            message = f"the run went over its budget ({figures}) and was stopped; raise {budget} ({flag}) to go further"
        super().__init__(message, budget=budget, limit=limit, used=used, scope=scope, **details)


class StructuredOutputError(HarnessError):
    """With `output_schema`: the agent's final answer is not JSON, or not valid against the schema. `details`
    carry the answer's text (`text`) and what is wrong (`problem`)."""

    code = "invalid_structured_output"

    def __init__(self, problem: str, text: str) -> None:
        super().__init__(
            f"the agent's final answer does not match the output schema ({problem}); its text is in the error's "
            "`text` detail. Make the prompt say what to answer, or loosen the schema", problem=problem, text=text)


class LogWriteFailedError(HarnessError):
    """Writing the run's log (or its wire log) failed: a full disk, a quota, a file size limit, an I/O error. The
    runner stopped the run (a run whose events cannot be kept is not played on); the log ends with the last line
    that could be written. `details`: `path`, `errno` (its name) and `os_error` (the system's words)."""

    code = "log_write_failed"

    def __init__(self, path: object, error: OSError, *, what: str = "the run log",
                 outcome: str = "the run was stopped and its log ends with the last event that could be "
                                "written") -> None:
        why = error.strerror or str(error)
        name = errno.errorcode.get(error.errno or 0, "")
        directory = f"{path}".rpartition("/")[0] or "."
        if error.errno in (errno.ENOSPC, errno.EDQUOT):
            step = (f"free space there (`df -h {directory}` shows how much is left) or keep the runs elsewhere "
                    "(--runs-dir DIR or HARNESS_RUNS_DIR), then run it again")
        elif error.errno == errno.EFBIG:
            step = ("raise this shell's file size limit (`ulimit -f unlimited`) or keep the runs on a file system "
                    "that takes larger files, then run it again")
        else:
            step = ("check that file system (the kernel log, `dmesg`, names I/O errors) or keep the runs elsewhere "
                    "(--runs-dir DIR or HARNESS_RUNS_DIR), then run it again")
        super().__init__(f"writing {what} {path} failed: {why}{f' ({name})' if name else ''}; {outcome}. To go "
                         f"on, {step}",
                         path=str(path), errno=name or None, os_error=why)


class SessionBusyError(HarnessError):
    """`Session.turn` while another turn of the session is still live: turns are played one at a time."""

    code = "session_busy"
    exit_status = EXIT_USAGE


class SessionClosedError(HarnessError):
    """A turn of a session that is closed: closed by its owner, or its agent process ended (killed, crashed, or
    stopped hard after an interrupt it ignored)."""

    code = "session_closed"


class UndoRefusedError(HarnessError):
    """`harness undo` (or chat's `/undo`) cannot put a run's files back: the run is not over, recorded no change, or
    files changed since it ended (each named); nothing was written."""

    code = "undo_refused"


SCRIPTED_REFUSAL = "scripted model refuses: "
"""How the offline scripted model starts the message of a request it fails for a reason of the run itself (a tool
the request does not offer): no retry changes it, so `error_for_status` gives it whole, without the provider's
"retry later"."""
_SCRIPTED = re.compile(re.escape(SCRIPTED_REFUSAL) + r"([^\"\\]+)")  # ends at a quote of the JSON quoting it


def error_for_status(
    status: int | None,
    detail: str,
    *,
    auth_hint: str = "check the API key the agent uses and its base URL",
    retry_hint: str = "wait a moment and retry",
    failure_hint: str = "retry later",
    **details: Any,
) -> HarnessError:
    """The error an HTTP status from a model API stands for, as every provider classifies it: 401/403 →
    `AuthFailedError`, 429 → `RateLimitedError` (retryable), anything else (or no status) → `ModelError`
    (retryable for 5xx). The message names the status and `detail` and ends with the matching hint, which a
    provider sets to its own next step (an env var, a login command, an option); the offline scripted model's
    refusal (`SCRIPTED_REFUSAL`) is given whole with its own advice instead.
    """
    where = f"HTTP {status}" if status is not None else "no HTTP status"
    scripted = _SCRIPTED.search(detail)
    if scripted is not None:  # offline: the same request fails the same way on every run, whatever the agent
        return ModelError(f"the scripted model refused the request ({where}): {scripted.group(1).rstrip(' .')}",
                          status=status, **details)
    text = truncate(detail.strip()) or "no message"
    if status in (401, 403):
        return AuthFailedError(f"the model API refused the credentials ({where}: {text}); {auth_hint}",
                               status=status, **details)
    if status == 429:
        return RateLimitedError(f"the model API is rate limiting ({where}: {text}); {retry_hint}",
                                status=status, **details)
    error = ModelError(f"the model API failed ({where}: {text}); {failure_hint}", status=status, **details)
    if status is not None and status >= 500:
        error.retryable = True
    return error
