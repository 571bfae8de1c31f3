"""The typed reports behind `harness providers`, `doctor`, `show` and `demo`: their `--json` is pinned (key
order included, as scripts read it), and their text follows the same models."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness_core.cli.providers.play import DemoRow, format_summary
from harness_core.cli.providers.report import INSTALL_HINT, DoctorReport, ProvidersReport, RunsDirReport
from harness_core.plugins import DEFAULT_PROVIDER, PluginHost, reset_host
from tests.cli.test_cli import _BrokenPlugin, _MissingPlugin, invoke, make_host, only_log

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture(autouse=True)
def scripted_host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[PluginHost]:
    monkeypatch.chdir(tmp_path)  # the scripted provider really applies file steps in the run's cwd
    host = make_host(("missing", _MissingPlugin()), ("left-pad", _BrokenPlugin()))
    reset_host(host)
    monkeypatch.setenv("HARNESS_PROVIDER", "scripted")
    monkeypatch.setenv("HARNESS_RUNS_DIR", str(tmp_path / "runs"))
    yield host
    reset_host(None)


PROVIDERS_JSON = textwrap.dedent("""\
    {
      "default": "scripted",
      "providers": [
        {
          "name": "missing",
          "aliases": [],
          "distribution": null,
          "version": "2.0",
          "default": false,
          "capabilities": [
            "streaming"
          ],
          "description": "",
          "available": false,
          "reason": "missing-cli not found on PATH; install it with `pip install missing-cli`",
          "cli_path": null,
          "cli_version": null,
          "error_code": "cli_not_found",
          "cli_name": "missing-cli",
          "min_cli_version": "1.0"
        },
        {
          "name": "scripted",
          "aliases": [],
          "distribution": null,
          "version": "1.0",
          "default": true,
          "capabilities": [
            "approvals",
            "cost",
            "effort",
            "file_input",
            "image_input",
            "interrupt",
            "live_session",
            "max_turns",
            "mcp_http",
            "mcp_sse",
            "mcp_stdio",
            "session",
            "steer",
            "streaming",
            "structured_output"
          ],
          "description": "In-process scenario player for tests (no CLI); its `mcp` steps call Python tools.",
          "available": true,
          "reason": null,
          "cli_path": null,
          "cli_version": null,
          "cli_name": null,
          "min_cli_version": null
        }
      ],
      "broken_plugins": [
        {
          "plugin": "left-pad",
          "distribution": null,
          "error": "ImportError: no module named 'left_pad'"
        }
      ]
    }
""")


def test_providers_json_is_pinned() -> None:
    result = invoke("providers", "--json")
    assert result.exit_code == 0
    assert result.stdout == PROVIDERS_JSON


def test_providers_text_marks_the_default_and_says_why_a_provider_is_unavailable() -> None:
    lines = invoke("providers").stdout.splitlines()
    assert lines[0].split() == ["PROVIDER", "VERSION", "CAPABILITIES", "AVAILABLE"]
    assert lines[1].startswith("missing ") and lines[1].endswith("no: missing-cli not found on PATH; install "
                                                                  "it with `pip install missing-cli`")
    assert lines[2].startswith("scripted (default)  1.0 ") and lines[2].endswith("  yes")
    assert lines[3:] == ["", "broken plugins (not loaded):",
                         "  left-pad (no distribution): ImportError: no module named 'left_pad'"]


def test_doctor_json_is_the_providers_report_plus_runs_dir_problems_and_ok(tmp_path: Path) -> None:
    result = invoke("doctor", "--json")
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert list(report) == ["default", "providers", "broken_plugins", "credentials", "runs_dir", "problems", "ok"]
    assert json.dumps({k: report[k] for k in ("default", "providers", "broken_plugins")}, indent=2) + "\n" == (
        PROVIDERS_JSON
    )
    assert report["credentials"] == {
        "missing": {"checked": False, "logged_in": None, "next_step": None,
                    "detail": "not checked (the provider has no credentials check)"},
        "scripted": {"checked": False, "logged_in": None, "next_step": None,
                     "detail": "not checked (the provider has no credentials check)"},
    }
    assert report["runs_dir"] == {"path": str(tmp_path / "runs"), "exists": False, "writable": True,
                                  "reason": None}
    assert report["problems"] == [
        "provider missing: missing-cli not found on PATH; install it with `pip install missing-cli`",
        "plugin left-pad is broken: ImportError: no module named 'left_pad'",
    ]
    assert report["ok"] is False


def test_doctor_names_an_unwritable_runs_dir(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    reset_host(make_host())
    result = invoke("doctor", "--runs-dir", str(blocker / "runs"))
    assert result.exit_code == 1
    assert f"!! runs dir: {blocker / 'runs'} ({blocker} is not a directory)" in result.stdout


def test_no_providers_hint_names_the_default_providers_distribution() -> None:
    empty = ProvidersReport(default=DEFAULT_PROVIDER, providers=(), broken_plugins=())
    doctor = DoctorReport(empty, RunsDirReport(path=Path("/r"), exists=True, writable=True, reason=None))
    assert f"pip install harness-{DEFAULT_PROVIDER}" == INSTALL_HINT
    assert doctor.problems == [f"no providers installed; install one, e.g. `{INSTALL_HINT}`"] and not doctor.ok
    reset_host(PluginHost.create(entry_points=False, plugins=[]))
    assert invoke("providers").stdout == f"no providers installed (e.g. `{INSTALL_HINT}`)\n"
    assert f"Install one: {INSTALL_HINT}" in invoke("demo").stdout


def test_show_json_keys_in_their_documented_order() -> None:
    invoke("run", "x", "-o", "scenario=fail_500")
    run_id = json.loads(invoke("runs", "--json").stdout)[0]["run_id"]
    details = json.loads(invoke("show", run_id, "--json").stdout)
    assert list(details) == ["run_id", "provider", "model", "status", "started_at", "duration_ms", "cost_usd", "cwd",
                             "prompt", "session_id", "session", "turn", "path", "cli_version", "usage", "tools",
                             "files_changed", "changes", "final_text", "error", "bad_lines"]
    assert details["error"] == {"code": "model_error", "message": "the model API failed (HTTP 500: internal error)",
                                "retryable": True, "details": {"status": 500}}
    assert details["usage"] is None and details["tools"] == [] and details["final_text"] == ""
    assert details["bad_lines"] == []


def test_show_of_a_log_without_its_run_started_omits_what_only_that_event_knows(tmp_path: Path) -> None:
    invoke("run", "x", "-o", "scenario=say")
    log = only_log(tmp_path / "runs")
    log.write_text("".join(log.read_text().splitlines(keepends=True)[1:]))
    details = json.loads(invoke("show", log.stem, "--json").stdout)
    assert "cli_version" not in details and details["cwd"] is None
    assert details["provider"] is None and details["final_text"] == "Hello from the scripted model."
    assert "provider  ?" in invoke("show", log.stem).stdout


def test_demo_reports_a_provider_that_cannot_run_offline_and_exits_1() -> None:
    result = invoke("demo", "--provider", "scripted", "--json")
    assert result.exit_code == 1
    rows = json.loads(result.stdout)
    assert [list(row) for row in rows] == [["provider", "status", "cli_version", "tools", "duration_s",
                                            "input_tokens", "output_tokens", "run_id", "changed_files",
                                            "workspace", "error"]]
    assert rows[0]["status"] == "unavailable" and rows[0]["error"].startswith("invalid_spec: provider 'scripted' "
                                                                             "cannot run offline")


def test_demo_summary_table() -> None:
    rows = [
        DemoRow(provider="alpha", status="success", workspace=None, cli_version="1.2.3",
                tools=("shell:completed", "read:declined"), duration_s=0.5, input_tokens=10, output_tokens=2,
                run_id="r1", changed_files=("new.txt", "notes.txt")),
        DemoRow(provider="beta", status="unavailable", workspace=Path("/w/b"), error="cli_not_found: no beta"),
    ]
    assert format_summary(rows).splitlines() == [
        "",
        "== summary ==",
        "provider  cli    status       tools                changed             time    tokens in/out  run id",
        "alpha     1.2.3  success      shell read:declined  new.txt, notes.txt  0.50 s  10/2           r1",
        "beta      -      unavailable  -                    -                   -       -              -",
        "beta: cli_not_found: no beta",
        "beta: workspace kept at /w/b",
        "Inspect a run with `harness show RUN_ID`.",
    ]
    wide = format_summary(rows).splitlines()[2]
    assert format_summary(rows, width=len(wide)) == format_summary(rows)  # it fits: the table
    narrower = format_summary(rows, width=len(wide) - 8).splitlines()  # the tools and changed files wrap
    assert narrower[3].split() == ["alpha", "1.2.3", "success", "shell", "new.txt,", "0.50", "s", "10/2", "r1"]
    assert narrower[4].split() == ["read:declined", "notes.txt"] and max(map(len, narrower)) <= len(wide) - 8
    stacked = format_summary(rows, width=60).splitlines()  # the table cannot fit: a block per provider
    assert stacked[2:12] == [
        "alpha  success", "  cli: 1.2.3", "  tools: shell read:declined", "  changed: new.txt, notes.txt",
        "  time: 0.50 s", "  tokens in/out: 10/2", "  run id: r1", "beta  unavailable", "  cli: -", "  tools: -",
    ]
    assert max(len(line) for line in stacked) <= 60
    assert rows[0].as_json()["workspace"] is None  # removed after the run
    assert rows[1].as_json()["workspace"] == "/w/b" and rows[0].as_json()["tools"] == ["shell:completed",
                                                                                        "read:declined"]
