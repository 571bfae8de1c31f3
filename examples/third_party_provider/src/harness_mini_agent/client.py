"""A streaming client of `POST {base_url}/responses`: sends one request, hands back its SSE events.

Layer: HTTP. Knows httpx, status codes (classified by `wire.http_error`) and SSE framing (through `wire`);
must not know tools, processes, approvals or Harness events.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from types import TracebackType
from typing import Any

import httpx
from harness_core import ModelError
from harness_core.provider import get_logger

from harness_mini_agent.wire import SseDecoder, http_error

__all__ = ["EventStream", "ResponsesClient"]

log = get_logger(__name__)

Recorder = Callable[[str, str], None]


class EventStream:
    """The JSON events of one streamed response, one `next()` at a time (None at the end of the body)."""

    def __init__(self, lines: AsyncIterator[str], record: Recorder) -> None:
        self._lines = lines
        self._record = record
        self._decoder = SseDecoder()
        self._ended = False

    async def next(self) -> dict[str, Any] | None:
        while not self._ended:
            try:
                line = await self._lines.__anext__()
            except StopAsyncIteration:
                self._ended = True
                return self._decoder.feed("")
            if line.startswith("data:"):
                self._record("in", line[5:].strip())
            event = self._decoder.feed(line)
            if event is not None:
                return event
        return None


class ResponsesClient:
    """One HTTP client per run; `stream(body)` posts one turn. Use as an async context manager."""

    def __init__(
        self, base_url: str, api_key: str | None, key_env: str, timeout: float, record: Recorder
    ) -> None:
        self.url = f"{base_url}/responses"
        self._key_env = key_env
        self._key_set = api_key is not None
        headers = {"Accept": "text/event-stream"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self._http = httpx.AsyncClient(
            headers=headers, timeout=httpx.Timeout(timeout, connect=min(timeout, 30.0))
        )
        self._record = record

    async def __aenter__(self) -> ResponsesClient:
        await self._http.__aenter__()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self._http.__aexit__(exc_type, exc, tb)

    @asynccontextmanager
    async def stream(self, body: dict[str, Any]) -> AsyncIterator[EventStream]:
        """POST `body` and yield its event stream; HTTP failures become Harness errors (401/403 auth_failed,
        429 rate_limited, others and network failures model_error)."""
        payload = json.dumps(body)
        self._record("out", payload)
        try:
            async with self._http.stream(
                "POST", self.url, content=payload, headers={"Content-Type": "application/json"}
            ) as response:
                log.debug("response_started", url=self.url, status=response.status_code)
                if response.status_code >= 400:
                    raise http_error(
                        response.status_code, await response.aread(), self._key_env, self._key_set,
                        body.get("previous_response_id"),
                    )
                yield EventStream(response.aiter_lines(), self._record)
        except httpx.TimeoutException as exc:
            raise ModelError(
                f"the model API at {self.url} did not answer in time ({type(exc).__name__}); "
                "retry, or raise -o request_timeout=SECONDS"
            ) from exc
        except httpx.HTTPError as exc:
            raise ModelError(
                f"cannot talk to the model API at {self.url}: {exc or type(exc).__name__}; "
                "check base_url and that the server is up"
            ) from exc
