"""JSON-RPC 2.0 error objects and the line-channel protocol the peer runs over.

Layer: jsonrpc. Knows nothing of processes or of any agent CLI (an agent's own error codes belong to its
provider).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, Protocol

from harness_core.errors import MessageTooLargeError, truncate

__all__ = [
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "JsonRpcError",
    "LineChannel",
]

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603


class JsonRpcError(Exception):
    """A JSON-RPC error: raised by `JsonRpcPeer.request` for an error response, and raised by a request
    handler to send an error reply."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{truncate(message)} (JSON-RPC error {code})")
        self.code = code
        self.message = message
        self.data = data

    def to_dict(self) -> dict[str, Any]:
        """The `error` member of a response."""
        err: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            err["data"] = self.data
        return err

    @classmethod
    def from_dict(cls, err: Any) -> JsonRpcError:
        """Build from a response's `error` member, tolerating a malformed one."""
        if not isinstance(err, dict):
            return cls(INTERNAL_ERROR, f"malformed error object: {err!r}")
        code = err.get("code")
        return cls(
            code if type(code) is int else INTERNAL_ERROR,
            str(err.get("message", "")) or "(no message)",
            err.get("data"),
        )


class LineChannel(Protocol):
    """What the peer needs from a transport: `harness_core.transport.ChildProcess` is one."""

    async def send_line(self, data: bytes) -> None: ...

    def lines(self) -> AsyncIterator[bytes | MessageTooLargeError]: ...
