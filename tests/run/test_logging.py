"""As a library, Harness never configures logging: silent unless the application asks, then records arrive."""

from __future__ import annotations

import contextlib
import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness_core import AgentRunSpec, HarnessEvent, RunStatus, run
from harness_core._logging import fields_of, get_logger
from harness_core.plugins import PluginHost

# A whole run_sync of the scripted provider that makes the runner log twice over: an on_event callback that
# raises on every event, and a provider that crashes. A filter on the run's logger counts the records (it prints
# nothing and configures nothing), so the test fails if the library stopped logging as much as if it printed.
_SILENT_RUN = """
import logging, sys
import structlog
import harness_core.testing.scripted as scripted
from harness_core import AgentRunSpec, run_sync
from harness_core.plugins import PluginHost

seen = []
logging.getLogger("harness.run").addFilter(lambda record: seen.append(record.levelname) or True)

def on_event(event):
    raise RuntimeError("callback bug")

host = PluginHost.create(entry_points=False, plugins=[("scripted", scripted)])
spec = AgentRunSpec(prompt="x", cwd=sys.argv[1], provider_options={"scenario": "tools", "crash": True})
result = run_sync(spec, "scripted", host=host, runs_dir=sys.argv[2], on_event=on_event)
assert result.error is not None and result.error.code == "provider_error", result
assert "ERROR" in seen and len(seen) > 3, seen
assert not structlog.is_configured()
sys.exit(17)
"""


def test_a_whole_run_that_logs_errors_prints_nothing_and_configures_nothing(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HARNESS_")}
    done = subprocess.run([sys.executable, "-c", _SILENT_RUN, str(tmp_path), str(tmp_path / "runs")],
                          capture_output=True, env=env, timeout=120)
    assert done.returncode == 17, done.stderr.decode()  # the script's own assertions held, to its last line
    assert done.stdout == b""
    assert done.stderr == b""


@pytest.fixture
def records() -> Iterator[list[logging.LogRecord]]:
    """What the application sees once it configures logging: a handler on the `harness` logger."""

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            caught.append(record)

    caught: list[logging.LogRecord] = []
    handler = Collect()
    logger = logging.getLogger("harness")
    logger.addHandler(handler)
    try:
        yield caught
    finally:
        logger.removeHandler(handler)


@pytest.mark.anyio
async def test_an_application_that_configures_logging_gets_the_runs_records(
    records: list[logging.LogRecord], host: PluginHost, runs_dir: Path
) -> None:
    def on_event(event: HarnessEvent) -> None:
        raise RuntimeError("callback bug")

    spec = AgentRunSpec(prompt="x", provider_options={"scenario": "say"})
    result = await run(spec, "scripted", host=host, runs_dir=runs_dir, on_event=on_event)
    assert result.status is RunStatus.SUCCESS  # the callback's bug cost the run nothing
    raised = [r for r in records if r.getMessage().startswith("on_event callback raised")]
    assert raised, [r.getMessage() for r in records]
    for record in raised:
        assert record.name == "harness.run"
        assert record.levelno == logging.ERROR
        assert record.exc_info is not None and "callback bug" in str(record.exc_info[1])
        assert fields_of(record)["run_id"] == result.run_id and fields_of(record)["provider"] == "scripted"
        assert f"run_id={result.run_id}" in record.getMessage()


@contextlib.contextmanager
def _kept(name: str) -> Iterator[list[logging.LogRecord]]:
    """The records the standard-library logger `name` gets at DEBUG and above while the block runs."""
    seen: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            seen.append(record)

    logger = logging.getLogger(name)
    handler, old_level = Keep(), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        yield seen
    finally:
        logger.removeHandler(handler)
        logger.setLevel(old_level)


@pytest.mark.parametrize("method", ["debug", "info", "warning", "warn", "error", "exception", "critical", "fatal",
                                    "log"])
def test_records_name_the_code_that_logged_not_structlog(method: str) -> None:
    """Location-based formatters (%(pathname)s:%(lineno)d, Sentry) point at the caller, on every Python."""
    with _kept("harness.test.location") as seen:
        log = get_logger("harness.test.location", run_id="r1")
        try:
            raise ValueError("boom")
        except ValueError:
            if method == "log":
                log.log(logging.INFO, "hello", n=1); line = sys._getframe().f_lineno  # noqa: E702
            else:
                getattr(log, method)("hello", n=1); line = sys._getframe().f_lineno  # noqa: E702
    (record,) = seen
    assert (record.pathname, record.lineno, record.funcName) == (
        __file__, line, "test_records_name_the_code_that_logged_not_structlog")
    assert record.getMessage() == "hello run_id=r1 n=1"


def test_structlog_is_imported_by_the_first_record_that_passes_its_level() -> None:
    """A process that logs nothing at its level does not pay for importing structlog (and rich, which it loads)."""
    script = """
import logging, sys
from harness_core._logging import get_logger
log = get_logger("harness.test.lazy", run_id="r1").bind(n=1)
log.debug("dropped"); log.info("dropped"); log.log(logging.INFO, "dropped")  # the level: root's WARNING
assert "structlog" not in sys.modules
seen = []
handler = logging.Handler()
handler.emit = seen.append
logging.getLogger("harness.test.lazy").addHandler(handler)
log.warning("kept", k="v")
assert "structlog" in sys.modules
assert [r.getMessage() for r in seen] == ["kept run_id=r1 n=1 k=v"], seen
assert log.name == "harness.test.lazy"
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def test_bound_context_follows_structlogs_rules() -> None:
    """bind/unbind/try_unbind make new loggers (the original keeps its context); `new` clears in place, as
    structlog's do; a level structlog does not name raises its KeyError."""
    with _kept("harness.test.context") as seen:
        log = get_logger("harness.test.context", a=1)
        bound = log.bind(b=2)
        bound.info("x")
        bound.unbind("a").info("y")
        bound.try_unbind("a", "missing").info("z")
        with pytest.raises(KeyError):
            bound.unbind("missing")
        log.info("w")
        log.new(c=3).info("v")
        with pytest.raises(KeyError):
            log.log(25, "between info and warning")
    assert [r.getMessage() for r in seen] == ["x a=1 b=2", "y b=2", "z b=2", "w a=1", "v c=3"]
