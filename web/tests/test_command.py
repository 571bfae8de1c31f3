"""`harness view` as a command: it prints its URL (127.0.0.1, a free port, a token), two viewers get two ports and
two tokens, and Ctrl-C stops it at once even while a page follows the runs live (an open event stream)."""

from __future__ import annotations

import http.client
import time
from pathlib import Path

from view_helpers import Corpus, start_viewer, stop_viewer


def test_ctrl_c_stops_the_viewer_while_a_page_follows_it_live(corpus: Corpus) -> None:
    first = start_viewer(["--runs-dir", str(corpus.runs_dir)], corpus.env, corpus.root)
    second = start_viewer(["--runs-dir", str(corpus.runs_dir)], corpus.env, corpus.root)
    try:
        assert first.port != second.port and first.token != second.token and len(first.token) >= 40
        stream = http.client.HTTPConnection("127.0.0.1", first.port, timeout=30)
        stream.request("GET", "/events", headers={"Cookie": f"harness_view_{first.port}={first.token}"})
        answer = stream.getresponse()
        assert answer.status == 200 and answer.getheader("content-type", "").startswith("text/event-stream")
        assert answer.readline() == b": watching\n"
        began = time.monotonic()
        assert stop_viewer(first) == 0
        assert time.monotonic() - began < 10  # the open stream does not hold it up
        assert first.proc.stdout is not None and "harness view: stopped" in first.proc.stdout.read()
        stream.close()
    finally:
        stop_viewer(second)


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
    finally:
        assert stop_viewer(viewer) == 0
    args = said.read_text()
    assert viewer.token not in args
    opened = Path(args.strip().removeprefix("file://"))
    assert opened.stat().st_mode & 0o777 == 0o600 and opened.parent.stat().st_mode & 0o777 == 0o700
    assert f'url={viewer.url}"' in opened.read_text()
