"""`harness view` as a command: it prints its URL (127.0.0.1, a free port, a token), two viewers get two ports and
two tokens, Ctrl-C stops it at once and cleanly even while pages follow it live (open event streams) or an answer
waits on its run, and a `--batch` file that is not there is a usage error before it starts."""

from __future__ import annotations

import concurrent.futures
import functools
import http.client
import os
import queue
import signal
import subprocess
import threading
import time
from pathlib import Path

import anyio
from harness_core.jobs.answers import answers_path
from harness_core.store import pending_approvals, writer_pid
from view_helpers import DEADLINE, HARNESS, Corpus, harness, lines_of, start_viewer, stop_viewer

from harness_view import actions


def test_ctrl_c_stops_the_viewer_while_a_page_follows_it_live(corpus: Corpus) -> None:
    """Ctrl-C with the runs list and a live run's page open (their event streams): the streams end (each response
    is complete), it stops in seconds with status 0 and says so, and no traceback reaches the terminal."""
    run_id = corpus.background("-p", "claude", "-a", "untrusted", "edit it")  # live until it is cancelled
    corpus.wait_status(run_id, "waiting for approval")
    first = start_viewer(["--runs-dir", str(corpus.runs_dir)], corpus.env, corpus.root)
    second = start_viewer(["--runs-dir", str(corpus.runs_dir)], corpus.env, corpus.root)
    streams: list[http.client.HTTPConnection] = []
    try:
        assert first.port != second.port and first.token != second.token and len(first.token) >= 40
        answers = []
        for path in ("/events", f"/runs/{run_id}/events?after=-1&status=waiting+for+approval"):
            stream = http.client.HTTPConnection("127.0.0.1", first.port, timeout=30)
            streams.append(stream)
            stream.request("GET", path, headers={"Cookie": f"harness_view_{first.port}={first.token}"})
            answer = stream.getresponse()
            assert answer.status == 200 and answer.getheader("content-type", "").startswith("text/event-stream")
            assert answer.readline() in (b": watching\n", b"event: block\n")
            answers.append(answer)
        began = time.monotonic()
        assert stop_viewer(first) == 0
        assert time.monotonic() - began < 10  # the open streams do not hold it up
        for answer in answers:
            answer.read()  # to its end: an unfinished response (a cancelled stream) raises IncompleteRead
        assert first.proc.stdout is not None and "harness view: stopped" in first.proc.stdout.read()
        said = first.stderr.read_text()
        assert "Traceback" not in said and "CancelledError" not in said and "Exception" not in said, said
    finally:
        for stream in streams:
            stream.close()
        stop_viewer(second)
        corpus.run("cancel", run_id)


def test_ctrl_c_ends_an_answer_in_flight_quietly(corpus: Corpus) -> None:
    """Ctrl-C while the page's Approve waits for a run that does not take the answer (its worker is stopped,
    SIGSTOP; the wait is up to 10 s): the wait ends, the POST gets a whole answer that says what happened, and the
    viewer stops within its grace (nothing left for the server to cancel), with no traceback."""
    run_id = corpus.background("-p", "claude", "-a", "untrusted", "edit it")  # live until it is cancelled
    corpus.wait_status(run_id, "waiting for approval")
    log = corpus.runs_dir / f"{run_id}.jsonl"
    request_id = next(iter(pending_approvals(log)))
    worker = writer_pid(log)
    assert worker is not None
    viewer = start_viewer(["--runs-dir", str(corpus.runs_dir)], corpus.env, corpus.root)
    post = http.client.HTTPConnection("127.0.0.1", viewer.port, timeout=30)
    os.kill(worker, signal.SIGSTOP)
    try:
        jar = {"Cookie": f"harness_view_{viewer.port}={viewer.token}"}
        page = http.client.HTTPConnection("127.0.0.1", viewer.port, timeout=30)
        page.request("GET", "/", headers=jar)
        token = page.getresponse().read().decode().split('name="csrf" content="', 1)[1].split('"', 1)[0]
        page.close()
        post.request("POST", f"/runs/{run_id}/approve", body=f"request_id={request_id}&decision=approve&csrf={token}",
                     headers={**jar, "Content-Type": "application/x-www-form-urlencoded"})
        answers = answers_path(corpus.runs_dir, run_id)
        deadline = time.monotonic() + DEADLINE  # the answer is written: the viewer now waits for the run to take it
        while request_id not in answers.read_text():
            assert time.monotonic() < deadline, "the viewer wrote no answer"
            time.sleep(0.05)
        assert stop_viewer(viewer) == 0
        answer = post.getresponse()
        body = answer.read().decode()  # to its end: a response cut by the server raises IncompleteRead
        assert answer.status == 409 and f"the viewer stopped before run {run_id} took it" in body, body
        said = viewer.stderr.read_text()
        assert "Cancel 1 running task" not in said and "timeout graceful shutdown exceeded" not in said, said
        assert "Traceback" not in said and "CancelledError" not in said and "Exception" not in said, said
    finally:
        post.close()
        os.kill(worker, signal.SIGCONT)
        stop_viewer(viewer)
        harness(["cancel", run_id, "--runs-dir", str(corpus.runs_dir)], corpus.env, cwd=corpus.root)


def test_a_cancel_cut_short_by_the_viewers_stop_has_sent_its_interrupt(corpus: Corpus) -> None:
    """The page's Cancel when the viewer is stopping (Ctrl-C): it does not wait for the run to end, says so, and
    the interrupt went first: the run still ends `interrupted`."""
    run_id = corpus.background("-p", "claude", "-a", "untrusted", "edit it")
    corpus.wait_status(run_id, "waiting for approval")
    cancel = functools.partial(actions.cancel, corpus.runs_dir, run_id, stopping=lambda: True)
    with concurrent.futures.ThreadPoolExecutor(1) as own_loop:  # the browser tests' loop may run in this thread
        said = own_loop.submit(anyio.run, cancel).result(timeout=DEADLINE)
    assert said == f"Cancel asked of run {run_id}; the viewer stopped before it ended."
    assert corpus.wait_status(run_id, "interrupted") == "interrupted"


def test_a_batch_file_not_there_is_a_usage_error_at_start(corpus: Corpus) -> None:
    """A typo in `--batch` is said before the viewer starts (exit 2), naming the file and what to give instead."""
    missing = corpus.root / "tasks.reslts.jsonl"
    proc = subprocess.Popen([*HARNESS, "view", "--runs-dir", str(corpus.runs_dir), "--batch", str(missing)],
                            env=corpus.env, cwd=corpus.root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # the wait ends when it exits or when a viewer that starts anyway prints its URL, whichever comes first
        out = _stdout_until_url(proc)
        assert "token=" not in out, f"it started despite the missing file: {out}"
        err = proc.communicate(timeout=DEADLINE)[1]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 2, out + err
    assert f"no results file {missing}" in err
    assert "TASKS.results.jsonl" in err and "leave --batch out" in err


def _stdout_until_url(proc: subprocess.Popen[str]) -> str:
    """What `proc` prints on stdout until it ends or prints a viewer's URL, waited for at most `DEADLINE` s."""
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lines_of, args=(proc, lines), daemon=True).start()
    said = ""
    end = time.monotonic() + DEADLINE
    while True:
        line = lines.get(timeout=max(0.0, end - time.monotonic()))
        said += line
        if not line or "token=" in line:
            return said


def test_another_host_is_said_to_carry_the_token_unencrypted(corpus: Corpus) -> None:
    """`--host` other than 127.0.0.1 (here 127.0.0.2, still this machine's loopback): once it listens, it warns
    that the token travels in clear text and names the ssh tunnel to use instead."""
    viewer = start_viewer(["--runs-dir", str(corpus.runs_dir), "--host", "127.0.0.2"], corpus.env, corpus.root)
    try:
        assert viewer.base.startswith("http://127.0.0.2:")
        page = http.client.HTTPConnection("127.0.0.2", viewer.port, timeout=30)
        page.request("GET", "/", headers={"Cookie": f"harness_view_{viewer.port}={viewer.token}"})
        assert page.getresponse().status == 200  # it serves there (and so has its Ctrl-C handler)
        page.close()
    finally:
        assert stop_viewer(viewer) == 0
    said = viewer.stderr.read_text()
    assert "listening on 127.0.0.2 over plain HTTP: the token and its cookie travel unencrypted" in said
    assert f"ssh -L {viewer.port}:127.0.0.1:{viewer.port} HOST" in said


def test_open_hands_the_browser_a_private_file_not_the_token(corpus: Corpus, tmp_path: Path) -> None:
    """`--open` gives the browser a 0600 file that redirects to the URL: the token is on no command line (`ps`)."""
    said = tmp_path / "browser-args"
    browser = tmp_path / "browser"
    browser.write_text(f"#!/bin/sh\nprintf '%s\\n' \"$@\" > {said}\n")
    browser.chmod(0o700)
    viewer = start_viewer(["--runs-dir", str(corpus.runs_dir), "--open"], {**corpus.env, "BROWSER": str(browser)},
                          corpus.root)
    try:
        deadline = time.monotonic() + 30
        while not (said.exists() and said.read_text().endswith("\n")):
            assert time.monotonic() < deadline, "the browser was never started"
            time.sleep(0.05)
        page = http.client.HTTPConnection("127.0.0.1", viewer.port, timeout=30)
        page.request("GET", "/", headers={"Cookie": f"harness_view_{viewer.port}={viewer.token}"})
        assert page.getresponse().status == 200  # it serves (and so has its Ctrl-C handler) before it is stopped
        page.close()
    finally:
        assert stop_viewer(viewer) == 0
    args = said.read_text()
    assert viewer.token not in args
    opened = Path(args.strip().removeprefix("file://"))
    assert opened.stat().st_mode & 0o777 == 0o600 and opened.parent.stat().st_mode & 0o777 == 0o700
    assert f'url={viewer.url}"' in opened.read_text()
