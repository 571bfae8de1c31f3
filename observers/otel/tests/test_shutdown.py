"""harness-otel's own providers at exit: bounded by a deadline, an unreachable endpoint said once on stderr (not the
exporters' retries, not a traceback); in process, and as `harness run --offline --otel` exits."""

from __future__ import annotations

import atexit
import io
import os
import subprocess
import sys
import time
from pathlib import Path

from harness_otel.sdk import DEFAULT_DEADLINE, providers_from_environment

UNREACHABLE = "http://127.0.0.1:9"  # the discard port: nothing listens there


def test_shutdown_gives_up_on_an_unreachable_endpoint_at_once_and_says_so_once() -> None:
    providers = providers_from_environment({"OTEL_EXPORTER_OTLP_ENDPOINT": UNREACHABLE})
    atexit.unregister(providers.shutdown)
    os.environ.pop("OTEL_EXPORTER_OTLP_ENDPOINT", None)
    providers.tracer_provider.get_tracer("test").start_span("work").end()
    providers.meter_provider.get_meter("test").create_counter("things").add(1)
    said = io.StringIO()
    began = time.monotonic()
    providers.shutdown(stderr=said)
    assert time.monotonic() - began < DEFAULT_DEADLINE + 1
    lines = said.getvalue().splitlines()
    assert lines == [f"harness: warning: spans and metrics could not be exported to {UNREACHABLE} (connection "
                     "refused); `harness trace last` shows the last run's spans from its log"]
    providers.shutdown(stderr=said)  # again (atexit after the application's own call): nothing more
    assert said.getvalue().splitlines() == lines


def test_otel_metrics_exporter_none_exports_no_metrics() -> None:
    providers = providers_from_environment({"OTEL_EXPORTER_OTLP_ENDPOINT": UNREACHABLE,
                                            "OTEL_METRICS_EXPORTER": "none"})
    atexit.unregister(providers.shutdown)
    assert set(providers.exporters) == {"spans"}
    providers.tracer_provider.get_tracer("test").start_span("work").end()
    said = io.StringIO()
    providers.shutdown(stderr=said)
    assert said.getvalue().startswith(f"harness: warning: spans could not be exported to {UNREACHABLE} (connection "
                                      "refused)")


def test_the_users_exporter_timeout_raises_the_deadline() -> None:
    providers = providers_from_environment({"OTEL_EXPORTER_OTLP_ENDPOINT": UNREACHABLE,
                                            "OTEL_EXPORTER_OTLP_TIMEOUT": "7"})
    atexit.unregister(providers.shutdown)
    assert providers.deadline == 7
    providers.shutdown(stderr=io.StringIO())


def test_harness_run_otel_exits_soon_after_its_run_with_an_unreachable_endpoint(tmp_path: Path) -> None:
    env = {**os.environ, "OTEL_EXPORTER_OTLP_ENDPOINT": UNREACHABLE, "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    env.pop("HARNESS_OTEL", None)
    command = [sys.executable, "-m", "harness_core", "run", "--offline", "--otel", "-p", "scripted-offline",
               "--runs-dir", str(tmp_path / "runs"), "--json"]
    process = subprocess.Popen(command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
    try:
        assert process.stdout is not None and process.stderr is not None
        lines, printed = [], time.monotonic()
        while line := process.stdout.readline():  # the run's events as they come, the last when it ended
            lines.append(line)
            printed = time.monotonic()
        stderr = process.stderr.read()
        status = process.wait(timeout=60)
    finally:
        process.kill()
    after = time.monotonic() - printed
    assert status == 0, stderr
    assert '"type":"done"' in lines[-1].replace(" ", "") and '"status":"success"' in lines[-1].replace(" ", "")
    assert after < DEFAULT_DEADLINE + 3, f"{after:.1f} s from the run's end to the exit"
    assert stderr.count("could not be exported") == 1, stderr
    assert f"spans and metrics could not be exported to {UNREACHABLE} (connection refused)" in stderr
    assert "Traceback" not in stderr and "Transient error" not in stderr and "retrying" not in stderr
