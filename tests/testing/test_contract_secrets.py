"""What the contract counts as a run's secrets and where it finds one: a long value anywhere, a short one only where
it is unmistakably that secret (beside its name, under a secret-looking field), never in ordinary text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness_core import ProviderRaw, TextDelta
from harness_core.testing.contract._secrets import (
    Secret,
    assert_no_secrets_in_events,
    assert_no_secrets_in_files,
    find_secrets,
    secrets_of,
)


def test_secret_looking_names_and_credential_shapes_are_secrets_whatever_their_length() -> None:
    found = secrets_of({"MYAGENT_API_KEY": "k", "MYAGENT_MODEL": "gpt-x", "PLAIN": "sk-proj-Qm7Tz2Lx9Vb4Nc8Rw1"},
                       {"GITHUB_TOKEN": "ghp-short", "HOME": "/home/me", "EMPTY_TOKEN": ""})
    assert [(s.name, s.origin) for s in found] == [("MYAGENT_API_KEY", "spec.env"), ("PLAIN", "spec.env"),
                                                   ("GITHUB_TOKEN", "the process environment")]


@pytest.mark.parametrize("text", [
    '{"line": "MYAGENT_API_KEY=xq7 ready"}',
    '{"env": {"MYAGENT_API_KEY": "xq7"}}',
    '{"line": "{\\"MYAGENT_API_KEY\\": \\"xq7\\"}"}',
])
def test_a_short_value_beside_its_name_is_found(text: str) -> None:
    secret = Secret("MYAGENT_API_KEY", "xq7", "spec.env")
    assert [leak.secret for leak in find_secrets(text, json.loads(text), [secret])] == [secret]


def test_a_short_value_under_a_secret_looking_field_is_found_also_inside_a_json_string() -> None:
    secret = Secret("MYAGENT_API_KEY", "xq7", "spec.env")
    data = {"payload": {"config": json.dumps({"auth": {"apiKey": "xq7"}})}}
    (leak,) = find_secrets(json.dumps(data), data, [secret])
    assert leak.how == "the secret-looking field `payload.config.auth.apiKey`"


def test_a_short_value_in_ordinary_text_is_not_a_leak() -> None:
    secret = Secret("MYAGENT_API_KEY", "xq7", "spec.env")
    data = {"text": "xq7 xq7-ish", "max_tokens": "xq7", "MYAGENT_API_KEY_HINT": "set it", "path": "/tmp/xq7"}
    assert find_secrets(json.dumps(data), data, [secret]) == []


def test_the_failure_names_the_variable_and_says_secret_without_printing_the_value(tmp_path: Path) -> None:
    long = Secret("MYAGENT_TOKEN", "tok-9f8e7d6c5b4a", "the process environment")
    short = Secret("MYAGENT_API_KEY", "xq7", "spec.env")
    event = ProviderRaw(method="banner", payload={"apiKey": "xq7", "note": "tok-9f8e7d6c5b4a"}, seq=4)
    with pytest.raises(AssertionError) as caught:
        assert_no_secrets_in_events([TextDelta(text="hello"), event], [long, short])
    message = str(caught.value).splitlines()[0]
    assert message.startswith("event #4 (provider_raw) carries the value of the secrets MYAGENT_TOKEN (from the "
                              "process environment) as its value, MYAGENT_API_KEY (from spec.env, a 3-character "
                              "value) as the secret-looking field `payload.apiKey`")
    assert "tok-9f8e7d6c5b4a" not in str(caught.value) and "xq7" not in str(caught.value)
    log = tmp_path / "run.jsonl"
    log.write_text(json.dumps({"type": "provider_raw", "payload": {"line": "MYAGENT_API_KEY=xq7"}}) + "\n")
    with pytest.raises(AssertionError, match=r"run.jsonl holds the value of the secret MYAGENT_API_KEY"):
        assert_no_secrets_in_files([log], [long, short])
