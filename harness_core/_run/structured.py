"""Structured output: the final answer of a run with `output_schema`, parsed and validated by the runner.

Layer: core runtime (pure). Knows results, JSON Schema (through `jsonschema`) and the structured-output error;
knows nothing of providers or of how the schema reached the agent. The same check for every provider
(docs/sessions.md, structured output).
"""

from __future__ import annotations

import json
import re
from typing import Any

from harness_core.errors import StructuredOutputError
from harness_core.events import HarnessResult, RunStatus

__all__ = ["structured_result"]

_FENCE = re.compile(r"\A```(?:json)?\s*\n(.*)\n```\s*\Z", re.DOTALL)


def structured_result(result: HarnessResult, schema: dict[str, Any]) -> HarnessResult:
    """`result` with `structured_output` set to its answer, parsed and valid against `schema`; a successful
    result whose answer is not JSON or not valid becomes `failed` with `invalid_structured_output` (the text kept
    in the error's details). Results that did not succeed are returned as they are."""
    if result.status is not RunStatus.SUCCESS:
        return result
    try:
        value = _value(result)
        problem = _problem(value, schema)
    except StructuredOutputError as exc:
        return _failed(result, exc)
    if problem is not None:
        return _failed(result, StructuredOutputError(problem, result.final_text))
    return result.model_copy(update={"structured_output": value})


def _value(result: HarnessResult) -> Any:
    if result.structured_output is not None:
        return result.structured_output
    text = result.final_text.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1).strip()
    if not text:
        raise StructuredOutputError("the answer is empty", result.final_text)
    try:
        return json.loads(text)
    except ValueError as exc:
        raise StructuredOutputError(f"not JSON: {exc}", result.final_text) from None


def _problem(value: Any, schema: dict[str, Any]) -> str | None:
    from jsonschema import exceptions, validators

    validator = validators.validator_for(schema)(schema)
    error = exceptions.best_match(validator.iter_errors(value))
    if error is None:
        return None
    where = "/".join(str(p) for p in error.absolute_path)
    return f"{error.message}" + (f" at {where}" if where else "")


def _failed(result: HarnessResult, error: StructuredOutputError) -> HarnessResult:
    return result.model_copy(update={"status": RunStatus.FAILED, "error": error.to_info(), "structured_output": None})
