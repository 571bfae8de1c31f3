"""Harbor task directories read into `BatchTask`s (`harness batch --harbor TASKS_DIR`): instruction.md the prompt,
task.toml the timeouts and variables, tests/test.sh the verifier, environment/ the workspace; every task that
needs a container (or is malformed) refused at once, each with its reason.

Layer: batch (pure: reads files, builds models; starts nothing). Format, refusals: docs/jobs-and-batches.md.
"""

from __future__ import annotations

import re
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from harness_core.batch.harbor_env import CONTAINER_NEEDED, ENV_NAME, read_dockerfile, verifier_command
from harness_core.batch.tasks import ID_PATTERN, BatchTask, TaskFileError
from harness_core.errors import InvalidSpecError
from harness_core.spec import AgentRunSpec

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - 3.10
    import tomli as tomllib  # type: ignore[import-not-found, unused-ignore]

__all__ = ["harbor_tasks", "is_harbor_task"]

_MAX_FILE = 16 << 20
_CANARY = re.compile(r"^(<!--.*canary.*-->|#.*canary.*)$", re.IGNORECASE)
_TEMPLATE = re.compile(r"\$\{([^}:]+)(?::-(.*))?\}")
_COMPOSE = ("docker-compose.yaml", "docker-compose.yml", "compose.yaml", "compose.yml")
ADVICE = ("Fix those tasks or move them out of the directory; a task that needs a container runs once Harness has "
          "environments (`--environment docker`).")


def is_harbor_task(path: Path) -> bool:
    """`path` looks like one Harbor task (rather than a directory of them)."""
    return (path / "task.toml").is_file() or (path / "instruction.md").is_file()


def harbor_tasks(path: str | Path, *, check_sandbox: bool = True) -> list[BatchTask]:
    """The tasks of a directory of Harbor task directories (or of one task directory), sorted by id.

    A task plays in a fresh copy of what its `environment/Dockerfile` puts in its WORKDIR, and is verified on the
    host by `tests/test.sh` under bubblewrap (`verifier_command`). With `check_sandbox`, a host without `bwrap` on
    its PATH is a problem too.

    Raises:
        TaskFileError: every problem of every task (each named), and the tasks that were fine.
        InvalidSpecError: `path` is not a directory.
    """
    root = Path(path).absolute()
    if not root.is_dir():
        raise InvalidSpecError(f"--harbor {path}: not a directory (give a Harbor task directory, or a directory "
                               "of them)")
    if is_harbor_task(root):
        dirs = [root]
    else:
        dirs = sorted(d for d in root.iterdir() if d.is_dir() and not d.name.startswith(".") and
                      (is_harbor_task(d) or (d / "tests").is_dir() or (d / "environment").is_dir()))
    tasks: list[BatchTask] = []
    problems: list[tuple[int | None, str]] = []
    for directory in dirs:
        task, said = _task(directory)
        problems += [(None, f"{directory.name}: {problem}") for problem in said]
        if task is not None and not said:
            tasks.append(task)
    if not dirs:
        problems.append((None, "no Harbor task in it (a task is a directory holding instruction.md, task.toml, "
                               "environment/Dockerfile and tests/test.sh)"))
    elif check_sandbox and shutil.which("bwrap") is None:
        problems.append((None, "Harbor tasks are verified under bubblewrap (bwrap), which is not on the PATH: "
                               "install it (apt-get install bubblewrap, dnf install bubblewrap)"))
    if problems:
        raise TaskFileError(str(root), problems, tasks, advice=ADVICE)
    return tasks


def _task(directory: Path) -> tuple[BatchTask | None, list[str]]:
    """One task directory's task, and every problem of it."""
    said: list[str] = []
    if not ID_PATTERN.fullmatch(directory.name):
        said.append("the directory's name is the task's id: use letters, digits, '.', '_' and '-'")
    prompt = _text(directory / "instruction.md", said, "instruction.md (the agent's prompt)")
    if prompt is not None:
        prompt = _strip_canary(prompt)
        if not prompt.strip():
            said.append("instruction.md is empty (it is the agent's prompt)")
    config = _config(directory / "task.toml", said)
    tests = directory / "tests"
    if not (tests / "test.sh").is_file():
        windows = " (only test.bat: a Windows task)" if (tests / "test.bat").is_file() else ""
        said.append(f"tests/test.sh is missing{windows}: it is the verifier")
    if any((tests / name).is_file() for name in _COMPOSE):
        said.append(f"tests/ has a docker-compose file (a verifier environment of its own): it {CONTAINER_NEEDED}")
    environment = directory / "environment"
    compose = [name for name in _COMPOSE if (environment / name).is_file()]
    image = config.get("environment", {}).get("docker_image") if config is not None else None
    workspace = None
    if image is not None:
        said.append(f"task.toml's [environment] docker_image = {image!r} (a prebuilt image): it {CONTAINER_NEEDED}")
    elif compose:
        said.append(f"environment/{compose[0]} (services around the agent): it {CONTAINER_NEEDED}")
    elif not (environment / "Dockerfile").is_file():
        said.append("environment/Dockerfile is missing (Harness reads the workspace from it)")
    else:
        workspace, problems = read_dockerfile(environment)
        said += problems
    if said or config is None or prompt is None or workspace is None:
        return None, said
    agent, verifier, env_table = config.get("agent", {}), config.get("verifier", {}), config.get("environment", {})
    env, from_host = _variables(said, ("the Dockerfile's ENV", workspace.env),
                                ("[environment] env", env_table.get("env", {})),
                                ("[verifier] env", verifier.get("env", {})))
    agent_env, _ = _variables([], ("", env_table.get("env", {})))  # the Dockerfile's ENV speaks of the container
    try:
        spec = AgentRunSpec(prompt=_with_workdir(prompt, workspace.workdir), env=agent_env)
    except ValidationError as exc:
        return None, [f"{error.get('msg')}" for error in exc.errors()]
    if said:
        return None, said
    command = verifier_command(tests.resolve(), workspace.workdir, from_host, env_names=env)
    return BatchTask(directory.name, spec, verify=command, verify_timeout=verifier.get("timeout_sec"),
                     verify_env=env, workspace_files=workspace.files, agent_timeout=agent.get("timeout_sec"),
                     verify_needs_reward=True), said


def _with_workdir(prompt: str, workdir: str) -> str:
    """The instruction, and when it names the container's WORKDIR (`/app`, `/app/out.txt`), one sentence saying
    that it is the agent's working directory here: the agent plays in a copy of the workspace on the host, where
    there is no `/app` (only the verifier sees the workspace there)."""
    if not re.search(re.escape(workdir) + r"(?![\w-]|\.\w)", prompt):
        return prompt
    return (f"{prompt.rstrip()}\n\n(Here, {workdir} is your current working directory: {workdir}/NAME is ./NAME. "
            f"Use paths relative to it, not paths starting with {workdir}.)\n")


def _text(path: Path, said: list[str], what: str) -> str | None:
    try:
        if path.stat().st_size > _MAX_FILE:
            said.append(f"{path.name} is over {_MAX_FILE >> 20} MiB")
            return None
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        said.append(f"{what} is missing")
    except (OSError, UnicodeDecodeError) as exc:
        said.append(f"cannot read {path.name}: {getattr(exc, 'strerror', None) or exc}")
    return None


def _strip_canary(text: str) -> str:
    """The instruction without its leading canary lines (markers against training on benchmarks), as Harbor
    shows it to agents."""
    lines = text.split("\n")
    index = 0
    while index < len(lines) and _CANARY.match(lines[index].strip()):
        index += 1
    while index < len(lines) and not lines[index].strip():
        index += 1
    return "\n".join(lines[index:])


def _config(path: Path, said: list[str]) -> dict[str, Any] | None:
    """task.toml's tables, checked where Harness reads them; None when it is unusable."""
    text = _text(path, said, "task.toml")
    if text is None:
        return None
    try:
        config = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        said.append(f"task.toml is not TOML: {exc}")
        return None
    before = len(said)
    for table in ("agent", "verifier", "environment"):
        if not isinstance(config.get(table, {}), dict):
            said.append(f"task.toml: [{table}] is a table")
            config[table] = {}
    for table in ("agent", "verifier"):
        timeout = config[table].get("timeout_sec") if table in config else None
        if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float))
                                    or not 0 < timeout < float("inf")):
            said.append(f"task.toml: [{table}] timeout_sec is a number of seconds over 0, not {timeout!r}")
    if "steps" in config:
        said.append("task.toml has [[steps]] (a multi-step task): Harness plays single-step Harbor tasks")
    verifier = config.get("verifier", {})
    if verifier.get("environment_mode", "shared") != "shared" or "environment" in verifier:
        said.append(f"task.toml: the verifier has an environment of its own: it {CONTAINER_NEEDED}")
    for table in ("environment", "verifier"):
        env = config.get(table, {}).get("env", {})
        if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
            said.append(f"task.toml: [{table}] env is a table of strings")
        elif bad := [name for name in env if not ENV_NAME.fullmatch(name)]:
            said.append(f"task.toml: [{table}] env: {', '.join(map(repr, bad))} is not a variable name")
    return config if len(said) == before else None


def _variables(said: list[str], *layers: tuple[str, Mapping[str, str]]
               ) -> tuple[dict[str, str], dict[str, tuple[str, str | None]]]:
    """The layers' variables, later ones over earlier: (the literal ones, those Harbor takes from the host when
    the verifier starts: `${NAME}` or `${NAME:-default}`, as {variable: (NAME, default)})."""
    literal: dict[str, str] = {}
    from_host: dict[str, tuple[str, str | None]] = {}
    for where, layer in layers:
        for key, value in layer.items():
            literal.pop(key, None)
            from_host.pop(key, None)
            match = _TEMPLATE.fullmatch(value)
            if match is None:
                literal[key] = value
            elif ENV_NAME.fullmatch(match.group(1)):
                from_host[key] = (match.group(1), match.group(2))
            else:
                said.append(f"{where}: {key} = {value!r} names no variable")
    return literal, from_host
