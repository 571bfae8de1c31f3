"""The fake app-server cannot drift: every message it emits validates against the JSON Schema that the
installed real codex generates (`codex app-server generate-json-schema`). Those tests are marked `real_cli`
and skipped without the real binary.

The same validator is first checked on the recorded real transcripts, so a failure here means the fake is
wrong, not the validation.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from appserver_helpers import MISSING_CODEX, real_codex

from harness_codex_appserver.testing import write_fake_codex

jsonschema = pytest.importorskip("jsonschema")

HERE = Path(__file__).parent
TRANSCRIPTS = HERE / "transcripts"


@pytest.fixture(scope="module")
def schema_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    codex = real_codex()
    if codex is None:
        pytest.skip(MISSING_CODEX)
    out = tmp_path_factory.mktemp("codex-schema")
    subprocess.run(
        [str(codex), "app-server", "generate-json-schema", "--out", str(out)],
        check=True,
        capture_output=True,
        timeout=60,
    )
    return out


@cache
def _validator(path: str) -> Any:
    schema = json.loads(Path(path).read_text())
    return jsonschema.Draft7Validator(schema)


def _response_schema(schema_dir: Path, method: str) -> Path:
    name = "".join(part[:1].upper() + part[1:] for part in method.split("/")) + "Response.json"
    for folder in ("v2", "v1", "."):
        if (schema_dir / folder / name).exists():
            return schema_dir / folder / name
    raise AssertionError(f"no response schema for {method}")


def validate_server_message(schema_dir: Path, msg: dict[str, Any], request_methods: dict[Any, str]) -> None:
    if "method" in msg:
        body = {k: v for k, v in msg.items() if k != "emittedAtMs"}  # real servers add it; not in the schema
        name = "ServerRequest.json" if "id" in msg else "ServerNotification.json"
        errors = sorted(_validator(str(schema_dir / name)).iter_errors(body), key=lambda e: e.path)
        assert not errors, f"{msg['method']}: {errors[0].message[:300]}"
    elif "error" in msg:
        assert isinstance(msg["error"].get("code"), int) and isinstance(msg["error"].get("message"), str)
    else:
        method = request_methods[msg["id"]]
        validator = _validator(str(_response_schema(schema_dir, method)))
        errors = list(validator.iter_errors(msg["result"]))
        assert not errors, f"{method} response: {errors[0].message[:300]}"


def _transcript_messages(path: Path) -> Iterator[tuple[dict[str, Any], dict[Any, str]]]:
    methods: dict[Any, str] = {}
    for raw in path.read_text().splitlines():
        line = json.loads(raw)
        msg = line.get("msg")
        if not isinstance(msg, dict):
            methods = {}
            continue
        if line["dir"] == "out" and "method" in msg and "id" in msg:
            methods[msg["id"]] = msg["method"]
        elif line["dir"] == "in":
            yield msg, methods


@pytest.mark.real_cli
def test_validator_accepts_real_transcripts(schema_dir: Path) -> None:
    paths = [*TRANSCRIPTS.glob("*.jsonl"), *(TRANSCRIPTS / "shared").glob("*.jsonl")]
    assert paths, f"no recorded transcripts under {TRANSCRIPTS}"
    count = 0
    for path in paths:
        for msg, methods in _transcript_messages(path):
            if "id" in msg and "method" not in msg and msg["id"] not in methods:
                continue
            validate_server_message(schema_dir, msg, methods)
            count += 1
    assert count > 100


class _Client:
    """A tiny synchronous client for the fake: enough to drive one turn and record what it sends."""

    def __init__(self, codex: Path, home: Path) -> None:
        self.proc = subprocess.Popen(
            [str(codex), "app-server", "--listen", "stdio://"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env={"CODEX_HOME": str(home), "PATH": "/usr/bin:/bin"},
        )
        self.methods: dict[Any, str] = {}
        self.seen: list[dict[str, Any]] = []
        self.next = 1

    def send(self, msg: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(msg) + "\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict[str, Any]) -> Any:
        rid, self.next = self.next, self.next + 1
        self.methods[rid] = method
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        return self.until(lambda m: m.get("id") == rid and "method" not in m)

    def until(self, done: Any, decision: str | None = "accept") -> dict[str, Any]:
        """Read until `done(msg)`; answer approval requests with `decision` (None: leave them pending)."""
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            msg = json.loads(raw)
            self.seen.append(msg)
            if "method" in msg and "id" in msg and decision is not None:
                self.send({"id": msg["id"], "result": {"decision": decision}})
            if done(msg):
                return msg
        raise AssertionError("the fake exited early")

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=10)


@pytest.mark.real_cli
@pytest.mark.parametrize(
    ("scenario", "approval", "decision"),
    [
        ("tools", "never", "accept"),
        ("tools", "untrusted", "accept"),
        ("tools", "untrusted", "decline"),
        ("tools", "untrusted", "cancel"),
        ("think", "never", "accept"),
        ("fail_500", "never", "accept"),
        ("fail_401", "never", "accept"),
        ("fail_429", "never", "accept"),
        ("say", "never", "accept"),
    ],
)
def test_fake_messages_match_real_schema(
    schema_dir: Path, tmp_path: Path, scenario: str, approval: str, decision: str
) -> None:
    codex = write_fake_codex(tmp_path, scenario=scenario)
    client = _Client(codex, tmp_path)
    try:
        client.request("initialize", {"clientInfo": {"name": "t", "version": "1"}})
        client.send({"jsonrpc": "2.0", "method": "initialized"})
        started = client.request(
            "thread/start", {"cwd": str(tmp_path), "approvalPolicy": approval, "sandbox": "workspace-write"}
        )
        thread_id = started["result"]["thread"]["id"]
        client.request("turn/start", {"threadId": thread_id, "input": [{"type": "text", "text": "go"}]})
        client.until(lambda m: m.get("method") == "turn/completed", decision)
        client.request("thread/resume", {"threadId": thread_id})
        client.request("turn/interrupt", {"threadId": thread_id, "turnId": "nope"})  # an error reply
    finally:
        client.close()
    for msg in client.seen:
        validate_server_message(schema_dir, msg, client.methods)
    assert len(client.seen) > 5


def _order_after_request(msgs: list[dict[str, Any]]) -> list[str]:
    """Methods of server notifications after the first server→client request (turn end and settlement)."""
    start = next(i for i, m in enumerate(msgs) if "method" in m and "id" in m)
    keep = ("turn/completed", "serverRequest/resolved")
    return [m["method"] for m in msgs[start:] if m.get("method") in keep and "id" not in m]


def test_interrupt_with_pending_approval_orders_like_real_codex(tmp_path: Path) -> None:
    """Real codex 0.169.0 (transcripts/shared/transcript-approval-interrupt.jsonl, lines 23-24) completes the
    interrupted turn first and only then resolves the pending approval request; the fake must too."""
    real = [
        json.loads(x)["msg"]
        for x in (TRANSCRIPTS / "shared" / "transcript-approval-interrupt.jsonl").read_text().splitlines()
        if x.strip() and json.loads(x).get("dir") == "in"
    ]
    expected = _order_after_request(real)
    assert expected == ["turn/completed", "serverRequest/resolved"]
    codex = write_fake_codex(tmp_path, scenario="tools")
    client = _Client(codex, tmp_path)
    try:
        client.request("initialize", {"clientInfo": {"name": "t", "version": "1"}})
        client.send({"jsonrpc": "2.0", "method": "initialized"})
        started = client.request(
            "thread/start", {"cwd": str(tmp_path), "approvalPolicy": "untrusted", "sandbox": "workspace-write"}
        )
        thread_id = started["result"]["thread"]["id"]
        turn = client.request("turn/start", {"threadId": thread_id, "input": [{"type": "text", "text": "go"}]})
        client.until(lambda m: "method" in m and "id" in m, decision=None)  # an approval, left unanswered
        client.send(
            {
                "jsonrpc": "2.0",
                "id": 99,
                "method": "turn/interrupt",
                "params": {"threadId": thread_id, "turnId": turn["result"]["turn"]["id"]},
            }
        )
        client.until(lambda m: m.get("method") == "serverRequest/resolved", decision=None)
    finally:
        client.close()
    assert _order_after_request(client.seen) == expected


def test_fake_runs_without_harness_on_path(tmp_path: Path) -> None:
    """The wrapper pins the interpreter, so the fake works with a minimal PATH."""
    codex = write_fake_codex(tmp_path, scenario="say")
    out = subprocess.run(
        [str(codex), "--version"],
        capture_output=True,
        text=True,
        env={"PATH": "/nonexistent"},
        timeout=30,
        check=True,
    )
    assert out.stdout.strip() == "codex-cli 0.169.0"
    assert sys.executable in codex.read_text()


@pytest.mark.real_cli
def test_validator_rejects_a_wrong_shape(schema_dir: Path) -> None:
    bad = {
        "method": "item/started",
        "params": {
            "threadId": "t",
            "turnId": "u",
            "startedAtMs": 1,
            "item": {"type": "commandExecution", "id": "x"},
        },
    }
    with pytest.raises(AssertionError):
        validate_server_message(schema_dir, bad, {})
