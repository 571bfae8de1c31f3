"""Every hook and every error code is documented (cheap, and it keeps the docs honest)."""

from __future__ import annotations

import inspect
from pathlib import Path

import harness_core.errors as errors
import harness_core.hookspecs as hookspecs

DOCS = Path(__file__).resolve().parents[1] / "docs"


def test_every_hook_is_documented() -> None:
    text = (DOCS / "providers.md").read_text()
    hooks = [name for name, _ in inspect.getmembers(hookspecs, inspect.isfunction) if name.startswith("harness_")]
    assert hooks, "no hookspecs found"
    missing = [h for h in hooks if f"`{h}(" not in text]
    assert not missing, f"undocumented hooks in docs/providers.md: {missing}"


def test_every_error_code_is_documented() -> None:
    text = (DOCS / "architecture.md").read_text()
    codes = {
        cls.code
        for cls in vars(errors).values()
        if isinstance(cls, type) and issubclass(cls, errors.HarnessError) and cls is not errors.HarnessError
    }
    missing = sorted(c for c in codes if f"`{c}`" not in text)
    assert not missing, f"undocumented error codes in docs/architecture.md: {missing}"
