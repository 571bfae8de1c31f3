"""JSON-RPC layer: a generic JSON-RPC 2.0 peer over a line channel.

Knows nothing of any agent CLI, nor of processes. Public surface: `JsonRpcPeer`, `JsonRpcError`,
`LineChannel`, `NotificationHandler` and the standard error codes.
"""

from __future__ import annotations

from harness_core.jsonrpc.errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    JsonRpcError,
    LineChannel,
)
from harness_core.jsonrpc.peer import JsonRpcPeer, NotificationHandler

__all__ = [
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "JsonRpcError",
    "JsonRpcPeer",
    "LineChannel",
    "NotificationHandler",
]
