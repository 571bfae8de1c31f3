"""`Tool` and the `tool` decorator: a typed Python function (sync or async) an agent may call.

Floor 1 (a model and its call, no I/O of its own): the name, the description (the docstring), the input JSON Schema
from the type hints (pydantic), `requires_approval` and `timeout`, and where the function can be imported from again
(a background worker re-imports it). Knows nothing of MCP, of runs or of providers.
"""

from __future__ import annotations

import contextlib
import contextvars
import inspect
import json
import re
import socket
import sys
import threading
import typing
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, overload

import anyio
from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError, create_model

__all__ = ["DEFAULT_TIMEOUT", "Tool", "ToolArgumentsError", "tool"]

DEFAULT_TIMEOUT = 60.0
"""Seconds a call may take by default before the agent gets a tool error naming the timeout."""
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$")
_ANY = TypeAdapter(Any)


class ToolArgumentsError(ValueError):
    """The agent's arguments do not match the tool's signature (the message says which and why)."""


@dataclass(frozen=True)
class Tool:
    """A Python function an agent may call, served by Harness as a tool of the MCP server `harness`.

    Make one with the `tool` decorator (or `Tool.of(fn)`). Calling the `Tool` object itself calls the function
    unchanged, so a decorated function still works as plain Python.
    """

    fn: Callable[..., Any]
    name: str
    description: str
    requires_approval: bool = False
    timeout: float = DEFAULT_TIMEOUT
    _arguments: type[BaseModel] = field(repr=False, compare=False, default=BaseModel)

    @classmethod
    def of(cls, fn: Callable[..., Any], *, name: str | None = None, description: str | None = None,
           requires_approval: bool = False, timeout: float = DEFAULT_TIMEOUT) -> Tool:
        """`fn` as a tool; its parameters' type hints become the input schema, its docstring the description.

        Raises:
            TypeError: `fn` is not a function, a parameter is positional-only or `*args`/`**kwargs`, or a hint
                cannot be resolved or has no JSON Schema.
            ValueError: an invalid name (letters, digits, `_` and `-`, at most 64) or a timeout that is not > 0.
        """
        if isinstance(fn, Tool):
            fn = fn.fn
        if not callable(fn) or not hasattr(fn, "__name__"):
            raise TypeError(f"@tool decorates a function, not {fn!r}")
        tool_name = name or fn.__name__
        if not _NAME.match(tool_name):
            raise ValueError(f"tool name {tool_name!r} is not valid: use letters, digits, '_' or '-' (at most 64), "
                             "starting with a letter or '_' (pass name=... to @tool)")
        if not timeout > 0:
            raise ValueError(f"tool {tool_name!r}: timeout must be more than 0 seconds, not {timeout!r}")
        return cls(fn=fn, name=tool_name, description=description or inspect.getdoc(fn) or "",
                   requires_approval=requires_approval, timeout=float(timeout), _arguments=_arguments_model(fn))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn(*args, **kwargs)

    @property
    def input_schema(self) -> dict[str, Any]:
        """The JSON Schema of the arguments (an object; `title`s dropped, `description`s from `Annotated` kept)."""
        schema = self._arguments.model_json_schema()
        schema.pop("title", None)
        for prop in schema.get("properties", {}).values():
            if isinstance(prop, dict):
                prop.pop("title", None)
        schema.setdefault("properties", {})
        return schema

    @property
    def reference(self) -> str:
        """Where a worker process imports this tool from again: `package.module:qualname`, or `PATH.py:qualname`
        for a function of a script or of a file loaded by path."""
        module = sys.modules.get(self.fn.__module__)
        source = getattr(self.fn, "__harness_source__", None) or getattr(module, "__harness_source__", None)
        if source is None and (self.fn.__module__ == "__main__" or module is None):
            source = getattr(module, "__file__", None)
        where = str(Path(source).resolve()) if source else self.fn.__module__
        return f"{where}:{self.fn.__qualname__}"

    def arguments(self, raw: dict[str, Any] | None) -> dict[str, Any]:
        """The agent's arguments checked and converted to the function's types.

        Raises:
            ToolArgumentsError: a missing, unknown or mistyped argument, said so the agent can correct itself.
        """
        try:
            model = self._arguments.model_validate(raw or {})
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(str(p) for p in err['loc']) or 'arguments'}: {err['msg']}"
                                 for err in exc.errors())
            raise ToolArgumentsError(f"invalid arguments for {self.name}: {problems}") from None
        return {name: getattr(model, name) for name in type(model).model_fields}

    async def call(self, raw: dict[str, Any] | None) -> Any:
        """Check `raw` (`arguments`) and call the function with the result (`invoke`).

        Raises:
            ToolArgumentsError: as `arguments`; otherwise whatever the function raises.
        """
        return await self.invoke(self.arguments(raw))

    async def invoke(self, kwargs: dict[str, Any]) -> Any:
        """Call the function with `kwargs` as they are (checked by `arguments` first): awaited when async, in a
        daemon thread of its own when not (the event loop stays free). Cancelled, a sync call is abandoned: its
        thread runs on, its result is dropped, and it never keeps the process from exiting.

        Raises:
            whatever the function raises.
        """
        if inspect.iscoroutinefunction(self.fn):
            result = await typing.cast(Callable[..., Awaitable[Any]], self.fn)(**kwargs)
        else:
            result = await _in_daemon_thread(self.fn, kwargs, self.name)
        if inspect.isawaitable(result):
            result = await result
        return result

    @property
    def is_async(self) -> bool:
        """Whether the function is a coroutine function (cancellable); else it runs in a thread, abandoned when cut
        short."""
        return inspect.iscoroutinefunction(self.fn)

    @staticmethod
    def result_text(value: Any) -> str:
        """What the agent reads of a return value: a `str` as it is, anything else as JSON (pydantic's)."""
        if isinstance(value, str):
            return value
        return json.dumps(Tool.as_json(value), ensure_ascii=False)

    @staticmethod
    def as_json(value: Any) -> Any:
        """`value` (checked arguments, a result) as plain JSON data: models, dates, enums as pydantic dumps them."""
        return _ANY.dump_python(value, mode="json")


@overload
def tool(fn: Callable[..., Any], /) -> Tool: ...


@overload
def tool(*, name: str | None = None, description: str | None = None, requires_approval: bool = False,
         timeout: float = DEFAULT_TIMEOUT) -> Callable[[Callable[..., Any]], Tool]: ...


def tool(fn: Callable[..., Any] | None = None, /, *, name: str | None = None, description: str | None = None,
         requires_approval: bool = False,
         timeout: float = DEFAULT_TIMEOUT) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Make a typed function (sync or async) a tool agents may call: `@tool` or `@tool(requires_approval=True,
    timeout=10)`. Its type hints give the input schema, its docstring the description.

        @tool
        def add(a: int, b: int) -> int:
            "Add two integers."
            return a + b

    Raises:
        TypeError, ValueError: as `Tool.of`.
    """
    def make(func: Callable[..., Any]) -> Tool:
        return Tool.of(func, name=name, description=description, requires_approval=requires_approval,
                       timeout=timeout)

    return make(fn) if fn is not None else make


async def _in_daemon_thread(fn: Callable[..., Any], kwargs: dict[str, Any], name: str) -> Any:
    """`fn(**kwargs)` in a new daemon thread, awaited without blocking the loop (any anyio backend). Not anyio's
    worker threads: the interpreter joins those at exit, so one stuck call (a socket read, `input()`) would keep
    `harness run` alive long after its run ended. The thread wakes the loop through a socket pair, never by
    calling into the loop, so a closed loop or a cancelled waiter costs it nothing; cancelled, the waiter
    closes its end and the result is dropped."""
    outcome: list[Any] = []
    failure: list[BaseException] = []
    waiter, waker = socket.socketpair()
    context = contextvars.copy_context()

    def work() -> None:
        try:
            outcome.append(context.run(fn, **kwargs))
        except BaseException as exc:  # noqa: BLE001 - handed to the awaiting task, which raises it
            failure.append(exc)
        finally:
            with contextlib.suppress(OSError):  # the waiter gave up (cancelled, the loop closed): result dropped
                waker.send(b"x", getattr(socket, "MSG_NOSIGNAL", 0))
            waker.close()

    try:
        threading.Thread(target=work, name=f"harness-tool-{name}", daemon=True).start()
        await anyio.wait_readable(waiter)
    finally:
        waiter.close()
    if failure:
        raise failure[0]
    return outcome[0]


def _arguments_model(fn: Callable[..., Any]) -> type[BaseModel]:
    """A pydantic model of `fn`'s keyword parameters (extra arguments refused)."""
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except Exception as exc:  # noqa: BLE001 - any failure to resolve a hint is the same error to the author
        raise TypeError(f"tool {fn.__name__!r}: cannot resolve its type hints ({type(exc).__name__}: {exc}); "
                        "import every name its annotations use at the top of its module") from None
    fields: dict[str, Any] = {}
    for param in inspect.signature(fn).parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD, param.POSITIONAL_ONLY):
            raise TypeError(f"tool {fn.__name__!r}: parameter {param.name!r} must be a plain named parameter "
                            "(no *args, **kwargs or positional-only): the agent passes arguments by name")
        annotation = hints.get(param.name, Any)
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[param.name] = (annotation, default)
    model = create_model(f"{fn.__name__}_arguments", __config__=ConfigDict(extra="forbid"), **fields)
    try:
        model.model_json_schema()
    except Exception as exc:  # noqa: BLE001 - pydantic raises several kinds for a type with no schema
        raise TypeError(f"tool {fn.__name__!r}: its parameters have no JSON Schema ({exc}); use JSON-like types "
                        "(str, int, float, bool, list, dict, pydantic models, Literal, ...)") from None
    return model
