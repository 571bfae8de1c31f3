"""`trace_env` and `traced_env`: a run's W3C carrier as an agent's `TRACEPARENT`/`TRACESTATE`."""

from __future__ import annotations

from harness_core.provider import trace_env, traced_env

PARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"


def test_the_carrier_replaces_the_callers_trace_variables() -> None:
    env = {"PATH": "/bin", "TRACEPARENT": "00-" + "1" * 32 + "-" + "2" * 16 + "-01", "TRACESTATE": "caller=1"}
    assert traced_env(env, {"traceparent": PARENT}) == {"PATH": "/bin", "TRACEPARENT": PARENT}
    assert traced_env(env, {"traceparent": PARENT, "tracestate": "h=1"}) == {
        "PATH": "/bin", "TRACEPARENT": PARENT, "TRACESTATE": "h=1"}
    assert env["TRACESTATE"] == "caller=1"  # not changed in place


def test_an_empty_carrier_leaves_the_environment_as_it_is() -> None:
    env = {"TRACEPARENT": PARENT, "TRACESTATE": "caller=1"}
    assert traced_env(env, {}) == env and traced_env(env, {}) is not env
    assert trace_env({}) == {} and trace_env({"traceparent": PARENT, "baggage": "k=v"}) == {"TRACEPARENT": PARENT}
