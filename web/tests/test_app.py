"""The app in-process (ASGI, no socket), for what the real viewer's tests cannot reach or need not wait for: which
Host names pass for each `--host` (never a connection: the Host header is only a name here), an empty runs
directory, a long runs list cut to its newest rows, and the live list's event when a run appears or ends."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from harness_core import Done, HarnessResult, RunStarted, RunStatus, TextDelta
from harness_core.store import LogWriter

from harness_view import ViewerSettings, create_app, flash
from harness_view.catalog import LIMIT
from harness_view.live import run_events, runs_events
from harness_view.pages import Site
from harness_view.render import Links
from harness_view.server import url_of
from harness_view.stopping import CutOnStop


def write_run(runs: Path, run_id: str, *, done: bool = True, prompt: str | None = None) -> None:
    """A small run log as the run store writes it (0600, one event per line); its prompt is its id unless given."""
    events = [RunStarted(run_id=run_id, seq=0, ts=1.0, provider="p", provider_version="1",
                         spec={"prompt": run_id if prompt is None else prompt})]
    if done:
        events.append(Done(run_id=run_id, seq=1, ts=2.0,
                           result=HarnessResult(status=RunStatus.SUCCESS, run_id=run_id, provider="p")))
    path = runs / f"{run_id}.jsonl"
    path.write_text("".join(e.model_dump_json() + "\n" for e in events))
    path.chmod(0o600)


def get(settings: ViewerSettings, cwd: Path, path: str, host: str, *, token: bool = True) -> tuple[int, str]:
    """One GET through the app itself (ASGI, no socket): its status and body."""
    headers = [(b"host", host.encode())] + ([(b"authorization", f"Bearer {settings.token}".encode())] if token else [])
    path, _, query = path.partition("?")
    scope = {"type": "http", "method": "GET", "path": path, "raw_path": path.encode(), "query_string": query.encode(),
             "headers": headers, "server": ("127.0.0.1", 8000), "client": ("127.0.0.1", 50000), "scheme": "http",
             "http_version": "1.1", "root_path": ""}
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    anyio.run(create_app(settings, cwd=cwd), scope, receive, send)
    status = next(m["status"] for m in sent if m["type"] == "http.response.start")
    return status, b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body").decode()


@pytest.mark.parametrize(("listen", "host", "status"), [
    ("127.0.0.1", "127.0.0.1:8000", 200),
    ("127.0.0.1", "localhost:8000", 200),
    ("127.0.0.1", "[::1]:8000", 200),
    ("127.0.0.1", "evil.example:8000", 400),
    ("127.0.0.1", "192.0.2.10:8000", 400),
    ("192.0.2.10", "192.0.2.10:8000", 200),  # --host ADDR: that name (a documentation address, never dialled)
    ("192.0.2.10", "evil.example:8000", 400),
    ("0.0.0.0", "evil.example:8000", 200),  # every address: any name, the token still needed
])
def test_the_host_names_a_viewer_answers_to(tmp_path: Path, listen: str, host: str, status: int) -> None:
    runs = tmp_path / "runs"
    runs.mkdir(mode=0o700)
    settings = ViewerSettings(runs, host=listen)
    assert get(settings, tmp_path, "/", host)[0] == status
    assert get(settings, tmp_path, "/", host, token=False)[0] == (400 if status == 400 else 401)


def test_an_empty_runs_dir_says_how_to_make_a_run(tmp_path: Path) -> None:
    settings = ViewerSettings(tmp_path / "not-yet")
    status, page = get(settings, tmp_path, "/", "127.0.0.1:8000")
    assert status == 200 and 'harness run --offline "try it"' in page.replace("&#34;", '"')
    assert "harness batch tasks.jsonl --offline" in get(settings, tmp_path, "/batches", "127.0.0.1:8000")[1]


def test_a_long_list_shows_its_newest_rows_and_offers_the_rest(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    runs.mkdir(mode=0o700)
    for n in range(LIMIT + 5):
        write_run(runs, f"20260101T000000-{n:08x}")
    settings = ViewerSettings(runs)
    status, page = get(settings, tmp_path, "/", "127.0.0.1:8000")
    assert status == 200 and page.count('<tr class="run"') == LIMIT
    assert f"the newest {LIMIT} of the {LIMIT + 5} shown" in page and 'href="/?all=1"' in page
    status, every = get(settings, tmp_path, "/?all=1", "127.0.0.1:8000")  # the link it offers shows the rest
    assert status == 200 and every.count('<tr class="run"') == LIMIT + 5


def test_the_live_list_says_when_a_run_comes_and_when_it_ends(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    runs.mkdir(mode=0o700)
    write_run(runs, "20260101T000000-00000001")
    site = Site(ViewerSettings(runs), tmp_path)

    async def main() -> list[str]:
        said: list[str] = []
        stream = runs_events(site)
        with anyio.fail_after(30):
            said.append(await stream.__anext__())  # watching
            write_run(runs, "20260101T000000-00000002", done=False)  # no writer holds it: it reads `lost`
            said.append(await stream.__anext__())
            (runs / "20260101T000000-00000001.jsonl").unlink()
            said.append(await stream.__anext__())
        await stream.aclose()
        return said

    said = anyio.run(main)
    assert said[0].startswith(": watching")
    assert said[1] == 'event: runs\ndata: {"count": 2}\n\n'
    assert said[2] == 'event: runs\ndata: {"count": 1}\n\n'


def test_a_live_page_of_a_run_lost_before_its_stream_shows_it_lost(tmp_path: Path) -> None:
    """The page showed `running`; its writer died before the stream's first look: the stream sends the head (status
    `lost`, no Cancel) before `end`, so the page does not stay `running`."""
    runs = tmp_path / "runs"
    runs.mkdir(mode=0o700)
    run_id = "20260101T000000-0000000c"
    write_run(runs, run_id, done=False)  # no writer holds it: it reads `lost`
    site = Site(ViewerSettings(runs))

    async def main() -> list[str]:
        with anyio.fail_after(30):
            return [said async for said in run_events(site, run_id, 0, Links(), shown="running")]

    said = anyio.run(main)
    assert said[-1] == 'event: end\ndata: {"status": "lost"}\n\n'
    heads = [json.loads(s.split("data: ", 1)[1]) for s in said if s.startswith("event: block")]
    head = next(h["html"] for h in heads if h["key"] == "head")
    assert 'id="run-status">lost<' in head and "Cancel run" not in head


def test_an_unsafe_runs_dir_is_a_page_that_says_what_to_do(tmp_path: Path) -> None:
    """The runs dir made group-writable while the viewer runs: every page is the error page with the store's next
    step (`chmod 700`), and nothing of a run is read from it."""
    runs = tmp_path / "runs"
    runs.mkdir(mode=0o700)
    run_id = "20260101T000000-0000000d"
    write_run(runs, run_id)
    settings = ViewerSettings(runs)
    assert get(settings, tmp_path, f"/runs/{run_id}", "127.0.0.1:8000")[0] == 200
    runs.chmod(0o770)
    for path in ("/", f"/runs/{run_id}", f"/runs/{run_id}/log"):
        status, body = get(settings, tmp_path, path, "127.0.0.1:8000")
        assert status == 500, path
        assert "chmod 700" in body and run_id not in body.split("<main", 1)[1], path


def test_a_growing_text_is_streamed_as_its_new_characters_only(tmp_path: Path) -> None:
    """A live run's text block grows by 1 KB deltas: after its first `block`, each poll sends an `append` of only
    the new characters (escaped by the page as text), never the whole block again."""
    runs = tmp_path / "runs"
    runs.mkdir(mode=0o700)
    run_id = "20260101T000000-0000000e"
    writer = LogWriter(runs / f"{run_id}.jsonl")
    seq = iter(range(1000))

    def write(event: Any) -> None:
        writer.write_line(event.model_copy(update={"seq": next(seq)}).model_dump_json().encode())
        writer.flush()

    write(RunStarted(run_id=run_id, ts=1.0, provider="p", provider_version="1", spec={"prompt": "go"}))
    write(TextDelta(run_id=run_id, text="<b>" + "a" * 1021, item_id="m1"))
    site = Site(ViewerSettings(runs))

    async def main() -> list[dict[str, Any]]:
        said: list[dict[str, Any]] = []
        stream = run_events(site, run_id, -1, Links(), shown="running")
        with anyio.fail_after(30):
            while not any(m["event"] == "block" and m["data"]["key"] == "b0" for m in said):
                said.append(parse_sse(await stream.__anext__()))
            for n in range(3):
                write(TextDelta(run_id=run_id, text=str(n) * 1024, item_id="m1"))
                while not said or said[-1]["event"] != "append":
                    said.append(parse_sse(await stream.__anext__()))
                said.append({"event": "-", "data": {}})
            write(Done(run_id=run_id, ts=2.0, result=HarnessResult(status=RunStatus.SUCCESS, run_id=run_id,
                                                                   provider="p")))
            writer.close()
            async for message in stream:
                said.append(parse_sse(message))
        return said

    said = anyio.run(main)
    appends = [m["data"] for m in said if m["event"] == "append"]
    assert [a["text"] for a in appends] == [str(n) * 1024 for n in range(3)]
    assert appends[-1]["length"] == 4 * 1024
    blocks = [m["data"]["html"] for m in said if m["event"] == "block" and m["data"]["key"] == "b0"]
    assert len(blocks) == 1 and "&lt;b&gt;" in blocks[0]  # the whole block once; its growth only as appends
    assert said[-1] == {"event": "end", "data": {"status": "success"}}


def parse_sse(message: str) -> dict[str, Any]:
    if message.startswith(":"):
        return {"event": ":", "data": {}}
    head, data = message.split("\ndata: ", 1)
    return {"event": head.removeprefix("event: "), "data": json.loads(data)}


def test_live_pages_are_bounded(tmp_path: Path) -> None:
    """One live page more than `max_streams` gets 503 and says what to do; once a page goes, another may come."""
    runs = tmp_path / "runs"
    runs.mkdir(mode=0o700)
    settings = ViewerSettings(runs, max_streams=1)
    app = create_app(settings, cwd=tmp_path)

    def scope() -> dict[str, Any]:
        return {"type": "http", "method": "GET", "path": "/events", "raw_path": b"/events", "query_string": b"",
                "headers": [(b"host", b"127.0.0.1:8000"), (b"authorization", f"Bearer {settings.token}".encode())],
                "server": ("127.0.0.1", 8000), "client": ("127.0.0.1", 50000), "scheme": "http",
                "http_version": "1.1", "root_path": "", "asgi": {"version": "3.0", "spec_version": "2.3"}}

    async def main() -> list[int]:
        statuses: list[int] = []
        first_said = anyio.Event()
        gone = anyio.Event()

        async def first_receive() -> dict[str, Any]:
            await gone.wait()
            return {"type": "http.disconnect"}

        async def first_send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.body" and message.get("body"):
                first_said.set()

        async def second() -> int:
            sent: list[dict[str, Any]] = []

            async def receive() -> dict[str, Any]:
                await anyio.sleep_forever()
                return {}

            async def send(message: dict[str, Any]) -> None:
                sent.append(message)

            with anyio.move_on_after(2):  # a stream that is let in streams until its page goes: look at its head
                await app(scope(), receive, send)
            return int(next(m["status"] for m in sent if m["type"] == "http.response.start"))

        with anyio.fail_after(30):
            async with anyio.create_task_group() as tg:
                tg.start_soon(app, scope(), first_receive, first_send)
                await first_said.wait()
                statuses.append(await second())
                gone.set()
            statuses.append(await second())
        return statuses

    assert anyio.run(main) == [503, 200]


def test_a_websocket_is_closed_unheard(tmp_path: Path) -> None:
    """The viewer speaks HTTP only: a websocket (uvicorn takes them once `websockets` is installed) is closed before
    anything of the app sees it, token or not."""
    runs = tmp_path / "runs"
    runs.mkdir(mode=0o700)
    scope = {"type": "websocket", "path": "/events", "raw_path": b"/events", "query_string": b"", "headers": [],
             "server": ("127.0.0.1", 8000), "client": ("127.0.0.1", 50000), "scheme": "ws", "root_path": ""}
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "websocket.connect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    anyio.run(create_app(ViewerSettings(runs), cwd=tmp_path), scope, receive, send)
    assert sent == [{"type": "websocket.close", "code": 1008}]


def test_a_batch_links_every_try_of_a_retried_task(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    runs.mkdir(mode=0o700)
    first, second = "20260101T000000-0000000a", "20260101T000001-0000000b"
    for run_id in (first, second):
        write_run(runs, run_id)
    results = tmp_path / "t.results.jsonl"
    results.write_text(json.dumps({"id": "flaky", "run_id": second, "run_ids": [first, second], "attempts": 2,
                                   "status": "success", "provider": "p"}) + "\n")
    settings = ViewerSettings(runs)
    (batch,) = Site(settings, tmp_path).batches()
    status, page = get(settings, tmp_path, f"/batches/{batch.key}", "127.0.0.1:8000")
    assert status == 200
    assert f'<a href="/runs/{second}">success</a>' in page
    assert f'(tries: <a href="/runs/{first}">1</a> <a href="/runs/{second}">2</a>)' in page
    assert get(settings, tmp_path, "/batches/not-a-key", "127.0.0.1:8000")[0] == 404


def test_the_search_finds_every_word_in_any_order(tmp_path: Path) -> None:
    """`q` holds words of the prompt ("words of the prompt", its box says): a run matches when its prompt holds
    each of them, in any order and any case."""
    runs = tmp_path / "runs"
    runs.mkdir(mode=0o700)
    write_run(runs, "20260101T000000-00000001", prompt="Edit the notes file: alpha to beta")
    write_run(runs, "20260101T000000-00000002", prompt="read the notes")
    write_run(runs, "20260101T000000-00000003", prompt="say hello")
    write_run(runs, "20260101T000000-00000004", prompt="Cafe\u0301 menu")  # decomposed, as macOS pastes it
    settings = ViewerSettings(runs)

    def found(q: str) -> list[str]:
        status, page = get(settings, tmp_path, f"/?q={q}", "127.0.0.1:8000")
        assert status == 200
        return sorted(line.split('data-run="', 1)[1][:24] for line in page.splitlines() if 'data-run="' in line)

    assert found("edit+notes") == found("notes+edit") == found("NOTES++Edit") == ["20260101T000000-00000001"]
    assert found("caf%C3%A9") == found("CAFE%CC%81") == ["20260101T000000-00000004"]
    assert found("notes") == ["20260101T000000-00000001", "20260101T000000-00000002"]
    assert found("notes+hello") == []
    assert found("alpha+to+beta") == ["20260101T000000-00000001"]


def test_the_cancel_notice_needs_a_fresh_stamp_of_that_run(tmp_path: Path) -> None:
    """Cancel's redirect carries a value the viewer signed for that run: fresh, it shows the notice (with the
    status the log gives); stale, for another run, from another viewer or altered, it shows nothing."""
    runs = tmp_path / "runs"
    runs.mkdir(mode=0o700)
    one, other = "20260101T000000-00000001", "20260101T000000-00000002"
    write_run(runs, one)
    write_run(runs, other)
    settings = ViewerSettings(runs)

    def notice(run_id: str, value: str) -> str | None:
        status, page = get(settings, tmp_path, f"/runs/{run_id}?cancelled={value}", "127.0.0.1:8000")
        assert status == 200
        shown = page.split('<p class="notice" role="status">', 1)
        return shown[1].split("<", 1)[0] if len(shown) == 2 else None

    now = time.time()
    fresh = flash.stamp(settings, "cancel", one, now=now)
    assert notice(one, fresh) == "Cancelled: the run is success."
    assert notice(other, fresh) is None
    assert notice(one, flash.stamp(settings, "cancel", one, now=now - flash.FRESH_FOR - 5)) is None
    assert notice(one, flash.stamp(ViewerSettings(runs), "cancel", one, now=now)) is None  # another token
    assert notice(one, fresh[:-1] + ("0" if fresh[-1] != "0" else "1")) is None
    assert notice(one, "") is None and notice(one, "not-a-stamp") is None
    at, _, signature = fresh.partition(".")
    arabic = "".join(chr(0x660 + int(d)) for d in at)  # digits str.isdigit() takes and int() reads
    for forged in ("²", f"{at}.é", f"{arabic}.{signature}", f"{at}.{signature.upper()}", f"{at}.{signature}\n"):
        assert notice(one, forged) is None, forged  # never a 500, never a notice


def test_a_request_unanswered_when_the_viewer_stops_is_cut_with_a_page() -> None:
    """Ctrl-C: a request with no answer begun a moment later (a page still rendering) gets the 503 page, and nothing
    is raised out of the app (the server has nothing to cancel); one already answering (a stream) is left to end."""
    stopped = [False]
    began, release, answered = anyio.Event(), anyio.Event(), anyio.Event()
    scope = {"type": "http", "method": "GET", "path": "/", "headers": []}

    async def never_answers(scope: Any, receive: Any, send: Any) -> None:
        await anyio.sleep_forever()

    async def streams(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"first ", "more_body": True})
        began.set()
        await release.wait()
        await send({"type": "http.response.body", "body": b"last", "more_body": False})

    async def receive() -> dict[str, Any]:
        await anyio.sleep_forever()
        raise AssertionError

    async def main() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        cut: list[dict[str, Any]] = []
        stream: list[dict[str, Any]] = []

        async def to_cut(message: Any) -> None:
            cut.append(message)
            if message["type"] == "http.response.body":
                answered.set()

        async def to_stream(message: Any) -> None:
            stream.append(message)

        with anyio.fail_after(30):
            async with anyio.create_task_group() as group:
                group.start_soon(CutOnStop(never_answers, lambda: stopped[0], lambda: "the viewer stopped"),
                                 scope, receive, to_cut)
                group.start_soon(CutOnStop(streams, lambda: stopped[0], lambda: "never this"), scope, receive,
                                 to_stream)
                await began.wait()
                stopped[0] = True  # Ctrl-C
                await answered.wait()
                release.set()  # the stream ends on its own, after the cut: it was left to
        return cut, stream

    cut, stream = anyio.run(main)
    assert cut[0]["status"] == 503 and b"the viewer stopped" in cut[1]["body"]
    assert [m.get("body") for m in stream] == [None, b"first ", b"last"]


@pytest.mark.parametrize(("listen", "printed"), [("0.0.0.0", "127.0.0.1"), ("::", "[::1]"),
                                                 ("127.0.0.2", "127.0.0.2")])
def test_the_url_printed_for_every_address_is_this_machines_loopback(tmp_path: Path, listen: str,
                                                                      printed: str) -> None:
    """A browser opens no `http://0.0.0.0:…` (Chromium refuses it): a viewer on every address prints the loopback
    URL, which reaches it too. (The socket is a loopback one: no test listens on every address.)"""
    settings = ViewerSettings(tmp_path, host=listen)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        url = url_of(settings, sock)
        assert url == f"http://{printed}:{sock.getsockname()[1]}/?token={settings.token}"
