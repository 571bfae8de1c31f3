"""The viewer's gate, in front of every request: the Host must be the viewer's own, the token must come (the URL's
`?token=` once, then an HttpOnly SameSite=Strict cookie), a state-changing request must carry the CSRF token and
no foreign Origin; every response gets a strict Content-Security-Policy and its sibling headers.

A pure ASGI middleware: knows the settings and HTTP; nothing of pages or runs.
"""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable, MutableMapping
from http.cookies import CookieError, SimpleCookie
from typing import Any
from urllib.parse import parse_qs, quote, urlencode

from harness_view.settings import ViewerSettings

__all__ = ["CSP", "CSRF_FIELD", "CSRF_HEADER", "Guard", "cookie_name"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
       "form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
CSRF_FIELD = "csrf"
CSRF_HEADER = b"x-csrf-token"
_SAFE = {"GET", "HEAD", "OPTIONS"}
_BODY_LIMIT = 64 << 10
_HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),  # a form's POST keeps its Origin; no other site sees a URL
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
    (b"cache-control", b"no-store"),
]


def cookie_name(port: int) -> str:
    """The cookie of the viewer on `port` (cookies do not tell ports apart: two viewers must not share one)."""
    return f"harness_view_{port}"


class Guard:
    """Wraps the app: refuses what lacks the token (401), a foreign Host (400) or a forged write (403)."""

    def __init__(self, app: ASGIApp, settings: ViewerSettings) -> None:
        self.app = app
        self.settings = settings
        loopback = settings.host in ("127.0.0.1", "localhost", "::1")
        named = {settings.host, f"[{settings.host}]"}
        self._hosts: set[str] | None = ({*named, "127.0.0.1", "localhost", "[::1]"} if loopback else
                                        None if settings.host in ("0.0.0.0", "::") else named)
        """The names the Host header may give (None: any, for a viewer listening on every address: the token and the
        per-host cookie still hold)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        if scope["type"] != "http":  # a websocket (if uvicorn ever has a library for it): the viewer has none
            await send({"type": "websocket.close", "code": 1008})
            return
        secured = _with_headers(send)
        headers = _headers(scope)
        host = headers.get("host", "")
        if self._hosts is not None and _hostname(host) not in self._hosts:
            await _plain(secured, 400, "This viewer answers only to its own address (the Host header names another "
                                       "one); open the URL `harness view` printed.")
            return
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        given = (query.get("token") or [""])[-1]
        if given and self._valid(given) and scope["method"] in _SAFE:
            await self._enter(scope, query, secured)
            return
        if not (self._valid(self._cookie(headers, scope)) or self._valid(_bearer(headers))):
            await _plain(secured, 401, "This page needs the viewer's token: open the URL `harness view` printed "
                                       "(http://…/?token=…); it sets a cookie for the next requests.")
            return
        if scope["method"] not in _SAFE:
            replayed = await self._check_write(scope, headers, host, receive, secured)
            if replayed is None:
                return
            receive = replayed
        await self.app(scope, receive, secured)

    def _valid(self, token: str) -> bool:
        return bool(token) and hmac.compare_digest(token.encode(), self.settings.token.encode())

    def _cookie(self, headers: dict[str, str], scope: Scope) -> str:
        jar = SimpleCookie()
        try:
            jar.load(headers.get("cookie", ""))
        except CookieError:  # a malformed Cookie header holds no token
            return ""
        morsel = jar.get(cookie_name(_port(scope)))
        return morsel.value if morsel is not None else ""

    async def _enter(self, scope: Scope, query: dict[str, list[str]], send: Send) -> None:
        """The URL with the token: set the cookie and send the browser to the same page without the token (so it
        stays out of the history and the address bar)."""
        rest = {k: v for k, v in query.items() if k != "token"}
        # the path quoted, one leading slash: never `//host` (a redirect off the viewer), never a raw CR or LF
        path = "/" + quote(scope["path"], safe="/").lstrip("/")
        location = quote(scope.get("root_path", ""), safe="/") + path + \
            (f"?{urlencode(rest, doseq=True)}" if rest else "")
        cookie = (f"{cookie_name(_port(scope))}={self.settings.token}; Path=/; HttpOnly; SameSite=Strict")
        await send({"type": "http.response.start", "status": 303,
                    "headers": [(b"location", location.encode()), (b"set-cookie", cookie.encode()),
                                (b"content-length", b"0")]})
        await send({"type": "http.response.body", "body": b""})

    async def _check_write(self, scope: Scope, headers: dict[str, str], host: str, receive: Receive,
                           send: Send) -> Receive | None:
        """A write needs no foreign Origin and the CSRF token (a header, or a form field): the receive to go on
        with (the body already read and replayed), or None when refused (answered here)."""
        origin = headers.get("origin")
        site = headers.get("sec-fetch-site", "same-origin")
        if (origin is not None and origin != f"http://{host}") or site not in ("same-origin", "none"):
            await _plain(send, 403, "A write from another site is refused (its Origin is not this viewer's).")
            return None
        body = b""
        more = True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
            if len(body) > _BODY_LIMIT:
                await _plain(send, 413, "That request is too large for the viewer.")
                return None
        sent = headers.get(CSRF_HEADER.decode(), "")
        if not sent and headers.get("content-type", "").startswith("application/x-www-form-urlencoded"):
            sent = (parse_qs(body.decode("utf-8", "replace")).get(CSRF_FIELD) or [""])[-1]
        if not (sent and hmac.compare_digest(sent.encode(), self.settings.csrf.encode())):
            await _plain(send, 403, "This write lacks the viewer's CSRF token: use the page's buttons (reload the "
                                    "page if it is old).")
            return None
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        return replay


def _headers(scope: Scope) -> dict[str, str]:
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}


def _hostname(host: str) -> str:
    if host.startswith("["):
        return host[: host.find("]") + 1]
    return host.rsplit(":", 1)[0] if ":" in host else host


def _port(scope: Scope) -> int:
    server = scope.get("server")
    return int(server[1]) if server and server[1] else 0


def _bearer(headers: dict[str, str]) -> str:
    value = headers.get("authorization", "")
    return value[7:].strip() if value.lower().startswith("bearer ") else ""


def _with_headers(send: Send) -> Send:
    async def secured(message: Message) -> None:
        if message["type"] == "http.response.start":
            names = {name.lower() for name, _ in message.get("headers", [])}
            message["headers"] = [*message.get("headers", []), *(h for h in _HEADERS if h[0] not in names)]
        await send(message)

    return secured


async def _plain(send: Send, status: int, text: str) -> None:
    body = text.encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                            (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})
