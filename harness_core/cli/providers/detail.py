"""`harness providers NAME`: one provider in full, what `harness providers` lists plus its aliases and every option
of its `Options` model (a nested model field by field as `outer.inner`, a table as `NAME.KEY`: how `-o` spells them).

Layer: CLI, loaded when the command runs; knows the plugin host, the provider interface and the reports
(`providers.report`); no concrete provider.
"""

from __future__ import annotations

import ast
import enum
import inspect
import itertools
import json
import textwrap
import types
import typing
from dataclasses import dataclass
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from harness_core.cli.providers.report import PROBE_DEADLINE, ProviderReport, probe_outcome, provider_entry
from harness_core.offline import can_run_offline
from harness_core.plugins import PluginHost

__all__ = ["OptionInfo", "ProviderDetail", "describe_options", "format_provider_detail", "provider_detail",
           "type_name"]

_NO_DEFAULT = object()


@dataclass(frozen=True)
class OptionInfo:
    """One `-o KEY=VALUE` option: its key as `-o` spells it, its type and default for a person, what it does."""

    name: str
    type: str
    default: Any = _NO_DEFAULT
    description: str = ""

    @property
    def required(self) -> bool:
        return self.default is _NO_DEFAULT

    def as_json(self) -> dict[str, Any]:
        return {"name": self.name, "type": self.type, "required": self.required,
                "default": None if self.required else _jsonable(self.default), "description": self.description}


@dataclass(frozen=True)
class ProviderDetail:
    """`harness providers NAME`: the provider's report (probed), whether it runs offline, and its options."""

    report: ProviderReport
    offline: bool
    options: tuple[OptionInfo, ...]
    tool_filters: tuple[str, ...] = ()
    """The tool names its CLI filters natively (`ProviderInfo.tool_filters`)."""
    approval_kinds: tuple[str, ...] = ()
    """The actions its agent always asks approval for (`ProviderInfo.approval_kinds`)."""
    allow_lists: bool = True
    """Its CLI honours `tool_filters` in an allow-list too (`ProviderInfo.tool_allow_lists`)."""

    def as_json(self) -> dict[str, Any]:
        return {**self.report.as_json(), "offline": self.offline, "options": [o.as_json() for o in self.options],
                "tool_filters": list(self.tool_filters), "approval_kinds": list(self.approval_kinds),
                "tool_allow_lists": self.allow_lists}


def _jsonable(value: Any) -> Any:
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (frozenset, set, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return str(value)
    return value


def type_name(annotation: Any) -> str:
    """A field's type for a person: `str`, `int or none`, `list of str`, `one of: a, b`, `table`."""
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is typing.Annotated:
        return type_name(args[0])
    if origin is Union or origin is types.UnionType:
        named = [type_name(a) for a in args if a is not type(None)]
        return " or ".join([*named, *(["none"] if type(None) in args else [])])
    if origin is Literal:
        return "one of: " + ", ".join(str(a) for a in args)
    if origin in (list, tuple, set, frozenset):
        items = [a for a in args if a is not Ellipsis]
        return f"list of {type_name(items[0])}" if items else "list"
    if origin is dict or annotation is dict:
        return "table"
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return "one of: " + ", ".join(str(m.value) for m in annotation)
    if annotation is Any:
        return "any"
    if isinstance(annotation, type):
        return annotation.__name__
    return str(annotation).replace("typing.", "")


def _attribute_docstrings(model: type[BaseModel]) -> dict[str, str]:
    """Field docstrings (a string right after `name: type = ...`) of `model` and its bases, for the options
    models that document fields that way rather than with `Field(description=...)`."""
    found: dict[str, str] = {}
    for cls in reversed(model.__mro__):
        if not (isinstance(cls, type) and issubclass(cls, BaseModel)) or cls is BaseModel:
            continue
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
        except (OSError, TypeError, SyntaxError):
            continue
        body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
        for node, after in itertools.pairwise(body):
            if (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and isinstance(after, ast.Expr)
                    and isinstance(after.value, ast.Constant) and isinstance(after.value.value, str)):
                found[node.target.id] = inspect.cleandoc(after.value.value)
    return found


def _nested_model(annotation: Any) -> type[BaseModel] | None:
    candidates = [a for a in get_args(annotation) if a is not type(None)] or [annotation]
    if len(candidates) == 1 and isinstance(candidates[0], type) and issubclass(candidates[0], BaseModel):
        return candidates[0]
    return None


def describe_options(model: type[BaseModel], prefix: str = "") -> list[OptionInfo]:
    """Every option of an options model, in declaration order; a nested model's fields as `outer.inner`, a
    table (`dict`) field as `name.KEY`. A field's description is its `Field(description=)`, else its docstring."""
    docs = _attribute_docstrings(model)
    found: list[OptionInfo] = []
    for name, info in model.model_fields.items():
        key = prefix + (info.alias or name)
        nested = _nested_model(info.annotation)
        if nested is not None:
            found += describe_options(nested, key + ".")
            continue
        kind = type_name(info.annotation)
        if kind == "table":
            key += ".KEY"
        if info.default is not PydanticUndefined:
            default: Any = info.default
        elif info.default_factory is not None:
            try:
                default = info.default_factory()  # type: ignore[call-arg]  # pydantic's factories take no data here
            except Exception:  # noqa: BLE001 - a factory that needs data has no default to show
                default = _NO_DEFAULT
        else:
            default = _NO_DEFAULT
        description = " ".join((info.description or docs.get(name) or "").split())
        found.append(OptionInfo(key, kind, default, description))
    return found


async def provider_detail(host: PluginHost, name: str, deadline: float = PROBE_DEADLINE,
                          default: str | None = None) -> ProviderDetail:
    """Provider `name` (or an alias of one) probed under `deadline`, with its options (`default`: the default
    provider's name, None for the host's).

    Raises:
        ProviderNotFoundError: no provider by that name (the message suggests the closest and lists them all).
    """

    registered = host.get(name)
    report = provider_entry(host, registered, await probe_outcome(registered, deadline), default)
    info = registered.cls.info
    return ProviderDetail(report, can_run_offline(registered.cls), tuple(describe_options(registered.cls.Options)),
                          tuple(sorted(info.tool_filters)), tuple(sorted(info.approval_kinds)),
                          info.tool_allow_lists)


def _default_text(option: OptionInfo) -> str:
    if option.required:
        return "required"
    value = _jsonable(option.default)
    if value is None:
        return "none"
    if value in ({}, []):
        return "empty"
    return value if isinstance(value, str) and value else json.dumps(value)


def format_provider_detail(detail: ProviderDetail, width: int | None = None) -> str:
    """The page of one provider, its lines broken between words to fit `width` (a terminal's; None: 100)."""
    width = width or _PAGE_WIDTH

    def wrapped(text: str, indent: str, first: str | None = None) -> list[str]:
        return textwrap.wrap(text, width, initial_indent=indent if first is None else first, subsequent_indent=indent,
                             break_long_words=False, break_on_hyphens=False)

    p = detail.report
    marks = [m for m in ("default" if p.default else "", "also: " + ", ".join(p.aliases) if p.aliases else "") if m]
    lines = [f"{p.name} {p.version}" + (f" ({'; '.join(marks)})" if marks else "")]
    if p.description:
        lines += wrapped(p.description, "  ")
    lines.append(f"  distribution: {p.distribution or '(not installed as a distribution)'}")
    if p.probe.available:
        cli = " ".join(x for x in (p.cli_name, p.probe.cli_version) if x)
        where = f" at {p.probe.cli_path}" if p.probe.cli_path else ""
        lines.append("  available: yes" + (f" ({cli}{where})" if cli or where else ""))
    else:
        lines += wrapped(f"available: no: {p.probe.reason}", "    ", "  ")
    if p.cli_name:
        lines.append(f"  cli: {p.cli_name} (minimum {p.min_cli_version or 'none'})")
    lines += wrapped(f"capabilities: {', '.join(p.capabilities) or 'none'}", "    ", "  ")
    lines += wrapped(f"tool filters: {', '.join(detail.tool_filters) or 'none'} native"
                     + (f"; {', '.join(detail.approval_kinds)} enforced through approvals" if detail.approval_kinds
                        and "approvals" in p.capabilities else "")
                     + ("; allow-lists refused" if detail.tool_filters and not detail.allow_lists else "")
                     + " (docs/tools.md)", "    ", "  ")
    lines += wrapped("offline: " + (f"yes (harness run --offline -p {p.name}; `harness scenarios` lists what it "
                                    "plays)" if detail.offline else "no"), "    ", "  ")
    if not detail.options:
        lines += ["", "Options: none"]
        return "\n".join(lines)
    lines += ["", "Options (-o KEY=VALUE, repeatable):"]
    for option in detail.options:
        lines.append(f"  {option.name}: {option.type} (default: {_default_text(option)})")
        if option.description:
            lines += wrapped(option.description, "      ")
    return "\n".join(lines)


_PAGE_WIDTH = 100
"""The width of the page off a terminal (a pipe, a file)."""
