"""Harness's loggers: structlog over the standard library's `logging.getLogger("harness")` hierarchy.

Layer: core utility. Knows nothing of runs or providers. As a library, Harness never configures logging (a
`NullHandler` on `harness`); only the `harness` CLI does. Usage and why: docs/process-ownership.md
(logging).
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Mapping, MutableMapping
from types import FrameType
from typing import Any

import structlog
from structlog.stdlib import BoundLogger

__all__ = ["ROOT_LOGGER", "BoundLogger", "fields_of", "get_logger", "logger_name"]

ROOT_LOGGER = "harness"
logging.getLogger(ROOT_LOGGER).addHandler(logging.NullHandler())

_RESERVED = frozenset({"event", "exc_info", "stack_info", "stacklevel"})


def _to_record(_logger: Any, _method: str, event_dict: MutableMapping[str, Any]) -> tuple[tuple[Any, ...],
                                                                                        dict[str, Any]]:
    """The structlog event as one `logging` call: the message reads `event key=value ...`; the fields are
    also on the record as `harness_fields` for handlers that want them structured."""
    fields = {k: v for k, v in event_dict.items() if k not in _RESERVED}
    message = str(event_dict.get("event", ""))
    if fields:
        message = message + " " + " ".join(f"{k}={_show(v)}" for k, v in fields.items())
    kwargs: dict[str, Any] = {"extra": {"harness_fields": fields}, "stacklevel": _stacklevel(_method)}
    for key in ("exc_info", "stack_info"):
        if key in event_dict:
            kwargs[key] = event_dict[key]
    return (message,), kwargs


_STRUCTLOG_DIR = os.path.dirname(structlog.__file__)
_OLD_STACKLEVEL = sys.version_info < (3, 11)  # before 3.11, logging's own frames count towards stacklevel


def _stacklevel(method: str) -> int:
    """The `stacklevel` that makes the record name the code that called `log.warning(...)` (its pathname,
    line and function), not structlog's internals. Only paid for records that pass the level filter."""
    frame: FrameType | None = sys._getframe(2)  # the structlog frame that called this processor
    level = 1  # counts frames from the one that calls the `logging` method
    while frame is not None and frame.f_code.co_filename.startswith(_STRUCTLOG_DIR):
        frame = frame.f_back
        level += 1
    return level - 1 + (1 if _OLD_STACKLEVEL and method == "exception" else 0)


def _show(value: Any) -> str:
    if isinstance(value, str) and value and " " not in value and "=" not in value:
        return value
    return repr(value)


_PROCESSORS: list[Any] = [structlog.stdlib.filter_by_level, _to_record]


def logger_name(module: str) -> str:
    """`harness_core.x.y` → `harness.x.y`; a provider's `harness_myagent.provider` → `harness.myagent.provider`;
    names already under `harness` stay as they are."""
    if module == ROOT_LOGGER or module.startswith(ROOT_LOGGER + "."):
        return module
    head, _, rest = module.partition(".")
    if head == "harness_core":
        return f"{ROOT_LOGGER}.{rest}" if rest else ROOT_LOGGER
    if head.startswith("harness_"):
        head = head[len("harness_"):]
    return ".".join(p for p in (ROOT_LOGGER, head, rest) if p)


def get_logger(name: str, **initial: Any) -> BoundLogger:
    """A structlog logger writing to the standard-library logger `logger_name(name)`; silent unless the
    application configures `logging` (a `harness` logger or the root logger with a handler and a level)."""
    logger: BoundLogger = structlog.wrap_logger(
        logging.getLogger(logger_name(name)), processors=_PROCESSORS, wrapper_class=BoundLogger,
        context_class=dict, cache_logger_on_first_use=True,
    )
    return logger.bind(**initial) if initial else logger


def fields_of(record: logging.LogRecord) -> Mapping[str, Any]:
    """The structured fields a Harness log record carries (empty for records from elsewhere)."""
    found = getattr(record, "harness_fields", None)
    return found if isinstance(found, Mapping) else {}
