"""The façade for people who WRITE providers: everything a provider distribution imports from Harness.

Layer: public surface (re-exports only). A provider imports from here, from `harness_core`, from
`harness_core.offline` and, in its tests, from `harness_core.testing` — nothing else. `docs/providers.md`
documents every name below (a test checks it).
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

from harness_core._facade import missing_name
from harness_core._jsonlines import (
    NON_JSON_METHOD,
    MessageBatches,
    json_batches,
    json_messages,
    loads_line,
    scan_once as _scan_once,  # deprecated: see __getattr__
)
from harness_core._logging import get_logger
from harness_core._provider_interface import (
    AuthStatus,
    CliInfo,
    NoOptions,
    OfflineSetup,
    OptionsT,
    Provider,
    ProviderOptions,
    ProviderSession,
    RunContext,
    SessionContext,
    trace_env,
    traced_env,
)
from harness_core.agentcli.binary import locate_cli
from harness_core.agentcli.cache import cached_probe, remember_probe
from harness_core.agentcli.version import cli_output, cli_version, probe_cli, require_min_version
from harness_core.attachment import API_IMAGE_TYPES
from harness_core.capabilities import Capability, ProviderInfo
from harness_core.errors import error_for_status, truncate
from harness_core.events import fast_text_delta
from harness_core.files.private import write_private
from harness_core.files.scratch import Scratch
from harness_core.hookspecs import hookimpl
from harness_core.jsonrpc import JsonRpcError, JsonRpcPeer, NotificationHandler
from harness_core.mcp import failed_server_next_step
from harness_core.redaction import REDACTED, redact_argv, scrub
from harness_core.tooldisplay import (
    DELETING_FILE,
    EDITING_FILE,
    LISTING_FILES,
    OUTPUT_CHARS,
    READING_FILE,
    RUNNING_COMMAND,
    SEARCHING,
    SUMMARY_CHARS,
    WRITING_FILE,
    CommandAction,
    bounded_head,
    bounded_tail,
    classify_command,
    command_display,
    file_change_display,
    mcp_call_text,
    unwrap_shell,
)
from harness_core.transport import ChildProcess

__all__ = [
    # the provider and its run
    "AuthStatus",
    "Capability",
    "CliInfo",
    "NoOptions",
    "OfflineSetup",
    "OptionsT",
    "Provider",
    "ProviderInfo",
    "API_IMAGE_TYPES",
    "ProviderOptions",
    "ProviderSession",
    "RunContext",
    "SessionContext",
    "hookimpl",
    "trace_env",
    "traced_env",
    # child processes and wire protocols
    "ChildProcess",
    "JsonRpcError",
    "JsonRpcPeer",
    "NotificationHandler",
    "NON_JSON_METHOD",
    "MessageBatches",
    "json_batches",
    "json_messages",
    "loads_line",
    "fast_text_delta",
    # finding the agent's CLI
    "cached_probe",
    "remember_probe",
    "cli_output",
    "cli_version",
    "locate_cli",
    "probe_cli",
    "require_min_version",
    # errors, secrets, logs
    "REDACTED",
    "error_for_status",
    "failed_server_next_step",
    "get_logger",
    "redact_argv",
    "scrub",
    "truncate",
    # private files (a secret handed to a CLI as a file: 0600, in a 0700 scratch directory)
    "Scratch",
    "write_private",
    # tool display
    "DELETING_FILE",
    "EDITING_FILE",
    "LISTING_FILES",
    "OUTPUT_CHARS",
    "READING_FILE",
    "RUNNING_COMMAND",
    "SEARCHING",
    "SUMMARY_CHARS",
    "WRITING_FILE",
    "CommandAction",
    "bounded_head",
    "bounded_tail",
    "classify_command",
    "command_display",
    "mcp_call_text",
    "file_change_display",
    "unwrap_shell",
]


if not TYPE_CHECKING:  # hidden from type checkers, which would otherwise accept any name

    def __getattr__(name: str) -> Any:
        """A name this façade does not export: an ImportError saying where it is (`harness_core._facade`); a
        deprecated name still works for one release, with a DeprecationWarning naming what replaces it."""
        if name == "scan_once":
            warnings.warn("harness_core.provider.scan_once is deprecated and will be removed in the next release: "
                          "read lines with json_batches (or MessageBatches), or parse one with loads_line",
                          DeprecationWarning, stacklevel=2)
            return _scan_once
        raise missing_name(__name__, name)
