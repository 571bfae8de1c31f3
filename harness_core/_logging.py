"""Harness's loggers: structlog over the standard library's `logging.getLogger("harness")` hierarchy.

Layer: core utility. Knows nothing of runs or providers. As a library, Harness never configures logging (a
`NullHandler` on `harness`); only the `harness` CLI does. Usage and why: docs/process-ownership.md
(logging).
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable, Mapping, MutableMapping
from types import FrameType
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from structlog.stdlib import BoundLogger  # what type checkers see: the logger is structlog's to its users

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


_OLD_STACKLEVEL = sys.version_info < (3, 11)  # before 3.11, logging's own frames count towards stacklevel


def _stacklevel(method: str) -> int:
    """The `stacklevel` that makes the record name the code that called `log.warning(...)` (its pathname,
    line and function), not structlog's internals nor `_LazyLogger` here. Only paid for records that pass the level
    filter."""
    frame: FrameType | None = sys._getframe(2)  # the structlog frame that called this processor
    level = 1  # counts frames from the one that calls the `logging` method
    while frame is not None and (frame.f_code.co_filename.startswith(_structlog_dir)
                                 or frame.f_code.co_filename == __file__):
        frame = frame.f_back
        level += 1
    return level - 1 + (1 if _OLD_STACKLEVEL and method == "exception" else 0)


def _show(value: Any) -> str:
    if isinstance(value, str) and value and " " not in value and "=" not in value:
        return value
    return repr(value)


_structlog_dir = "\0"  # no file's name starts with it; structlog's directory once it is imported
_structlog_class: Any = None  # `structlog.stdlib.BoundLogger`, once a record passes
_PROCESSORS: list[Any] = []  # structlog's `filter_by_level`, then `_to_record`, once a record passes
_NAMED_LEVELS = frozenset({logging.DEBUG, logging.INFO, logging.WARNING, logging.ERROR, logging.CRITICAL})
"""The levels structlog's `log(level, ...)` knows by name."""


# structlog is imported by the first record that passes its logger's level, not before: importing it costs ~200 ms of
# CPU (its `__init__` loads `structlog.dev`, which loads rich and pygments when installed), paid by every `harness`
# process that otherwise logs nothing (measured, py3.11). The level test is structlog's own `filter_by_level`, made
# first, so what a record passes or drops is unchanged.
def _structlog() -> Any:
    """structlog's stdlib `BoundLogger` class, imported now (the first record that passes a level)."""
    global _structlog_class, _structlog_dir
    if _structlog_class is None:
        import structlog
        from structlog.stdlib import BoundLogger as StructlogBoundLogger, filter_by_level

        _PROCESSORS[:] = [filter_by_level, _to_record]
        _structlog_dir = os.path.dirname(structlog.__file__)
        _structlog_class = StructlogBoundLogger
    return _structlog_class


def _level_method(name: str, level: int) -> Callable[..., Any]:
    """`_LazyLogger.<name>`: structlog's method of that name, for a record at `level` that passes the logger's."""

    def method(self: _LazyLogger, event: str | None = None, *args: Any, **kw: Any) -> Any:
        return getattr(self._built(), name)(event, *args, **kw) if self._passes(level) else None

    method.__name__ = method.__qualname__ = name
    return method


class _LazyLogger:
    """A structlog stdlib `BoundLogger` over `logging.getLogger(name)`, with its context, built on the first record
    that passes the logger's level (structlog's `filter_by_level` test, made here first): a record below the level
    returns None, as structlog's dropped records do, without importing structlog. Everything else is structlog's."""

    __slots__ = ("_context", "_logger", "_structlog_logger")

    def __init__(self, logger: logging.Logger, context: dict[str, Any]) -> None:
        self._logger = logger
        self._context = context
        self._structlog_logger: Any = None

    def _passes(self, level: int) -> bool:
        logger = self._logger
        return not logger.disabled and level >= logger.getEffectiveLevel()

    def _built(self) -> Any:
        if self._structlog_logger is None:
            self._structlog_logger = _structlog()(self._logger, _PROCESSORS, self._context)
        return self._structlog_logger

    def bind(self, **new_values: Any) -> _LazyLogger:
        """A new logger with `new_values` added to this one's context."""
        return _LazyLogger(self._logger, {**self._context, **new_values})

    def unbind(self, *keys: str) -> _LazyLogger:
        """A new logger without `keys` in its context (KeyError: one is not there)."""
        bound = self.bind()
        for key in keys:
            del bound._context[key]
        return bound

    def try_unbind(self, *keys: str) -> _LazyLogger:
        """Like `unbind`, missing keys ignored."""
        bound = self.bind()
        for key in keys:
            bound._context.pop(key, None)
        return bound

    def new(self, **new_values: Any) -> _LazyLogger:
        """This logger's context cleared (as structlog does, in place), then `new_values` bound."""
        self._context.clear()
        return self.bind(**new_values)

    debug = _level_method("debug", logging.DEBUG)
    info = _level_method("info", logging.INFO)
    warning = warn = _level_method("warning", logging.WARNING)
    error = _level_method("error", logging.ERROR)
    exception = _level_method("exception", logging.ERROR)
    critical = _level_method("critical", logging.CRITICAL)
    fatal = _level_method("fatal", logging.CRITICAL)

    def log(self, level: int, event: str | None = None, *args: Any, **kw: Any) -> Any:
        """`level` as a number; one structlog does not name raises its KeyError."""
        if level in _NAMED_LEVELS and not self._passes(level):
            return None
        return self._built().log(level, event, *args, **kw)

    def __getattr__(self, name: str) -> Any:
        """The rest of structlog's stdlib `BoundLogger` (`name`, `isEnabledFor`, `setLevel`, ...)."""
        if name.startswith("__") or name in _LazyLogger.__slots__:
            raise AttributeError(name)
        return getattr(self._built(), name)


if not TYPE_CHECKING:
    BoundLogger = _LazyLogger  # at run time, for the modules that import the name to annotate with it


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
    return cast("BoundLogger", _LazyLogger(logging.getLogger(logger_name(name)), dict(initial)))


def fields_of(record: logging.LogRecord) -> Mapping[str, Any]:
    """The structured fields a Harness log record carries (empty for records from elsewhere)."""
    found = getattr(record, "harness_fields", None)
    return found if isinstance(found, Mapping) else {}
