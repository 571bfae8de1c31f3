"""Harbor task directories read into batch tasks (`harbor_tasks`, `harness batch --harbor`): the prompt, timeouts,
variables, workspace files and verifier command of a plain task; every task that needs a container or is
malformed refused at once, each named; the verifier command run under bubblewrap with the container's paths."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import anyio
import pytest

from harness_core.batch import TaskFileError
from harness_core.batch.harbor import harbor_tasks
from harness_core.batch.harbor_env import read_dockerfile
from harness_core.batch.workspaces import Workspaces
from harness_core.errors import InvalidSpecError
from tests.batch.conftest import batch_process, finish, read_results

TOML = """\
version = "1.0"

[metadata]
difficulty = "easy"

[agent]
timeout_sec = 300.0

[verifier]
timeout_sec = 120.0
env = { MODE = "strict", TOKEN = "${HARBOR_TEST_TOKEN}", LEVEL = "${HARBOR_TEST_LEVEL:-3}" }

[environment]
cpus = 1
env = { SHARED = "yes" }
"""

DOCKERFILE = """\
# a plain image: the base, where the agent works, what is there
FROM ubuntu:24.04
WORKDIR /app
ENV LANG=C.UTF-8 \\
    MODE=loose
COPY hello.txt .
COPY data/ ./data/
COPY notes.md docs/NOTES.md
LABEL purpose=test
"""

TEST_SH = """\
#!/bin/bash
if [ "$(cat /app/hello.txt)" = "Hello, world!" ] && [ -f /tests/expected.txt ]; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
echo "$MODE $TOKEN $LEVEL $SHARED $LANG $(pwd) $(ls /app | tr '\\n' ,)" > /logs/verifier/seen.txt
"""


def write_task(root: Path, name: str, *, toml: str | None = TOML, instruction: str | None = "Say hello.\n",
               dockerfile: str | None = DOCKERFILE, test_sh: str | None = TEST_SH) -> Path:
    task = root / name
    (task / "environment" / "data").mkdir(parents=True)
    (task / "tests").mkdir()
    (task / "solution").mkdir()
    (task / "environment" / "hello.txt").write_text("hi\n")
    (task / "environment" / "notes.md").write_text("notes\n")
    (task / "environment" / "data" / "input.csv").write_text("a,b\n")
    (task / "environment" / "unused.txt").write_text("not copied\n")
    (task / "tests" / "expected.txt").write_text("Hello, world!\n")
    (task / "solution" / "solve.sh").write_text("echo 'Hello, world!' > /app/hello.txt\n")
    for name_, text in (("task.toml", toml), ("instruction.md", instruction)):
        if text is not None:
            (task / name_).write_text(text)
    if dockerfile is not None:
        (task / "environment" / "Dockerfile").write_text(dockerfile)
    if test_sh is not None:
        (task / "tests" / "test.sh").write_text(test_sh)
    return task


def test_a_plain_task_is_read_into_its_batch_task(tmp_path: Path) -> None:
    write_task(tmp_path / "tasks", "hello-world", instruction="<!-- canary GUID 1234 -->\n\nSay hello.\n")
    (tmp_path / "tasks" / "notes").mkdir()  # not a task: skipped
    [task] = harbor_tasks(tmp_path / "tasks", check_sandbox=False)
    env_dir = (tmp_path / "tasks" / "hello-world" / "environment").resolve()
    assert task.id == "hello-world"
    assert task.spec.prompt == "Say hello.\n"
    assert "cwd" not in task.spec.model_fields_set  # a fresh workspace, as offline batches have
    assert task.spec.env == {"SHARED": "yes"}
    assert task.agent_timeout == 300.0
    assert task.verify_timeout == 120.0
    assert task.verify_env == {"LANG": "C.UTF-8", "MODE": "strict", "SHARED": "yes"}  # [verifier] over ENV
    assert task.workspace_files == ((env_dir / "hello.txt", "hello.txt"), (env_dir / "data", "data"),
                                    (env_dir / "notes.md", "docs/NOTES.md"))
    assert task.verify is not None
    assert "bwrap " in task.verify and "bash /tests/test.sh" in task.verify
    assert str((tmp_path / "tasks" / "hello-world" / "tests").resolve()) in task.verify
    assert "HARBOR_TEST_TOKEN" in task.verify and "TOKEN" not in task.verify_env  # taken from the host, later


def test_one_task_directory_is_a_batch_of_one(tmp_path: Path) -> None:
    task_dir = write_task(tmp_path, "solo", toml='[agent]\n', dockerfile="FROM python:3.12-slim\nWORKDIR /work\n")
    [task] = harbor_tasks(task_dir, check_sandbox=False)
    assert (task.id, task.verify_timeout, task.agent_timeout, task.workspace_files) == ("solo", None, None, ())
    assert "--chdir /work" in (task.verify or "")


def test_every_problem_of_every_task_is_said_at_once(tmp_path: Path) -> None:
    root = tmp_path / "tasks"
    write_task(root, "good")
    write_task(root, "builds", dockerfile="FROM ubuntu:24.04\nWORKDIR /app\nRUN apt-get update && \\\n"
                                          "    apt-get install -y curl\nCOPY hello.txt /app/\n")
    write_task(root, "no-instruction", instruction=None)
    write_task(root, "bad-toml", toml="[agent\ntimeout_sec = 1\n")
    write_task(root, "bad-timeout", toml="[verifier]\ntimeout_sec = -5\n")
    write_task(root, "no-test", test_sh=None)
    write_task(root, "no-workdir", dockerfile="FROM ubuntu:24.04\nCOPY hello.txt /hello.txt\n")
    write_task(root, "system-workdir", dockerfile="FROM ubuntu:24.04\nWORKDIR /root\n")
    write_task(root, "copies-out", dockerfile="FROM ubuntu:24.04\nWORKDIR /app\nCOPY hello.txt /usr/local/bin/\n")
    write_task(root, "two-stages", dockerfile="FROM golang AS build\nFROM ubuntu:24.04\nWORKDIR /app\n")
    write_task(root, "image", toml='[environment]\ndocker_image = "org/image:1"\n')
    write_task(root, "steps", toml='[[steps]]\nname = "one"\n')
    (write_task(root, "compose") / "environment" / "docker-compose.yaml").write_text("services: {}\n")
    write_task(root, "missing-source", dockerfile="FROM ubuntu:24.04\nWORKDIR /app\nCOPY nothing.txt .\n")
    with pytest.raises(TaskFileError) as caught:
        harbor_tasks(root, check_sandbox=False)
    said = "\n".join(text for _, text in caught.value.problems)
    expected = {
        "builds": "line 3: `RUN apt-get update && apt-get install -y curl` builds the image",
        "no-instruction": "instruction.md (the agent's prompt) is missing",
        "bad-toml": "task.toml is not TOML",
        "bad-timeout": "[verifier] timeout_sec is a number of seconds over 0, not -5",
        "no-test": "tests/test.sh is missing",
        "no-workdir": "sets no WORKDIR",
        "system-workdir": "WORKDIR /root is not a directory of its own",
        "copies-out": "COPY to /usr/local/bin, outside the workspace (WORKDIR /app)",
        "two-stages": "a second FROM (a multi-stage build)",
        "image": "docker_image = 'org/image:1' (a prebuilt image)",
        "steps": "a multi-step task",
        "compose": "environment/docker-compose.yaml (services around the agent)",
        "missing-source": "COPY nothing.txt: no such file in environment/",
    }
    for name, text in expected.items():
        assert f"{name}: " in said and text in said, (name, said)
    assert "needs a container (`--environment docker`" in said
    assert [task.id for task in caught.value.tasks] == ["good"]
    assert "good:" not in said
    assert "--environment docker" in str(caught.value) and "Fix the lines" not in str(caught.value)


def test_not_a_directory_and_an_empty_one_are_refused(tmp_path: Path) -> None:
    with pytest.raises(InvalidSpecError, match="not a directory"):
        harbor_tasks(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(TaskFileError, match="no Harbor task in it"):
        harbor_tasks(tmp_path / "empty")


def test_the_workspace_holds_what_the_dockerfile_copies(tmp_path: Path) -> None:
    [task] = harbor_tasks(write_task(tmp_path, "copies"), check_sandbox=False)
    workspaces = Workspaces(None, offline=False, keep=False)

    async def main() -> list[str]:
        workspace = await workspaces.prepare(task, ())
        try:
            return sorted(str(p.relative_to(workspace.path)) for p in workspace.path.rglob("*") if p.is_file())
        finally:
            await workspaces.release_now(workspace)
            workspaces.close()

    assert anyio.run(main) == ["data/input.csv", "docs/NOTES.md", "hello.txt"]


def _bwrap_works() -> bool:
    if shutil.which("bwrap") is None:
        return False
    try:
        return subprocess.run(["bwrap", "--bind", "/", "/", "--unshare-pid", "--proc", "/proc", "true"],
                              capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


needs_bwrap = pytest.mark.skipif(not _bwrap_works(), reason="bubblewrap (bwrap) is not installed or cannot run here")


def _verify(task_verify: str, workspace: Path, verifier_dir: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("HARBOR_TEST_")}
    environment.update(env, HARNESS_VERIFIER_DIR=str(verifier_dir))
    return subprocess.run(["sh", "-c", task_verify], cwd=workspace, env=environment, capture_output=True, text=True,
                          timeout=60)


@needs_bwrap
def test_the_verifier_sees_the_containers_paths(tmp_path: Path) -> None:
    [task] = harbor_tasks(write_task(tmp_path, "mapped"))
    assert task.verify is not None
    workspace, verifier_dir = tmp_path / "workspace", tmp_path / "verifier"
    workspace.mkdir()
    verifier_dir.mkdir()
    (workspace / "hello.txt").write_text("Hello, world!\n")
    done = _verify(task.verify, workspace, verifier_dir, **task.verify_env, HARBOR_TEST_TOKEN="t0k")
    assert done.returncode == 0, done.stderr
    assert (verifier_dir / "reward.txt").read_text() == "1\n"
    assert (verifier_dir / "seen.txt").read_text() == "strict t0k 3 yes C.UTF-8 /app hello.txt,\n"
    (workspace / "hello.txt").write_text("wrong\n")
    done = _verify(task.verify, workspace, verifier_dir, **task.verify_env, HARBOR_TEST_TOKEN="t0k",
                   HARBOR_TEST_LEVEL="7")
    assert done.returncode == 0, done.stderr
    assert (verifier_dir / "reward.txt").read_text() == "0\n"
    assert (verifier_dir / "seen.txt").read_text().startswith("strict t0k 7 ")


@needs_bwrap
def test_a_verifier_without_a_reward_or_a_host_variable_fails_saying_why(tmp_path: Path) -> None:
    [task] = harbor_tasks(write_task(tmp_path, "silent", test_sh="#!/bin/bash\necho checked\n"))
    assert task.verify is not None
    workspace, verifier_dir = tmp_path / "workspace", tmp_path / "verifier"
    workspace.mkdir()
    verifier_dir.mkdir()
    done = _verify(task.verify, workspace, verifier_dir, HARBOR_TEST_TOKEN="x")
    assert done.returncode == 1
    assert "checked" in done.stdout
    assert "without writing /logs/verifier/reward.txt or reward.json" in done.stderr
    done = _verify(task.verify, workspace, verifier_dir)
    assert done.returncode == 2
    assert "the verifier needs HARBOR_TEST_TOKEN" in done.stderr


def test_cli_harbor_refuses_what_needs_a_container(tmp_path: Path) -> None:
    write_task(tmp_path / "tasks", "builds", dockerfile="FROM ubuntu:24.04\nWORKDIR /app\nRUN make\n")
    code, _, err = finish(batch_process(tmp_path, "--harbor", "tasks", "--offline"))
    assert code == 2, err
    assert "builds: environment/Dockerfile line 3: `RUN make` builds the image" in err
    code, _, err = finish(batch_process(tmp_path, "tasks.jsonl", "--harbor", "tasks"))
    assert code == 2 and "give TASKS.jsonl or --harbor TASKS_DIR (one of them)" in err, err


@needs_bwrap  # the batch checks that the verifiers can run
def test_cli_harbor_plays_each_task_in_a_copy_of_its_workspace(tmp_path: Path) -> None:
    write_task(tmp_path / "tasks", "hello-world")
    code, _, err = finish(batch_process(tmp_path, "--harbor", "tasks", "--offline", "--keep-worktrees"))
    assert code == 0, err
    [result] = read_results(tmp_path / "tasks.results.jsonl")
    assert (result["id"], result["status"]) == ("hello-world", "success")
    kept = Path(err.rsplit("kept the workspaces in ", 1)[1].strip())
    try:
        assert {p.name for p in (kept / "hello-world").iterdir()} >= {"data", "docs", "hello.txt"}, err
        assert (kept / "hello-world" / "docs" / "NOTES.md").read_text() == "notes\n"
    finally:
        shutil.rmtree(kept, ignore_errors=True)


def test_copy_forms_are_read_as_docker_reads_them(tmp_path: Path) -> None:
    env_dir = tmp_path / "environment"
    (env_dir / "src").mkdir(parents=True)
    for name in ("a.py", "b.py", "README", "src/main.py"):
        (env_dir / name).write_text(name)
    (env_dir / "Dockerfile").write_text(
        "# syntax=docker/dockerfile:1\nFROM python:3.12\nWORKDIR /srv-app\n"
        'COPY ["src", "lib/"]\n'
        "COPY *.py ./py/\n"
        "COPY --chown=1000:1000 README \\\n"
        "     # a comment inside a continued line\n"
        "     a.py ./both/\n"
        "WORKDIR /srv-app/sub\nCOPY README readme.txt\n"
        "WORKDIR /srv-app\nUSER nobody\nCMD [\"sleep\", \"infinity\"]\n")
    environment, problems = read_dockerfile(env_dir)
    assert problems == []
    assert environment is not None and environment.workdir == "/srv-app"
    root = env_dir.resolve()
    assert environment.files == (
        (root / "src", "lib"), (root / "a.py", "py/a.py"), (root / "b.py", "py/b.py"),
        (root / "README", "both/README"), (root / "a.py", "both/a.py"), (root / "README", "sub/readme.txt"))


EDITED_SH = """\
#!/bin/bash
# the offline scripted agent (scenario `tools`) edits notes.txt: alpha -> beta
if grep -qx '{word}' /app/notes.txt; then reward=1; else reward=0; fi
echo $reward > /logs/verifier/reward.txt
"""


@pytest.mark.skipif(not _bwrap_works(), reason="bubblewrap cannot run here (apt-get install bubblewrap)")
def test_cli_harbor_tasks_play_and_are_verified_end_to_end(tmp_path: Path) -> None:
    """Harbor tasks played offline and judged by their own tests/test.sh (run under bubblewrap at /tests, the
    reward at /logs/verifier): the one whose test wants the agent's edit passes, the other does not."""
    for name, word in (("wants-beta", "beta"), ("wants-gamma", "gamma")):
        task = write_task(tmp_path / "tasks", name, test_sh=EDITED_SH.format(word=word),
                          toml='version = "1.0"\n\n[verifier]\ntimeout_sec = 60.0\n',
                          dockerfile="FROM ubuntu:24.04\nWORKDIR /app\nCOPY notes.txt .\n")
        (task / "environment" / "notes.txt").write_text("alpha\n")
    code, _, err = finish(batch_process(tmp_path, "--harbor", "tasks", "--offline", "--attempts", "2"))
    assert code == 0, err
    results = read_results(tmp_path / "tasks.results.jsonl")
    assert sorted((r["id"], r["attempt"], r["reward"], r["verified"]) for r in results) == [
        ("wants-beta", 1, 1.0, True), ("wants-beta", 2, 1.0, True),
        ("wants-gamma", 1, 0.0, False), ("wants-gamma", 2, 0.0, False)], err
    assert "verified: 2 of 4 cell(s) passed" in err


ESCAPE_SH = """\
#!/bin/bash
for target in "$1" "$HOME/harness-probe.txt" /app/written.txt; do
  if echo x > "$target" 2>/dev/null; then echo "wrote $target"; else echo "refused $target"; fi
done
env > /logs/verifier/env.txt
echo 1 > /logs/verifier/reward.txt
"""


@needs_bwrap
def test_the_verifier_can_write_only_the_workspace_and_its_own_directory(tmp_path: Path) -> None:
    """test.sh runs with the host read-only, a throwaway $HOME, and an environment of its own: a path outside
    the workspace and $HOME stay untouched, Harness's secrets are not there, the reward is still written."""
    outside = Path(__file__).parent / f".probe-{os.getpid()}-{tmp_path.name}"  # on the host, outside /tmp
    probe = outside / "written.txt"
    outside.mkdir()
    try:
        task_dir = write_task(tmp_path, "escape", test_sh=ESCAPE_SH.replace('"$1"', str(probe)))
        [task] = harbor_tasks(task_dir)
        assert task.verify is not None and task.verify_needs_reward
        workspace, verifier_dir, home = tmp_path / "workspace", tmp_path / "verifier", tmp_path / "home"
        for directory in (workspace, verifier_dir, home):
            directory.mkdir()
        done = _verify(task.verify, workspace, verifier_dir, **task.verify_env, HARBOR_TEST_TOKEN="t0k",
                       HOME=str(home), OPENAI_API_KEY="sk-test-abcdef0123456789", HARNESS_PROC_feedbeef="1")
        assert done.returncode == 0, done.stderr
        assert done.stdout.split("\n")[:3] == [f"refused {probe}", f"wrote {home}/harness-probe.txt",
                                                "wrote /app/written.txt"], done.stdout
        assert not probe.exists() and list(home.iterdir()) == []  # the host is as it was
        assert (workspace / "written.txt").read_text() == "x\n"
        assert (verifier_dir / "reward.txt").read_text() == "1\n"
        seen = dict(line.split("=", 1) for line in (verifier_dir / "env.txt").read_text().splitlines() if "=" in line)
        assert "OPENAI_API_KEY" not in seen and "sk-test-abcdef0123456789" not in (verifier_dir / "env.txt").read_text()
        assert seen["HARNESS_PROC_feedbeef"] == "1"  # the supervisor still finds what the test leaves running
        assert seen["HOME"] == str(home) and seen["MODE"] == "strict" and seen["TOKEN"] == "t0k"
        assert set(seen) - {"PWD", "SHLVL", "_", "OLDPWD"} == {"PATH", "HOME", "LANG", "MODE", "SHARED", "TOKEN",
                                                               "LEVEL", "HARNESS_PROC_feedbeef"}, seen
    finally:
        shutil.rmtree(outside, ignore_errors=True)


def test_an_instruction_naming_the_workdir_says_where_that_is(tmp_path: Path) -> None:
    """The agent plays in a copy of the workspace, not at WORKDIR: an instruction naming /app/... gets one
    sentence mapping it to the working directory; one that does not is left as it is."""
    write_task(tmp_path / "tasks", "names-app", instruction="Write the answer to /app/hello.txt.\n")
    write_task(tmp_path / "tasks", "names-apple", instruction="Read /apple/x and the /app.\n")
    write_task(tmp_path / "tasks", "plain", instruction="Write hello.txt (not /application).\n")
    tasks = {task.id: task.spec.prompt for task in harbor_tasks(tmp_path / "tasks", check_sandbox=False)}
    sentence = ("(Here, /app is your current working directory: /app/NAME is ./NAME. Use paths relative to it, "
                "not paths starting with /app.)\n")
    assert tasks["names-app"] == f"Write the answer to /app/hello.txt.\n\n{sentence}"
    assert tasks["names-apple"].endswith(sentence)  # "the /app." names it
    assert tasks["plain"] == "Write hello.txt (not /application).\n"
