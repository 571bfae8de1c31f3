"""The one place Harness's logging is configured: a stderr handler on the `harness` logger while one command runs
(warnings; `-vv` adds info and debug), taken away afterwards; neither the root logger nor structlog is touched.

Layer: CLI, loaded when a command runs; knows the library's logger name (docs/process-ownership.md).
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from harness_core._logging import ROOT_LOGGER

__all__ = ["FORMAT", "level_for", "log_to_stderr", "set_level"]

FORMAT = "%(levelname)s %(name)s: %(message)s"


def _harness_logger() -> logging.Logger:
    return logging.getLogger(ROOT_LOGGER)


def level_for(verbosity: int) -> int:
    """WARNING for 0, INFO for 1, DEBUG for 2 and more."""
    return logging.DEBUG if verbosity >= 2 else logging.INFO if verbosity == 1 else logging.WARNING


@contextmanager
def log_to_stderr(level: int = logging.WARNING) -> Iterator[logging.Handler]:
    """Print `harness.*` records at `level` and above to the current `sys.stderr` until the block ends; then
    remove the handler and restore the logger's previous level."""
    logger = _harness_logger()
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(FORMAT))
    previous = logger.level
    logger.addHandler(handler)
    logger.setLevel(level)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        logger.setLevel(previous)


def set_level(level: int) -> None:
    """Change the level of the `harness` logger inside a `log_to_stderr` block (e.g. for `run -vv`)."""
    _harness_logger().setLevel(level)
