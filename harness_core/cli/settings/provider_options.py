"""A provider's `Options` model as the keys that set it: `-o KEY=VALUE` on the command line and
`[providers.NAME]` in a settings file (a nested model field by field as `outer.inner`, a table as `NAME.KEY`).

Layer: CLI, pure (pydantic models read); knows no provider, no plugin host and no click.
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

__all__ = ["OptionInfo", "describe_options", "jsonable", "type_name"]


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
                "default": None if self.required else jsonable(self.default), "description": self.description}


def jsonable(value: Any) -> Any:
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (frozenset, set, tuple)):
        return [jsonable(v) for v in value]
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
