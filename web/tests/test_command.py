"""`harness view` as a command: it prints its URL (127.0.0.1, a free port, a token), two viewers get two ports and
two tokens, and Ctrl-C stops it at once even while a page follows the runs live (an open event stream)."""

from __future__ import annotations

import http.client
import time

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
