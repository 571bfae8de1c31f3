"""Tests for how a Codex failure becomes a Harness error (harness_codex_common.errors) and how a codex command
line is logged (harness_codex_common.argv)."""

from __future__ import annotations

import pytest
from harness_core import McpServer
from harness_core.provider import REDACTED

from harness_codex_common import (
    HINTS,
    RETRYING,
    CodexHints,
    classify_message,
    codex_error,
    mcp_servers_failed,
    message_kind,
    message_status,
    redacted_argv,
)


@pytest.mark.parametrize(
    ("message", "status"),
    [
        ("unexpected status 401 Unauthorized: invalid api key, url: http://x/v1/responses", 401),
        ("exceeded retry limit, last status: 429 Too Many Requests", 429),
        ("403 Forbidden", 403),
        ("unexpected status 503 Service Unavailable: busy", 503),
        ("stream disconnected before completion: 4010 bytes", None),
    ],
)
def test_message_status_reads_the_quoted_http_status(message: str, status: int | None) -> None:
    assert message_status(message) == status


def test_message_kind_reads_credentials_and_rate_limit_texts() -> None:
    assert message_kind("Missing environment variable: `OPENAI_API_KEY`.") == "auth"
    assert message_kind("401 Unauthorized") == "auth"
    assert message_kind("You've hit your usage limit.") == "rate_limit"
    assert message_kind("Rate limit reached for gpt") == "rate_limit"
    assert message_kind("stream disconnected before completion") is None


def test_a_deciding_status_goes_through_the_core_shape() -> None:
    error = codex_error(401, "bad key", kind="rate_limit", codex_error_info="x")
    assert error.code == "auth_failed" and error.details == {"status": 401, "codex_error_info": "x"}
    assert error.message == f"the model API refused the credentials (HTTP 401: bad key); {HINTS.auth}"
    limited = codex_error(429, "slow down")
    assert limited.code == "rate_limited" and limited.retryable and limited.message.endswith(HINTS.retry)
    failed = codex_error(502, "bad gateway")
    assert failed.code == "model_error" and failed.retryable and failed.message.endswith(HINTS.failure)


def test_a_known_kind_without_a_status_names_its_source_not_a_status() -> None:
    auth = codex_error(None, "  missing key  ", kind="auth", source="unauthorized")
    assert auth.code == "auth_failed" and "status" not in auth.details and not auth.retryable
    assert auth.message == f"the model API refused the credentials (unauthorized: missing key); {HINTS.auth}"
    limited = codex_error(500, "", kind="rate_limit")
    assert limited.code == "rate_limited" and limited.retryable and limited.details == {"status": 500}
    assert limited.message == f"the model API is rate limiting (codex: no message); {HINTS.retry}"
    other = codex_error(None, "stream closed")
    assert other.code == "model_error" and not other.retryable and "no HTTP status: stream closed" in other.message


def test_hints_are_the_callers() -> None:
    mine = CodexHints(auth="log in", retry="later", failure="again")
    assert classify_message("Missing environment variable: `K`", hints=mine).message.endswith("; log in")
    assert classify_message("usage limit reached", hints=mine).message.endswith("; later")
    assert classify_message("boom", hints=mine).message.endswith("; again")
    assert codex_error(None, "reconnecting", hints=RETRYING).message.endswith("; codex is retrying")
    assert "codex login" in HINTS.auth and "-o config.model" in HINTS.failure


def test_classify_message_keeps_the_quoted_status() -> None:
    forbidden = classify_message("unexpected status 403 Forbidden: no")
    assert forbidden.code == "auth_failed" and forbidden.details["status"] == 403 and "HTTP 403" in forbidden.message
    other = classify_message("unexpected status 400 Bad Request: unauthorized tool")
    assert other.code == "auth_failed" and other.details["status"] == 400 and "(codex: unexpected" in other.message


def test_redacted_argv_hides_config_values_and_scrubs_the_rest() -> None:
    argv = ["codex", "app-server", "-c", "model_providers.x.api_key=sk-secret", "-c", "oddity", "--x", "my-token"]
    shown = redacted_argv(argv, known=("my-token",))
    assert shown == ["codex", "app-server", "-c", f"model_providers.x.api_key={REDACTED}", "-c", REDACTED,
                     "--x", REDACTED]
    assert redacted_argv(["codex", "-c"]) == ["codex", "-c"]
    assert redacted_argv([]) == []


_EXEC_STDERR = """\
2026-12-07T03:58:38.147692Z ERROR codex_core::session: Failed to create session: required MCP servers failed to \
initialize: everything: No such file or directory (os error 2)
Error: thread/start: thread/start failed: error creating thread: Fatal error: Failed to initialize session: required \
MCP servers failed to initialize: everything: No such file or directory (os error 2) (code -32603)

Stack backtrace:
   0: <unknown>
   1: <unknown>
"""


def test_a_server_that_did_not_start_is_codexs_words_without_the_backtrace_and_a_next_step() -> None:
    """What `codex exec` 0.169.0 writes (under RUST_BACKTRACE=1) when a `--mcp-server` command does not exist."""
    error = mcp_servers_failed(_EXEC_STDERR)
    assert error is not None and error.code == "invalid_spec"
    assert "everything: No such file or directory (os error 2))" in error.message
    assert "run COMMAND yourself to see why" in error.message
    assert "backtrace" not in error.message.lower() and "<unknown>" not in error.message
    assert mcp_servers_failed("Error: stream disconnected before completion") is None


def test_a_server_given_by_url_that_did_not_start_gets_advice_for_a_url() -> None:
    """Trial 27, problem 11: not "run COMMAND yourself" for `--mcp-server docs=URL`; its password masked."""
    docs = McpServer(name="docs", url="http://alice:hunter2pass@127.0.0.1:9/mcp")
    stderr = "Error: required MCP servers failed to initialize: docs: connection refused"
    error = mcp_servers_failed(stderr, [docs, McpServer(name="ev", command="x")])
    assert error is not None and "could not reach http://***@127.0.0.1:9/mcp" in error.message
    assert "COMMAND" not in error.message and "hunter2pass" not in error.message
