"""`harness batch` as a user runs it, in a subprocess: the issue's acceptance (50 offline tasks, concurrency 8,
worktrees and patches; killed halfway, the re-run finishes only the rest), Ctrl-C, exit statuses, every bad line
reported before anything starts."""

from __future__ import annotations

import json
import os
import re
import signal
import stat
import subprocess
import time
from pathlib import Path

import pytest

from tests.batch.conftest import batch_process, finish, max_overlap, read_results, run_logs, task_lines, writes

_DEADLINE = 120


def wait_for_results(path: Path, count: int, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + _DEADLINE
    while time.monotonic() < deadline:
        if path.exists() and len(read_results(path)) >= count:
            return
        assert process.poll() is None, finish(process)
        time.sleep(0.02)
    raise AssertionError(f"fewer than {count} results after {_DEADLINE} s")


def wait_for_runs(runs: Path, count: int, process: subprocess.Popen[str]) -> None:
    """Until `count` runs have started: each has its run log (written from its start)."""
    deadline = time.monotonic() + _DEADLINE
    while time.monotonic() < deadline:
        if len([log for log in runs.glob("*.jsonl") if log.name.count(".") == 1]) >= count:
            return
        assert process.poll() is None, finish(process)
        time.sleep(0.02)
    raise AssertionError(f"fewer than {count} runs started after {_DEADLINE} s")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    path.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=path, check=True, timeout=60)
    (path / "README").write_text("base\n")
    subprocess.run(["git", "add", "."], cwd=path, check=True, timeout=60)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "base"], cwd=path,
                   check=True, timeout=60)
    return path


def test_acceptance_fifty_tasks_killed_halfway_and_rerun(tmp_path: Path, repo: Path) -> None:
    task_lines(tmp_path / "tasks.jsonl", [
        {"id": f"task-{n:02d}", "scenario": writes(f"src/t{n}.py", f"N = {n}\n", wait=0.3)} for n in range(50)])
    args = ["tasks.jsonl", "--offline", "--concurrency", "8", "--worktrees", "repo", "--worktrees-dir", "wt",
            "--patches", "out"]
    first = batch_process(tmp_path, *args)
    results = tmp_path / "tasks.results.jsonl"
    wait_for_results(results, 20, first)
    first.kill()  # SIGKILL: no chance to clean up
    first.wait(timeout=_DEADLINE)
    done_first = {r["id"] for r in read_results(results)}
    assert 20 <= len(done_first) < 50

    code, _, err = finish(batch_process(tmp_path, *args))
    assert code == 0, err
    final = read_results(results)
    assert sorted(r["id"] for r in final) == [f"task-{n:02d}" for n in range(50)]  # each once: none ran twice
    assert all(r["status"] == "success" for r in final)
    assert f"{len(done_first)} skipped (finished earlier)" in err
    patches = sorted(p.name for p in (tmp_path / "out").glob("*.patch"))
    assert patches == [f"task-{n:02d}.patch" for n in range(50)]
    for n in range(50):
        patch = (tmp_path / "out" / f"task-{n:02d}.patch").read_text()
        assert patch.count("diff --git") == 1 and f"+N = {n}\n" in patch
    predictions = [json.loads(line) for line in (tmp_path / "out" / "predictions.jsonl").read_text().splitlines()]
    assert sorted(p["instance_id"] for p in predictions) == [f"task-{n:02d}" for n in range(50)]
    logs = run_logs(tmp_path / "runs")
    assert {r["run_id"] for r in final} <= set(logs)
    assert max_overlap(logs) <= 8
    listed = subprocess.run(["git", "worktree", "list"], cwd=repo, capture_output=True, text=True, timeout=60)
    assert listed.stdout.count("\n") == 1  # the killed batch's worktrees were cleaned up by the re-run


def test_ctrl_c_records_live_runs_as_interrupted_and_a_rerun_resumes(tmp_path: Path) -> None:
    slow = {"steps": [{"take_long": 60}, {"say": "late"}]}
    task_lines(tmp_path / "tasks.jsonl", [{"id": "quick", "scenario": "say"},
                                          *({"id": f"slow{n}", "scenario": slow} for n in range(3))])
    process = batch_process(tmp_path, "tasks.jsonl", "--offline", "-j", "2")
    results = tmp_path / "tasks.results.jsonl"
    wait_for_results(results, 1, process)
    wait_for_runs(tmp_path / "runs", 3, process)  # the next slow run has started
    process.send_signal(signal.SIGINT)
    code, _, err = finish(process)
    assert code == 130, err
    statuses = {r["id"]: r["status"] for r in read_results(results)}
    assert statuses["quick"] == "success"
    assert sorted(s for t, s in statuses.items() if t != "quick") == ["interrupted", "interrupted"]
    assert "run the same command again" in err

    task_lines(tmp_path / "tasks.jsonl", [{"id": "quick", "scenario": "say"},
                                          *({"id": f"slow{n}", "scenario": "say"} for n in range(3))])
    code, _, err = finish(batch_process(tmp_path, "tasks.jsonl", "--offline", "-j", "2"))
    assert code == 0, err
    assert "1 skipped" in err and "3 succeeded" in err


def test_a_second_ctrl_c_still_records_the_runs_it_stopped_and_names_the_tasks_left(tmp_path: Path) -> None:
    """Ctrl-C twice at once: the live runs are stopped without waiting, yet each gets its `interrupted` line in
    the results file, and the summary counts them, names the tasks never started and how to resume."""
    slow = {"steps": [{"take_long": 60}, {"say": "late"}]}
    task_lines(tmp_path / "tasks.jsonl", [{"id": f"s{n}", "scenario": slow, "provider_options": {
        "ignore_interrupt": True}} for n in range(4)])  # agents that take their time to stop
    process = batch_process(tmp_path, "tasks.jsonl", "--offline", "-j", "2")
    deadline = time.monotonic() + _DEADLINE
    while len(list((tmp_path / "runs").glob("*.jsonl"))) < 2:
        assert time.monotonic() < deadline and process.poll() is None, finish(process)
        time.sleep(0.02)
    time.sleep(0.3)  # both agents are taking long
    process.send_signal(signal.SIGINT)
    _, errors = process.outputs  # type: ignore[attr-defined]
    while "interrupting 2 live run(s)" not in errors.read_text():
        assert time.monotonic() < deadline and process.poll() is None, finish(process)
        time.sleep(0.02)
    process.send_signal(signal.SIGINT)  # the user does not wait for them
    code, _, err = finish(process)
    assert code == 130, err
    assert "stopping now" in err
    lines = read_results(tmp_path / "tasks.results.jsonl")
    assert sorted(r["status"] for r in lines) == ["interrupted", "interrupted"], err
    assert {r["run_id"] for r in lines} <= set(run_logs(tmp_path / "runs")) and all(r["run_id"] for r in lines)
    assert "2 interrupted, 2 not started" in err
    assert "run the same command again to play the tasks left" in err


def test_sigterm_interrupts_too(tmp_path: Path) -> None:
    task_lines(tmp_path / "tasks.jsonl", [{"id": "slow", "scenario": {"steps": [{"take_long": 60}, {"say": "x"}]}}])
    process = batch_process(tmp_path, "tasks.jsonl", "--offline")
    wait_for_runs(tmp_path / "runs", 1, process)
    process.send_signal(signal.SIGTERM)
    code, _, err = finish(process)
    assert code == 130, err
    assert [r["status"] for r in read_results(tmp_path / "tasks.results.jsonl")] == ["interrupted"]


def test_a_failed_task_makes_exit_status_one_and_json_prints_results(tmp_path: Path) -> None:
    task_lines(tmp_path / "tasks.jsonl", [{"id": "ok", "scenario": "say"}, {"id": "bad", "scenario": "fail_401"}])
    code, out, err = finish(batch_process(tmp_path, "tasks.jsonl", "--offline", "--json", "--results", "r.jsonl"))
    assert code == 1, err
    printed = {json.loads(line)["id"]: json.loads(line) for line in out.splitlines()}
    assert printed["bad"]["error_code"] == "auth_failed" and printed["ok"]["status"] == "success"
    assert "bad: failed (auth_failed)" in err and "1 succeeded, 1 failed" in err
    assert (tmp_path / "r.jsonl").is_file()

    code, _, err = finish(batch_process(tmp_path, "tasks.jsonl", "--offline", "--results", "r.jsonl"))
    assert code == 1, err  # a re-run with nothing left still says a task failed
    assert "1 of them failed (--rerun-failed plays those again)" in err
    code, _, err = finish(batch_process(tmp_path, "tasks.jsonl", "--offline", "--results", "r.jsonl",
                                        "--rerun-failed"))
    assert code == 1 and "bad: failed (auth_failed)" in err and "1 skipped" in err


def test_every_bad_line_is_reported_with_its_number_and_nothing_runs(tmp_path: Path) -> None:
    (tmp_path / "tasks.jsonl").write_text("\n".join([
        json.dumps({"id": "fine", "scenario": "say"}),
        "{not json",
        json.dumps({"prompt": "no id"}),
        json.dumps({"id": "fine", "scenario": "say"}),
        json.dumps({"id": "x", "scenario": {"steps": [{"write": "a.txt"}]}}),
        json.dumps({"id": "y", "colour": "blue"}),
    ]) + "\n")
    code, _, err = finish(batch_process(tmp_path, "tasks.jsonl", "--offline"))
    assert code == 2, err
    for number in (2, 3, 4, 5, 6):
        assert f"line {number}:" in err
    assert "line 1:" not in err and "5 problems, nothing was run" in err
    assert not (tmp_path / "runs").exists() and not (tmp_path / "tasks.results.jsonl").exists()


def test_a_bad_tasks_file_is_reported_whole_in_one_round(tmp_path: Path) -> None:
    """Field typos, a repeated id (of a line that is bad too), an unknown provider, a scenario typo, a missing
    `cwd`, a bad value, a task whose checks fail after reading: every one at once, under one name, did you mean."""
    missing = tmp_path / "no" / "such" / "dir"
    elsewhere = tmp_path / "not-a-dir"
    elsewhere.write_text("a file\n")
    task_lines(tmp_path / "tasks.jsonl", [
        {"id": "t1", "scenario": "say", "promt": "x", "modle": "m"},
        {"id": "t1", "scenario": "say"},
        {"id": "t3", "scenario": "say", "provider": "scripted-ofline"},
        {"id": "t4", "scenario": "tool"},
        {"id": "t5", "scenario": "say", "cwd": str(missing)},
        {"id": "t6", "scenario": "say", "sandbox": "readonly"},
        {"id": "t7", "scenario": "say", "cwd": str(elsewhere)},
        {"id": "t8", "scenario": "say"},
    ])
    code, out, err = finish(batch_process(tmp_path, "tasks.jsonl", "--offline"))
    assert code == 2, err
    assert err.startswith("harness: error: tasks.jsonl: 8 problems, nothing was run:\n"), err
    said = err.splitlines()
    assert "  line 1: t1: promt: not a field of a task; did you mean 'prompt'?" in said
    assert "  line 1: t1: modle: not a field of a task; did you mean 'model'?" in said
    assert "  line 2: t1: id 't1' is also the id of line 1; ids must be unique" in said
    assert any(line.startswith("  line 3: t3: no provider named 'scripted-ofline'; did you mean 'scripted-offline'?")
               for line in said)
    assert any(line.startswith("  line 4: t4: scenario: no offline scenario named 'tool'; did you mean 'tools'?")
               for line in said)
    assert f"  line 5: t5: cwd {missing} does not exist: create it first, or leave `cwd` out for a temporary " \
           "workspace (Harness never creates a task's directory)" in said
    assert any(line.startswith("  line 6: t6: sandbox: ") for line in said)
    assert any(line.startswith(f"  line 7: t7: cwd {elsewhere} is not a directory: name one, or leave")
               for line in said)
    assert sum(line.startswith("  line ") for line in said) == 8 and "tasks:" not in err  # one prefix: the file
    assert not (tmp_path / "no").exists(), "a task's cwd was created"
    assert not (tmp_path / "runs").exists() and not (tmp_path / "tasks.results.jsonl").exists() and out == ""


@pytest.mark.parametrize("offline", [True, False])
def test_a_task_cwd_that_does_not_exist_stops_the_batch_before_anything_starts(tmp_path: Path,
                                                                                 offline: bool) -> None:
    missing = tmp_path / "nonexistent" / "dir"
    task_lines(tmp_path / "tasks.jsonl", [{"id": "here", "prompt": "hi", "cwd": str(tmp_path)},
                                          {"id": "gone", "prompt": "hi", "cwd": str(missing)}])
    code, _, err = finish(batch_process(tmp_path, "tasks.jsonl", *(["--offline"] if offline else [])))
    assert code == 2, err
    assert f"line 2: gone: cwd {missing} does not exist: create it first, or " in err
    assert ("leave `cwd` out for a temporary workspace" if offline else "correct the path") in err
    assert not (tmp_path / "nonexistent").exists() and not (tmp_path / "runs").exists()
    assert not (tmp_path / "tasks.results.jsonl").exists()  # not even the task whose cwd exists ran


@pytest.mark.parametrize(("args", "said"), [
    (["--patches", "out"], "--patches needs --worktrees"),
    (["--scenario", "say"], "--scenario applies with --offline"),
    (["--engine", "warp"], "no executor named 'warp'"),
])
def test_usage_errors_say_what_to_do(tmp_path: Path, args: list[str], said: str) -> None:
    task_lines(tmp_path / "tasks.jsonl", [{"id": "a", "prompt": "hi"}])
    code, _, err = finish(batch_process(tmp_path, "tasks.jsonl", *args))
    assert code == 2, err
    assert said in err


def test_on_a_terminal_a_progress_bar_shows_the_counts(tmp_path: Path) -> None:
    import fcntl
    import os
    import select
    import struct
    import sys
    import termios

    task_lines(tmp_path / "tasks.jsonl", [{"id": f"t{n}", "scenario": writes(f"f{n}.txt", "x\n", wait=0.4)}
                                          for n in range(6)] + [{"id": "bad", "scenario": "fail_401"}])
    env = {**os.environ, "HARNESS_LOAD_PLUGINS": "scripted-offline", "HARNESS_PROVIDER": "scripted-offline",
           "HARNESS_RUNS_DIR": str(tmp_path / "runs"), "TERM": "xterm-256color"}
    controller, terminal = os.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 160, 0, 0))
    child = subprocess.Popen([sys.executable, "-m", "harness_core", "batch", "tasks.jsonl", "--offline", "-j", "2"],
                             cwd=tmp_path, env=env, stdin=terminal, stdout=terminal, stderr=terminal,
                             start_new_session=True)
    os.close(terminal)
    seen = b""
    deadline = time.monotonic() + _DEADLINE
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([controller], [], [], 0.2)
            if not ready:
                if child.poll() is not None:
                    break
                continue
            try:
                chunk = os.read(controller, 65536)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
    finally:
        os.close(controller)
        child.wait(timeout=_DEADLINE)
    text = seen.decode(errors="replace")
    assert child.returncode == 1, text
    assert "running" in text and "queued" in text and "elapsed" in text and "ETA" in text
    assert "7/7" in text and "6 ok · 1 failed" in text
    assert "bad: failed (auth_failed)" in text  # a task that did not succeed gets its own line
    assert "t1: success" not in text  # on a terminal, successes are counted, not listed


def _screen(raw: bytes) -> list[str]:
    """The lines a terminal shows for `raw` (enough of one for rich's live display: carriage return, newline,
    cursor up, erase line; other control sequences ignored)."""
    lines, row, col = [""], 0, 0
    for token in re.findall(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\r|\n|[^\x1b\r\n]+", raw.decode(errors="replace")):
        if token == "\r":
            col = 0
        elif token == "\n":
            row += 1
            lines += [""] * (row + 1 - len(lines))
        elif token.startswith("\x1b["):
            if token.endswith("A"):
                row = max(0, row - int(token[2:-1] or 1))
            elif token == "\x1b[2K":
                lines[row] = ""
        else:
            line = lines[row].ljust(col)
            lines[row] = line[:col] + token + line[col + len(token):]
            col += len(token)
    return lines


def test_after_ctrl_c_on_a_terminal_the_summary_is_the_last_thing_shown(tmp_path: Path) -> None:
    """The progress bar goes once the batch ends: it is not drawn again, cut short, under the summary; an
    interrupted task's line says so once."""
    import fcntl
    import select
    import struct
    import sys
    import termios

    slow = {"steps": [{"take_long": 60}, {"say": "late"}]}
    task_lines(tmp_path / "tasks.jsonl", [{"id": "quick", "scenario": "say"},
                                          *({"id": f"slow{n}", "scenario": slow} for n in range(3))])
    env = {**os.environ, "HARNESS_LOAD_PLUGINS": "scripted-offline", "HARNESS_PROVIDER": "scripted-offline",
           "HARNESS_RUNS_DIR": str(tmp_path / "runs"), "TERM": "xterm-256color"}
    env.pop("COLUMNS", None)
    controller, terminal = os.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 80, 0, 0))
    child = subprocess.Popen([sys.executable, "-m", "harness_core", "batch", "tasks.jsonl", "--offline", "-j", "2"],
                             cwd=tmp_path, env=env, stdin=terminal, stdout=terminal, stderr=terminal,
                             start_new_session=True)
    os.close(terminal)
    seen = b""
    deadline = time.monotonic() + _DEADLINE
    try:
        while b"2 running" not in seen or b"1 ok" not in seen:  # quick is done, two slow ones take long
            assert time.monotonic() < deadline and child.poll() is None, seen
            if select.select([controller], [], [], 0.2)[0]:
                seen += os.read(controller, 65536)
        child.send_signal(signal.SIGINT)
        while time.monotonic() < deadline:
            if not select.select([controller], [], [], 0.2)[0]:
                if child.poll() is not None:
                    break
                continue
            try:
                chunk = os.read(controller, 65536)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
    finally:
        os.close(controller)
        if child.poll() is None:
            child.kill()
        child.wait(timeout=_DEADLINE)
    assert child.returncode == 130, seen
    shown = [line.rstrip() for line in _screen(seen) if line.strip()]
    assert shown[-1] == "run the same command again to play the tasks left", "\n".join(shown)
    assert not any("elapsed" in line for line in shown), "\n".join(shown)
    assert any(re.match(r"slow\d: interrupted \[run ", line) for line in shown), "\n".join(shown)


def test_no_secret_and_no_file_others_can_read_in_anything_a_batch_writes(tmp_path: Path, repo: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A task's agent writes a `spec.env` value, a secret-looking variable of Harness's own environment and a key
    into a file (so into its patch), prints them and says them: none is in any file of the runs dir (run logs, wire
    logs), the results file, the patches and `predictions.jsonl`, the worktrees dir, nor in `--json`'s stdout; every
    file there is 0600 and every directory 0700 (the umask here is 022)."""
    spec_secret, process_secret, shaped = "spec-env-secret-7c1d9e", "process-api-key-3b8f2a", "sk-proj-Zx81Kq0Lm2Nb7"
    monkeypatch.setenv("HARNESS_TEST_FOO_API_KEY", process_secret)
    leak = f"{spec_secret} {process_secret} {shaped}"
    scenario = {"steps": [{"write": "leak.txt", "content": leak + "\n"}, {"run": "cat leak.txt", "output": leak},
                          {"say": f"wrote {leak}"}]}
    task_lines(tmp_path / "tasks.jsonl", [{"id": "leak", "env": {"PROBE": spec_secret}, "scenario": scenario}])
    old = os.umask(0o022)
    try:
        code, out, err = finish(batch_process(tmp_path, "tasks.jsonl", "--offline", "--worktrees", "repo",
                                              "--worktrees-dir", "wt", "--patches", "out", "--record-wire", "--json"))
    finally:
        os.umask(old)
    assert code == 0, err
    patch = (tmp_path / "out" / "leak.patch").read_text()
    assert "b/leak.txt" in patch and "+*** *** ***" in patch  # the file was written: the patch shows it, masked
    assert json.loads(out)["final_text"] == "wrote *** *** ***"
    written = [tmp_path / "tasks.results.jsonl", tmp_path / "runs", tmp_path / "out"]
    for root in (tmp_path / "runs", tmp_path / "out", tmp_path / "wt"):  # the worktrees dir goes with its last one
        written += [p for p in root.rglob("*")]
    assert {p.suffix for p in written if p.is_file()} >= {".jsonl", ".patch"}
    for path in written:
        mode = stat.S_IMODE(path.lstat().st_mode)
        assert mode == (0o700 if path.is_dir() else 0o600), f"{path} is {oct(mode)}"
        if path.is_file():
            data = path.read_text(errors="replace")
            for secret in (spec_secret, process_secret, shaped):
                assert secret not in data, f"{secret} in {path.relative_to(tmp_path)}"
    assert not {spec_secret, process_secret, shaped} & set(out.split())


def test_a_batch_killed_on_a_terminal_leaves_the_cursor_and_its_resume_removes_what_it_left(tmp_path: Path) -> None:
    """SIGKILL while the progress bar is up: the cursor was never hidden (nothing can show it again); the
    temporary workspaces and agent state of the killed runs stay until the same command resumes the batch, which
    removes them and says so."""
    import fcntl
    import os
    import select
    import struct
    import sys
    import termios

    temp = tmp_path / "tmp"
    temp.mkdir()
    task_lines(tmp_path / "tasks.jsonl", [{"id": f"t{n}", "scenario": writes(f"f{n}.txt", "x\n", wait=30)}
                                          for n in range(3)])
    env = {**os.environ, "HARNESS_LOAD_PLUGINS": "scripted-offline", "HARNESS_PROVIDER": "scripted-offline",
           "HARNESS_RUNS_DIR": str(tmp_path / "runs"), "TERM": "xterm-256color", "TMPDIR": str(temp)}
    controller, terminal = os.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    child = subprocess.Popen([sys.executable, "-m", "harness_core", "batch", "tasks.jsonl", "--offline", "-j", "2"],
                             cwd=tmp_path, env=env, stdin=terminal, stdout=terminal, stderr=terminal,
                             start_new_session=True)
    os.close(terminal)
    seen = b""
    deadline = time.monotonic() + _DEADLINE
    try:  # until the bar is up and both live tasks have their workspace and their agent's state
        while b"2 running" not in seen or sum(p.is_dir() for p in temp.glob("harness-offline-*")) < 2:
            assert time.monotonic() < deadline and child.poll() is None, seen
            if select.select([controller], [], [], 0.2)[0]:
                seen += os.read(controller, 65536)
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=_DEADLINE)
        while select.select([controller], [], [], 0.2)[0]:
            try:
                chunk = os.read(controller, 65536)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
    finally:
        os.close(controller)
        if child.poll() is None:
            child.kill()
            child.wait(timeout=_DEADLINE)
    assert b"\x1b[?25l" not in seen  # the cursor was never hidden
    left = sorted(p.name for p in temp.iterdir() if p.is_dir())
    assert [name.split("-")[1] for name in left] == ["batch", "offline", "offline"], left

    task_lines(tmp_path / "tasks.jsonl", [{"id": f"t{n}", "scenario": "say"} for n in range(3)])
    resumed = subprocess.run([sys.executable, "-m", "harness_core", "batch", "tasks.jsonl", "--offline"], cwd=tmp_path,
                             env=env, capture_output=True, text=True, timeout=_DEADLINE)
    assert resumed.returncode == 0, resumed.stderr
    assert "harness: removed 3 temporary directories a killed Harness left" in resumed.stderr
    assert list(temp.iterdir()) == []  # theirs, and its own


def test_json_lines_go_to_stdout_while_the_bar_shows_on_the_terminal(tmp_path: Path) -> None:
    """`harness batch --json > FILE` on a terminal: the bar on the terminal, every result line in the file."""
    import fcntl
    import os
    import select
    import struct
    import sys
    import termios

    task_lines(tmp_path / "tasks.jsonl", [{"id": f"t{n}", "scenario": "say"} for n in range(3)])
    env = {**os.environ, "HARNESS_LOAD_PLUGINS": "scripted-offline", "HARNESS_PROVIDER": "scripted-offline",
           "HARNESS_RUNS_DIR": str(tmp_path / "runs"), "TERM": "xterm-256color"}
    controller, terminal = os.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    with (tmp_path / "out.jsonl").open("w") as out:
        child = subprocess.Popen([sys.executable, "-m", "harness_core", "batch", "tasks.jsonl", "--offline", "--json"],
                                 cwd=tmp_path, env=env, stdin=terminal, stdout=out, stderr=terminal,
                                 start_new_session=True)
    os.close(terminal)
    seen = b""
    deadline = time.monotonic() + _DEADLINE
    try:
        while child.poll() is None:
            assert time.monotonic() < deadline, seen
            if select.select([controller], [], [], 0.2)[0]:
                try:
                    seen += os.read(controller, 65536)
                except OSError:
                    break
        assert child.wait(timeout=_DEADLINE) == 0, seen
    finally:
        if child.poll() is None:
            child.kill()
        os.close(controller)
    lines = (tmp_path / "out.jsonl").read_text().splitlines()
    assert sorted(json.loads(line)["id"] for line in lines) == ["t0", "t1", "t2"], seen
    assert b'"run_id"' not in seen
