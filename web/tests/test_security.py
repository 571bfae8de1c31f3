"""The viewer's safety over HTTP, against `harness view` itself: every request needs the token (the URL's once,
then the cookie), writes need the CSRF token and no foreign Origin, a foreign Host is refused, every response has
a strict CSP, only a run's own files are served (no traversal, no links), and it listens on 127.0.0.1 only."""

from __future__ import annotations

import http.client
import json
import os
import time
from pathlib import Path

import pytest
from harness_core import ApprovalDecision
from harness_core.jobs.answers import AnswersFile, answers_path
from harness_core.store import pending_approvals
from view_helpers import Corpus, Viewer, release

GETS = ["/", "/fragments/runs", "/events", "/batches", "/static/style.css", "/static/app.js", "/runs/{run}",
        "/runs/{run}/events", "/runs/{run}/log", "/runs/{run}/wire", "/runs/{run}/worker", "/batches/nokey",
        "/no/such/page"]
"""Every kind of GET route (an event stream too: its 401 comes at once, never a stream that waits)."""
POSTS = ["/runs/{run}/approve", "/runs/{run}/cancel"]


def request(viewer: Viewer, method: str, path: str, *, headers: dict[str, str] | None = None,
            body: str | None = None, timeout: float = 30) -> tuple[int, dict[str, str], str]:
    """One request with exactly this path (no client-side normalising of `..`)."""
    conn = http.client.HTTPConnection("127.0.0.1", viewer.port, timeout=timeout)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        answer = conn.getresponse()
        return answer.status, {k.lower(): v for k, v in answer.getheaders()}, answer.read().decode("utf-8", "replace")
    finally:
        conn.close()


def cookie(viewer: Viewer) -> dict[str, str]:
    return {"Cookie": f"harness_view_{viewer.port}={viewer.token}"}


def csrf(viewer: Viewer) -> str:
    status, _, body = request(viewer, "GET", "/", headers=cookie(viewer))
    assert status == 200
    return body.split('name="csrf" content="', 1)[1].split('"', 1)[0]


@pytest.mark.parametrize("path", GETS + POSTS)
def test_a_request_without_the_token_gets_401(viewer: Viewer, corpus: Corpus, path: str) -> None:
    path = path.format(run=corpus.demo["claude"])
    method = "POST" if path.endswith(("/approve", "/cancel")) else "GET"
    for headers in ({}, {"Cookie": f"harness_view_{viewer.port}=wrong"}, {"Authorization": "Bearer wrong"},
                    {"Cookie": f"harness_view_{viewer.port + 1}={viewer.token}"}):  # another port's cookie
        status, answer_headers, body = request(viewer, method, path, headers=headers)
        assert status == 401, (path, headers)
        assert "token" in body and corpus.demo["claude"] not in body
        assert "default-src 'none'" in answer_headers["content-security-policy"]


def test_the_token_url_sets_a_strict_cookie_and_drops_the_token(viewer: Viewer) -> None:
    status, headers, _ = request(viewer, "GET", f"/?status=success&token={viewer.token}")
    assert status == 303
    assert headers["location"] == "/?status=success"  # the token leaves the address bar and the history
    set_cookie = headers["set-cookie"]
    assert set_cookie.startswith(f"harness_view_{viewer.port}={viewer.token};")
    assert "HttpOnly" in set_cookie and "SameSite=Strict" in set_cookie
    assert request(viewer, "GET", "/", headers=cookie(viewer))[0] == 200
    assert request(viewer, "GET", "/", headers={"Authorization": f"Bearer {viewer.token}"})[0] == 200
    assert request(viewer, "GET", "/?token=wrong")[0] == 401


@pytest.mark.parametrize(("path", "location"), [
    ("//evil.example/", "/evil.example/"), ("/%2F%2Fevil.example", "/evil.example"),
    ("/%0d%0aSet-Cookie:%20x=1", "/%0D%0ASet-Cookie%3A%20x%3D1"),
])
def test_the_token_url_redirects_only_within_the_viewer(viewer: Viewer, path: str, location: str) -> None:
    status, headers, _ = request(viewer, "GET", f"{path}?token={viewer.token}")
    assert status == 303 and headers["location"] == location
    assert "x=1" not in headers["set-cookie"]


def test_every_page_has_a_strict_csp_and_its_sibling_headers(viewer: Viewer, corpus: Corpus) -> None:
    for path in ("/", f"/runs/{corpus.demo['claude']}", "/static/app.js", f"/runs/{corpus.demo['claude']}/log"):
        status, headers, _ = request(viewer, "GET", path, headers=cookie(viewer))
        assert status == 200, path
        csp = headers["content-security-policy"]
        assert "default-src 'none'" in csp and "script-src 'self'" in csp and "unsafe-inline" not in csp
        assert "frame-ancestors 'none'" in csp and "base-uri 'none'" in csp
        assert headers["x-content-type-options"] == "nosniff"
        assert headers["referrer-policy"] == "same-origin"
        assert headers["x-frame-options"] == "DENY"


def test_a_foreign_host_is_refused(viewer: Viewer) -> None:
    """DNS rebinding: a page of evil.example resolving to 127.0.0.1 sends its own Host."""
    headers = {**cookie(viewer), "Host": f"evil.example:{viewer.port}"}
    assert request(viewer, "GET", "/", headers=headers)[0] == 400
    assert request(viewer, "GET", "/", headers={**cookie(viewer), "Host": f"localhost:{viewer.port}"})[0] == 200


@pytest.mark.parametrize("path", POSTS)
def test_a_write_needs_the_csrf_token_and_no_foreign_origin(viewer: Viewer, corpus: Corpus, path: str) -> None:
    path = path.format(run=corpus.demo["claude"])
    form = {**cookie(viewer), "Content-Type": "application/x-www-form-urlencoded"}
    body = "request_id=apr-0&decision=approve"
    assert request(viewer, "POST", path, headers=form, body=body)[0] == 403
    assert request(viewer, "POST", path, headers=form, body=body + "&csrf=wrong")[0] == 403
    token = csrf(viewer)
    foreign = {**form, "Origin": "http://evil.example"}
    assert request(viewer, "POST", path, headers=foreign, body=f"{body}&csrf={token}")[0] == 403
    cross = {**form, "Sec-Fetch-Site": "cross-site"}
    assert request(viewer, "POST", path, headers=cross, body=f"{body}&csrf={token}")[0] == 403
    status, _, page = request(viewer, "POST", path, headers={**form, "Origin": f"http://127.0.0.1:{viewer.port}"},
                              body=f"{body}&csrf={token}")
    assert status == 409  # past the checks: the run is over, and the page says so
    assert ("is not a background run" if path.endswith("approve") else "success: there is nothing to cancel") in page
    status, _, _ = request(viewer, "POST", path, headers={**cookie(viewer), "X-CSRF-Token": token}, body="")
    assert status == 409


@pytest.mark.parametrize("path", [
    "/runs/..%2F..%2F..%2Fetc%2Fpasswd/log", "/runs/../../../etc/passwd", "/runs/%2e%2e/log", "/runs/..%2fruns/log",
    "/static/..%2f..%2fpyproject.toml", "/static/../app.py", "/static/%2e%2e/app.py", "/runs/{run}/answers",
    "/runs/{run}/..%2f..%2f", "/runs/{run}.jsonl/log", "/runs/LINKED/log", "/runs/{run}/log%00",
    "/runs/LINKED", "/runs/LINKED/events",
    "/runs/PIPED", "/runs/PIPED/events", "/runs/PIPED/log", "/runs/PIPED/wire",
])
def test_nothing_outside_a_runs_own_files_is_served(viewer: Viewer, corpus: Corpus, path: str) -> None:
    """Not a traversal, a link, nor a FIFO named like a run's files (answered at once, never waiting for a
    writer: the viewer would hang, and Ctrl-C with it)."""
    outside = corpus.root / "secret.txt"
    outside.write_text("not for the viewer\n")
    link = corpus.runs_dir / "LINKED.jsonl"
    if not link.is_symlink():
        os.symlink(outside, link)
    pipes = [corpus.runs_dir / "PIPED.jsonl", corpus.runs_dir / "PIPED.wire.jsonl"]
    for pipe in pipes:
        os.mkfifo(pipe, 0o600)
    try:
        status, _, body = request(viewer, "GET", path.format(run=corpus.demo["claude"]), headers=cookie(viewer))
    finally:
        link.unlink()
        for pipe in pipes:
            release(pipe)
    assert status == 404
    assert "not for the viewer" not in body and "root:" not in body and "[project]" not in body


def test_a_link_named_like_a_log_is_not_listed(viewer: Viewer, corpus: Corpus) -> None:
    """A link in the runs dir (to a file whose lines a page would quote) is no run: the list leaves it out."""
    outside = corpus.root / "secret-list.txt"
    outside.write_text("not for the list\n")
    link = corpus.runs_dir / "LINKEDLIST.jsonl"
    os.symlink(outside, link)
    try:
        status, _, body = request(viewer, "GET", "/?all=1", headers=cookie(viewer))
    finally:
        link.unlink()
    assert status == 200 and corpus.demo["claude"] in body
    assert "LINKEDLIST" not in body


def test_a_fifo_named_like_a_log_is_not_listed_nor_waited_on(viewer: Viewer, corpus: Corpus) -> None:
    """A FIFO in the runs dir named like a log is no run: the list leaves it out, and the list's live stream and
    the pages after it answer at once (opening it would wait for a writer that never comes)."""
    pipe = corpus.runs_dir / "PIPELIST.jsonl"
    os.mkfifo(pipe, 0o600)
    try:
        status, _, body = request(viewer, "GET", "/?all=1", headers=cookie(viewer))
        assert status == 200 and corpus.demo["claude"] in body
        assert "PIPELIST" not in body
        assert request(viewer, "GET", "/runs/PIPELIST", headers=cookie(viewer))[0] == 404
        assert request(viewer, "GET", "/fragments/runs", headers=cookie(viewer))[0] == 200
    finally:
        release(pipe)


def test_a_runs_log_is_served_as_plain_text(viewer: Viewer, corpus: Corpus) -> None:
    run = corpus.hostile_run
    status, headers, body = request(viewer, "GET", f"/runs/{run}/log", headers=cookie(viewer))
    assert status == 200 and headers["content-type"].startswith("text/plain")
    assert body == (corpus.runs_dir / f"{run}.jsonl").read_text()
    assert json.loads(body.splitlines()[0])["type"] == "run_started"


def test_it_listens_on_127_0_0_1_only(viewer: Viewer) -> None:
    """The kernel's table of listening sockets: the viewer's port is bound to 127.0.0.1, not to any address."""
    listening = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, port = local.split(":")
            if state == "0A" and int(port, 16) == viewer.port:
                listening.append(address)
    assert listening == ["0100007F"]  # 127.0.0.1, little-endian


def test_an_answer_from_the_page_reports_what_the_run_recorded(viewer: Viewer, corpus: Corpus) -> None:
    """`harness approve` answers deny first; then the page's Approve is pressed: the page says who answered first
    and what the run did (409), never "Approved". A notice is never taken from the URL; a write never names a run
    by `last` or a prefix (the live run is left alone)."""
    run_id = corpus.background("-p", "claude", "-a", "untrusted", "edit it")
    corpus.wait_status(run_id, "waiting for approval")
    request_id = next(iter(pending_approvals(corpus.runs_dir / f"{run_id}.jsonl")))
    form = {**cookie(viewer), "Content-Type": "application/x-www-form-urlencoded"}
    for ref in ("last", run_id[:-3]):  # the newest run, a prefix: a write names one run exactly, or nothing
        status, _, _ = request(viewer, "POST", f"/runs/{ref}/cancel", headers=form, body=f"csrf={csrf(viewer)}")
        assert status == 404, ref
    corpus.wait_status(run_id, "waiting for approval", timeout=1)
    status, _, body = request(viewer, "GET", f"/runs/{run_id}?done=approve&answered=nothing", headers=cookie(viewer))
    assert status == 200 and 'class="notice"' not in body
    AnswersFile(answers_path(corpus.runs_dir, run_id)).answer(request_id, ApprovalDecision.DENY, by="harness approve")
    status, _, body = request(viewer, "POST", f"/runs/{run_id}/approve", headers=form,
                              body=f"request_id={request_id}&decision=approve&csrf={csrf(viewer)}")
    said = f"request {request_id} of run {run_id} was answered first (answered with harness approve): deny"
    assert status == 409 and said in body, body[body.find("<main"):][:2000]
    # once more, now that the run has surely taken the deny (the request is no longer waiting): the same answer
    status, _, body = request(viewer, "POST", f"/runs/{run_id}/approve", headers=form,
                              body=f"request_id={request_id}&decision=approve&csrf={csrf(viewer)}")
    assert status == 409 and said in body, body[body.find("<main"):][:2000]
    assert 'class="notice"' not in body
    log = [json.loads(line) for line in (corpus.runs_dir / f"{run_id}.jsonl").read_text().splitlines()]
    assert next((e["decision"], e["reason"]) for e in log if e["type"] == "approval_resolved") == (
        "deny", "answered with harness approve")


def test_a_notice_is_shown_only_for_what_this_viewer_did(viewer: Viewer, corpus: Corpus) -> None:
    """The notice after Cancel comes from a value the viewer signed for that run a moment ago: a URL typed,
    bookmarked or shared (`?done=cancel`, a forged or another run's value) shows none."""
    run = corpus.demo["claude"]  # a run no one cancelled
    for query in ("done=cancel", "done=approve", "done=deny", "done=abort", "cancelled=1", "cancelled=9999999999.ab"):
        status, _, body = request(viewer, "GET", f"/runs/{run}?{query}", headers=cookie(viewer))
        assert status == 200 and 'class="notice"' not in body, query


def test_the_worker_output_is_linked_only_when_it_holds_something(viewer: Viewer, corpus: Corpus) -> None:
    """A background run's worker output is an empty file while it plays, removed when the run ends empty: the page
    never links to it then (the link would die). A worker that said something leaves its file: linked, served."""
    run_id = corpus.background("-p", "claude", "-a", "untrusted", "edit it")
    corpus.wait_status(run_id, "waiting for approval")
    worker = corpus.runs_dir / f"{run_id}.worker.log"
    assert worker.is_file() and worker.stat().st_size == 0  # what the worker holds while it plays
    status, _, body = request(viewer, "GET", f"/runs/{run_id}", headers=cookie(viewer))
    assert status == 200 and "Background worker output" not in body
    corpus.run("cancel", run_id)
    deadline = time.monotonic() + 30  # the worker removes its empty log after `done`, once its workspace is gone
    while worker.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not worker.exists()
    status, _, body = request(viewer, "GET", f"/runs/{run_id}", headers=cookie(viewer))
    assert status == 200 and "Background worker output" not in body
    fd = os.open(worker, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)  # as a worker that warned leaves it
    with os.fdopen(fd, "w") as fh:
        fh.write("harness: warning: something the worker said\n")
    try:
        status, _, body = request(viewer, "GET", f"/runs/{run_id}", headers=cookie(viewer))
        assert status == 200 and f'href="/runs/{run_id}/worker">Background worker output' in body
        status, _, body = request(viewer, "GET", f"/runs/{run_id}/worker", headers=cookie(viewer))
        assert status == 200 and body == "harness: warning: something the worker said\n"
    finally:
        worker.unlink()
