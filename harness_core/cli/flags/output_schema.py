"""`--output-schema FILE` read: a JSON Schema object, checked against its meta-schema.

Layer: CLI, loaded when the flag is given; knows the input-file reader and the spec's schema check.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness_core.files.inputs import InputFileError, parse_json, read_input
from harness_core.spec import schema_problem

__all__ = ["SCHEMA_LIMIT", "read_schema"]

SCHEMA_LIMIT = 16 << 20
"""`--output-schema` reads at most this many bytes (a schema is kilobytes; /dev/zero never ends)."""


def read_schema(path: Path) -> dict[str, Any] | str:
    """The schema in `path`, or what is wrong with it (a message for a usage error)."""
    try:
        text = read_input(path, what="the output schema", limit=SCHEMA_LIMIT).decode("utf-8")
        schema = parse_json(text, what=repr(str(path)))
    except UnicodeDecodeError as exc:
        return f"{str(path)!r} is not UTF-8 text ({exc.reason}); the file must hold one JSON Schema object"
    except InputFileError as exc:
        return f"{exc.message}; the file must hold one JSON Schema object"
    if not isinstance(schema, dict):
        return (f"{str(path)!r} holds a JSON {type(schema).__name__}, not a JSON Schema object "
                '(e.g. {"type": "object", "properties": {...}})')
    problem = schema_problem(schema)
    if problem is not None:
        return f"{str(path)!r} is not a valid JSON Schema: {problem}"
    return schema
