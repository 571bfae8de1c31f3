"""The ACP v1 JSON Schema, and a checker of every message on an ACP connection against it.

Layer: testing. `acp-schema-v1.json` and `acp-meta-v1.json` are the protocol's own files (agent-client-protocol,
tag schema-v1.21.0), unchanged. Knows the method → definition names; knows no agent and nothing of Harness
providers. `WireChecker().check(msg, sender="client")` raises `SchemaViolation`; `jsonschema` is imported lazily.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any, Literal

__all__ = ["SCHEMA_PATH", "SchemaViolation", "WireChecker", "schema"]

SCHEMA_PATH = Path(__file__).with_name("acp-schema-v1.json")
Side = Literal["client", "agent"]

_REQUESTS: dict[str, str] = {  # method → definition prefix (… + Request / … + Response)
    "initialize": "Initialize",
    "authenticate": "Authenticate",
    "session/new": "NewSession",
    "session/load": "LoadSession",
    "session/resume": "ResumeSession",
    "session/list": "ListSessions",
    "session/close": "CloseSession",
    "session/set_mode": "SetSessionMode",
    "session/set_config_option": "SetSessionConfigOption",
    "session/prompt": "Prompt",
    "session/request_permission": "RequestPermission",
    "fs/read_text_file": "ReadTextFile",
    "fs/write_text_file": "WriteTextFile",
}
_NOTIFICATIONS = {"session/update": "SessionNotification", "session/cancel": "CancelNotification"}


class SchemaViolation(AssertionError):
    """A message that does not validate against the ACP schema."""


@cache
def schema() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return data


@cache
def _validator(definition: str) -> Any:
    from jsonschema import Draft202012Validator

    root = schema()
    if definition not in root["$defs"]:
        raise KeyError(f"the ACP schema has no definition {definition!r}")
    return Draft202012Validator({"$ref": f"#/$defs/{definition}", "$defs": root["$defs"]})


def _validate(definition: str, value: Any, what: str) -> None:
    errors = sorted(_validator(definition).iter_errors(value), key=lambda e: list(e.absolute_path))
    if errors:
        first = errors[0]
        where = "/".join(str(p) for p in first.absolute_path) or "(top)"
        raise SchemaViolation(f"{what} is not a valid {definition} at {where}: {first.message}: "
                              f"{json.dumps(value)[:600]}")


class WireChecker:
    """Checks each message of one connection, in order: requests by method, responses by the method of the
    request they answer, notifications by method. Extension methods (`_…`) and unknown methods are let through
    (the schema leaves them open)."""

    def __init__(self) -> None:
        self._asked: dict[tuple[Side, Any], str] = {}

    def check(self, msg: Any, *, sender: Side) -> None:
        if not isinstance(msg, dict):
            raise SchemaViolation(f"an ACP message must be an object: {msg!r}")
        if msg.get("jsonrpc") != "2.0":
            raise SchemaViolation(f"an ACP message must carry \"jsonrpc\": \"2.0\": {json.dumps(msg)[:300]}")
        method = msg.get("method")
        if isinstance(method, str):
            if "id" in msg:
                self._asked[(sender, msg["id"])] = method
                prefix = _REQUESTS.get(method)
                if prefix is not None:
                    _validate(prefix + "Request", msg.get("params"), f"{sender} request {method}")
            else:
                name = _NOTIFICATIONS.get(method)
                if name is not None:
                    _validate(name, msg.get("params"), f"{sender} notification {method}")
            return
        other: Side = "agent" if sender == "client" else "client"
        asked = self._asked.pop((other, msg.get("id")), None)
        if "error" in msg:
            error = msg["error"]
            if not (isinstance(error, dict) and type(error.get("code")) is int and isinstance(error.get("message"),
                                                                                              str)):
                raise SchemaViolation(f"{sender} error response is malformed: {json.dumps(msg)[:300]}")
            return
        if asked is None:
            raise SchemaViolation(f"{sender} answered a request nobody sent: {json.dumps(msg)[:300]}")
        prefix = _REQUESTS.get(asked)
        if prefix is not None:
            _validate(prefix + "Response", msg.get("result"), f"{sender} response to {asked}")
