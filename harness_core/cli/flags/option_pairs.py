"""`-o KEY=VALUE` arguments to a spec's `provider_options` (dotted keys nest, a repeated key makes a list).

Layer: CLI start-up: pure, the standard library only. Knows nothing of any provider: each provider's options model
validates the result.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = ["OptionSyntaxError", "parse_option_pairs"]


class OptionSyntaxError(ValueError):
    """A `-o KEY=VALUE` argument that does not parse; the message says the expected form."""


def parse_option_pairs(pairs: Iterable[str]) -> dict[str, Any]:
    """`-o` arguments to `provider_options`: dotted keys nest, a repeated key makes a list, values stay str.

    >>> parse_option_pairs(["config.effort=high", "enable=a", "enable=b"])
    {'config': {'effort': 'high'}, 'enable': ['a', 'b']}

    Raises:
        OptionSyntaxError: no `=`, an empty key part, or a key used both as a value and as a table.
    """
    options: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        parts = key.strip().split(".")
        if not sep or not all(part.strip() for part in parts):
            raise OptionSyntaxError(
                f"-o {pair!r}: expected KEY=VALUE (dotted keys nest: -o config.model_reasoning_effort=high)"
            )
        table = options
        for depth, part in enumerate(parts[:-1]):
            child = table.setdefault(part, {})
            if not isinstance(child, dict):
                raise OptionSyntaxError(
                    f"-o {pair!r}: {'.'.join(parts[:depth + 1])} already has a value, so it cannot hold keys"
                )
            table = child
        leaf = parts[-1]
        if leaf not in table:
            table[leaf] = value
        elif isinstance(table[leaf], dict):
            raise OptionSyntaxError(f"-o {pair!r}: {key} already holds keys (e.g. -o {key}.NAME=VALUE)")
        elif isinstance(table[leaf], list):
            table[leaf].append(value)
        else:
            table[leaf] = [table[leaf], value]
    return options
