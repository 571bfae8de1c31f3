"""A batch's tasks: one `AgentRunSpec` each, with an id, optionally a provider, and for offline batches the
scenario the scripted model plays; read from JSONL with every bad line reported at once, before anything runs.

Layer: batch (pure: reads text, builds models; starts nothing). Knows the spec model and the inline scenario
form; knows no provider, executor or file the batch writes. A line's fields: docs/jobs-and-batches.md (tasks).
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import re
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, TextIO

from pydantic import ValidationError

from harness_core.errors import InvalidSpecError
from harness_core.files.inputs import MAX_JSON_DEPTH, json_depth_problem, open_regular, read_lines
from harness_core.scripted.inline import ScenarioSyntaxError, scenario_from_json
from harness_core.scripted.scenarios import Scenario
from harness_core.spec import AgentRunSpec

__all__ = ["BatchTask", "ProviderCheck", "TaskFileError", "TaskLike", "as_tasks", "load_tasks", "parse_tasks"]

ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
_OWN_FIELDS = ("id", "provider", "scenario", "ref", "verify", "verify_timeout", "verify_env")
_FIELDS = (*_OWN_FIELDS, *AgentRunSpec.model_fields)
_SHOWN = 20  # problems listed in the message (all are in `problems`)


@dataclass(frozen=True)
class BatchTask:
    """One task of a batch: its id, the spec each attempt plays, and where it runs."""

    id: str
    spec: AgentRunSpec
    provider: str | None = None
    """The provider (an alias works too); None: the batch's default."""
    scenarios: tuple[Scenario, ...] = ()
    """Offline only: the scenario of each attempt in turn, the last for every later one (empty: the batch's)."""
    ref: str | None = None
    """With worktrees: the commit, branch or tag its checkout starts from (None: the batch's)."""
    line: int | None = None
    """Where it was read (1-based), for messages; None for a task made in Python."""
    verify: str | None = None
    """A shell command run in the task's workspace after the agent ends, judging its work (None: the batch's
    `--verify`, else no verifier)."""
    verify_timeout: float | None = None
    """Seconds the verifier may take (None: the batch's, 600 by default)."""
    verify_env: Mapping[str, str] = dataclasses.field(default_factory=dict)
    """Variables the verifier gets on top of Harness's environment (and `HARNESS_VERIFIER_DIR`)."""
    workspace_files: tuple[tuple[Path, str], ...] | None = None
    """A fresh workspace per attempt holding copies of these (a file or a directory's contents, to a path
    relative to the workspace; a Harbor task's COPYs), made as offline batches make theirs (None: the batch's
    usual workspace)."""
    agent_timeout: float | None = None
    """Seconds an attempt's agent may play (Harbor's `[agent] timeout_sec`); None: no limit."""
    verify_needs_reward: bool = False
    """Only a reward file its `verify` writes decides (a Harbor task's test.sh, as in Harbor); without one there is
    no verdict. False: without a reward file, the exit status decides."""

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not ID_PATTERN.fullmatch(self.id):
            raise ValueError(f"task id {self.id!r} is not a file name: use letters, digits, '.', '_' and '-' "
                             "(at most 128, not starting with '.', '_' or '-')")

    def scenario_for(self, attempt: int, default: Scenario | None) -> Scenario | None:
        """The scenario attempt number `attempt` (1-based) plays offline."""
        if not self.scenarios:
            return default
        return self.scenarios[min(attempt, len(self.scenarios)) - 1]

    @property
    def where(self) -> str:
        return f"line {self.line}" if self.line is not None else f"task {self.id!r}"


TaskLike = BatchTask | tuple[str, AgentRunSpec] | tuple[str, AgentRunSpec, str | None]
"""What `run_batch` takes per task: a `BatchTask`, or `(id, spec)` / `(id, spec, provider)`."""


class TaskFileError(InvalidSpecError):
    """Tasks that do not validate: every problem, each with its line number."""

    names_fields = True

    def __init__(self, source: str, problems: list[tuple[int | None, str]],
                 tasks: list[BatchTask] | None = None, *, advice: str | None = None) -> None:
        self.source = source
        self.problems = problems
        self.tasks = tasks or []
        """The tasks that were fine (a caller checking further can report their problems with these)."""
        shown = [f"  {'line ' + str(n) if n is not None else 'task'}: {text}" for n, text in problems[:_SHOWN]]
        more = [f"  ... and {len(problems) - _SHOWN} more"] if len(problems) > _SHOWN else []
        count = f"{len(problems)} problem{'s' if len(problems) != 1 else ''}"
        advice = advice or ("Fix the lines and run the batch again (a line is a JSON object: a spec's fields plus "
                            "\"id\").")
        super().__init__(f"{source}: {count}, nothing was run:\n" + "\n".join(shown + more) + "\n" + advice)


ProviderCheck = Callable[[str], "str | None"]
"""What a tasks file's `provider` names is checked by: the problem with a provider name (unknown: did you mean),
or None. The batch passes the plugin host's; parsing itself knows no provider."""


def load_tasks(source: str | Path | TextIO, *, offline: bool = False,
               check_provider: ProviderCheck | None = None) -> list[BatchTask]:
    """Read the tasks of a JSONL file (`"-"`: standard input; or an open text file).

    Raises:
        TaskFileError: every problem of every line (or a file with no task), each with its line number.
        InvalidSpecError: the file cannot be read, is not UTF-8, or is over its size limits (`LINE_LIMIT` a
            line, `FILE_LIMIT` in all).
    """
    if isinstance(source, (str, Path)) and str(source) == "-":
        return _bounded(sys.stdin.buffer, "<stdin>", offline, check_provider)
    if isinstance(source, (str, Path)):
        path = Path(source)
        try:
            with open_regular(path, what="the tasks file") as handle:
                return _bounded(handle, str(path), offline, check_provider)
        except OSError as exc:
            raise InvalidSpecError(f"cannot read the tasks file {path}: {exc.strerror or exc}") from None
    return _bounded(source, getattr(source, "name", "<tasks>"), offline, check_provider)


LINE_LIMIT = 64 << 20
"""A line of a tasks file holds at most this many bytes (a task with a long prompt is well under it)."""
FILE_LIMIT = 1 << 30
"""A tasks file holds at most this many bytes."""


def _bounded(source: IO[bytes] | IO[str], name: str, offline: bool,
             check_provider: ProviderCheck | None) -> list[BatchTask]:
    return parse_tasks(read_lines(source, what=f"the tasks file {name}", line_limit=LINE_LIMIT,
                                  total_limit=FILE_LIMIT), source=name, offline=offline, check_provider=check_provider)


def parse_tasks(lines: Iterable[str], *, source: str = "<tasks>", offline: bool = False,
                check_provider: ProviderCheck | None = None) -> list[BatchTask]:
    """The tasks of JSONL `lines` (blank lines are skipped). Raises `TaskFileError` listing every problem of every
    line — each bad field, a repeated id, a provider `check_provider` does not know — and the tasks that were
    fine (`TaskFileError.tasks`)."""
    tasks: list[BatchTask] = []
    problems: list[tuple[int | None, str]] = []
    seen: dict[str, int] = {}
    for number, text in enumerate(lines, 1):
        if not text.strip():
            continue
        task, task_id, said = _task(text, offline=offline, check_provider=check_provider)
        if task_id is not None and task_id in seen:
            said.append(f"id {task_id!r} is also the id of line {seen[task_id]}; ids must be unique")
        elif task_id is not None:
            seen[task_id] = number
        named = f"{task_id}: " if task_id is not None else ""
        problems += [(number, named + problem) for problem in said]
        if task is not None and not said:
            tasks.append(dataclasses.replace(task, line=number))
    if not tasks and not problems:
        problems.append((None, "no task in it (one JSON object per line: {\"id\": \"t1\", \"prompt\": \"...\"})"))
    if problems:
        raise TaskFileError(source, problems, tasks)
    return tasks


def as_tasks(items: Iterable[TaskLike]) -> list[BatchTask]:
    """`run_batch`'s tasks from Python: `BatchTask`s or `(id, spec[, provider])` tuples; ids must be unique.

    Raises:
        TaskFileError: a bad item or a repeated id (all of them).
    """
    tasks: list[BatchTask] = []
    problems: list[tuple[int | None, str]] = []
    seen: set[str] = set()
    for index, item in enumerate(items):
        try:
            task = item if isinstance(item, BatchTask) else _from_tuple(item)
        except (TypeError, ValueError) as exc:
            problems.append((None, f"item {index}: {exc}"))
            continue
        if task.id in seen:
            problems.append((None, f"item {index}: id {task.id!r} repeats an earlier task's; ids must be unique"))
            continue
        seen.add(task.id)
        tasks.append(task)
    if problems:
        raise TaskFileError("tasks", problems, tasks)
    return tasks


def _task(text: str, *, offline: bool, check_provider: ProviderCheck | None
          ) -> tuple[BatchTask | None, str | None, list[str]]:
    """One line: its task (None when it has none), its id when it has a usable one, and every problem of it."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return None, None, [f"not JSON ({exc.msg} at column {exc.colno})"]
    except RecursionError:
        return None, None, [f"it nests arrays and objects more than {MAX_JSON_DEPTH} levels deep; flatten it"]
    problem = json_depth_problem(data)
    if problem is not None:
        return None, None, [f"{problem}; flatten it"]
    if not isinstance(data, dict):
        return None, None, [f"a task is a JSON object, not {type(data).__name__}"]
    said: list[str] = []
    own = {key: data.pop(key) for key in _OWN_FIELDS if key in data}
    task_id = own.get("id")
    if not isinstance(task_id, str) or not ID_PATTERN.fullmatch(task_id):
        said.append("`id` is required: a unique name made of letters, digits, '.', '_' and '-' (it names the "
                    "task's result, log and patch)" if task_id is None else
                    f"id {task_id!r} is not a file name: use letters, digits, '.', '_' and '-'")
        task_id = None
    for key in ("provider", "ref"):
        if key in own and not (isinstance(own[key], str) and own[key]):
            said.append(f"`{key}` is a non-empty string")
    provider = own.get("provider") if isinstance(own.get("provider"), str) and own.get("provider") else None
    if provider is not None and check_provider is not None and (problem := check_provider(provider)) is not None:
        said.append(problem)
    scenarios: tuple[Scenario, ...] = ()
    if "scenario" in own:
        if not offline:
            said.append("`scenario` is what the scripted model plays with --offline; pass --offline, or remove it "
                        "to run the task against the real model")
        else:
            try:
                scenarios = _scenarios(own["scenario"])
            except _Problem as problem:
                said.append(str(problem))
    verify = _verify_fields(own, said)
    if offline and "prompt" not in data:
        data["prompt"] = f"(offline batch task {task_id or 'without an id'!r})"
    try:
        spec = AgentRunSpec.model_validate(data)
    except ValidationError as exc:
        said += [_said(error) for error in exc.errors()]
        return None, task_id, said
    if task_id is None or said:
        return None, task_id, said
    return BatchTask(task_id, spec, provider, scenarios, own.get("ref"), **verify), task_id, said


MAX_VERIFY_TIMEOUT = 7 * 86400.0
"""The longest `verify_timeout` (seconds) a task may give."""


def _verify_fields(own: Mapping[str, Any], said: list[str]) -> dict[str, Any]:
    """A line's `verify`, `verify_timeout` and `verify_env` (as BatchTask's keywords); each problem to `said`."""
    found: dict[str, Any] = {}
    if "verify" in own:
        if isinstance(own["verify"], str) and own["verify"].strip() and "\0" not in own["verify"]:
            found["verify"] = own["verify"]
        else:
            said.append("`verify` is a shell command (a non-empty string), run in the task's workspace after its agent "
                        "succeeded")
    if "verify_timeout" in own:
        value = own["verify_timeout"]
        if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value <= MAX_VERIFY_TIMEOUT:
            found["verify_timeout"] = float(value)
        else:
            said.append(f"`verify_timeout` is a number of seconds more than 0 and at most {MAX_VERIFY_TIMEOUT:g}, "
                        f"not {json.dumps(value)[:40]}")
    if "verify_env" in own:
        env = own["verify_env"]
        if not isinstance(env, dict):
            said.append('`verify_env` is an object of variables: {"NAME": "value", ...}')
        elif bad := [k for k, v in env.items()
                     if not (_ENV_NAME.fullmatch(k) and isinstance(v, str) and "\0" not in v)]:
            said.append(f"`verify_env`: {', '.join(map(repr, bad[:5]))}: a variable is a name (letters, digits, "
                        "'_') with a string value")
        else:
            found["verify_env"] = dict(env)
    return found


_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def with_tool_fields(task: BatchTask, fields: Mapping[str, Any]) -> BatchTask:
    """`task` with the batch's tool flags (`mcp_servers`, `attachments`, `strict_attachments`, `allowed_tools`,
    `disallowed_tools`) under its own: a server its line names the same is the line's; the rest the line does not
    set."""
    spec = task.spec
    update: dict[str, Any] = {}
    for key, value in fields.items():
        if key == "mcp_servers":
            own = {server.name for server in spec.mcp_servers}
            update[key] = (*spec.mcp_servers, *(s for s in value if s["name"] not in own))
        elif key not in spec.model_fields_set:
            update[key] = value
    if not update:
        return task
    merged = AgentRunSpec.model_validate({**spec.model_dump(exclude_unset=False), **update})
    return dataclasses.replace(task, spec=merged)


def _scenarios(value: Any) -> tuple[Scenario, ...]:
    items = value if isinstance(value, list) else [value]
    if not items:
        raise _Problem("`scenario` is a name, an inline scenario or a non-empty list of them")
    try:
        return tuple(scenario_from_json(item) for item in items)
    except ScenarioSyntaxError as exc:
        raise _Problem(f"scenario: {exc}") from None


def _said(error: Mapping[str, Any]) -> str:
    where = ".".join(str(part) for part in error.get("loc", ())) or "spec"
    message = str(error.get("msg", "invalid"))
    if error.get("type") == "extra_forbidden":
        close = difflib.get_close_matches(where, _FIELDS, n=1, cutoff=0.6)
        message = f"not a field of a task; did you mean {close[0]!r}?" if close else \
            f"not a field of a task (a task has {', '.join(_OWN_FIELDS)} and a spec's fields: " \
            f"{', '.join(AgentRunSpec.model_fields)})"
    return f"{where}: {message}"


class _Problem(Exception):
    pass


def _from_tuple(item: Any) -> BatchTask:
    if not isinstance(item, tuple) or len(item) not in (2, 3):
        raise TypeError(f"a task is a BatchTask or an (id, spec[, provider]) tuple, not {item!r}")
    provider = item[2] if len(item) == 3 else None
    if not isinstance(item[1], AgentRunSpec):
        raise TypeError(f"the spec of task {item[0]!r} is a {type(item[1]).__name__}, not an AgentRunSpec")
    return BatchTask(item[0], item[1], provider)
