"""Tests for the Codex CLI support shared by the two Codex providers (harness_codex_common.cli)."""

from __future__ import annotations

import pytest

from harness_codex_common.cli import config_args, flat_config, toml_value


def _pairs(args: list[str]) -> dict[str, str]:
    assert args[::2] == ["-c"] * (len(args) // 2)
    return dict(arg.split("=", 1) for arg in args[1::2])


def test_config_args_nested_become_dotted_keys() -> None:
    args = config_args({"model": "o3", "tools": {"web_search": "true", "view_image": False}, "a": {"b": {"c": 1}}})
    assert args == [
        "-c", "model=o3",
        "-c", "tools.web_search=true",
        "-c", "tools.view_image=false",
        "-c", "a.b.c=1",
    ]  # fmt: skip


def test_config_args_scalars_and_lists_are_toml() -> None:
    pairs = _pairs(
        config_args({"on": True, "off": False, "n": 3, "x": 0.5, "names": ["a", "b c"], "nums": [1, 2], "t": {}})
    )
    assert pairs == {
        "on": "true",
        "off": "false",
        "n": "3",
        "x": "0.5",
        "names": '["a", "b c"]',
        "nums": "[1, 2]",
        "t": "{}",
    }
    tomllib = pytest.importorskip("tomllib")
    parsed = {key: tomllib.loads(f"v = {value}")["v"] for key, value in pairs.items()}
    assert parsed == {"on": True, "off": False, "n": 3, "x": 0.5, "names": ["a", "b c"], "nums": [1, 2], "t": {}}


def test_config_args_empty() -> None:
    assert config_args({}) == []


def test_toml_value_inline_table_and_errors() -> None:
    assert toml_value({"k": "v", "n": [True]}) == '{k = "v", n = [true]}'
    assert toml_value("bare word") == "bare word"  # Codex falls back to the literal string
    with pytest.raises(ValueError, match="cannot pass"):
        toml_value(object())


def test_flat_config_keeps_raw_leaves() -> None:
    assert flat_config({"a": {"b": 1, "c": {}}, "d": [1]}) == [("a.b", 1), ("a.c", {}), ("d", [1])]
