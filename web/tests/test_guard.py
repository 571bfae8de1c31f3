"""The guard in-process, for what the real viewer's tests cannot reach without listening elsewhere: which Host
names pass for each `--host` (never a connection: the Host header is only a name here)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from harness_view import ViewerSettings, create_app


def get(settings: ViewerSettings, cwd: Path, path: str, host: str, *, token: bool = True) -> tuple[int, str]:
    """One GET through the app itself (ASGI, no socket): its status and body."""
    headers = [(b"host", host.encode())] + ([(b"authorization", f"Bearer {settings.token}".encode())] if token else [])
    scope = {"type": "http", "method": "GET", "path": path, "raw_path": path.encode(), "query_string": b"",
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
