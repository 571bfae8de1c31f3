"""The runner, in parts: what turns a provider's `run` into a well-formed, logged, bounded event stream.

Layer: core runtime (private; the public run API is exported by `harness_core`). Knows the provider interface
and the plugin host; knows nothing of any concrete provider, wire protocol or rendering. One job per module:

- `logs`      the run's two files: the event log and the wire log (opened before anything is spawned);
- `state`     what the runner tracks while a run lives: open tools, session id, usage, errors, the idle clock;
- `pipe`      the event path: stamp → run log → `harness_on_event` → `on_event` → bounded stream to the consumer;
- `approvals` the approval broker: callback, hook, or a reasoned deny; exactly one resolution per request;
- `context`   the `RunContext` a provider gets (thin: composes the three above, spawns its child);
- `live`      `LiveRun`, the run object: owns the cancel scopes and the provider call, from `run_started` to
              `done`; an owner (`open_run`, or a session with one run per turn) creates and drives it;
- `api`       pre-flight (resolve, validate, check capabilities, probe), `open_run`, `run`, `run_sync`;
- `replay`    a recorded wire log played back through the provider's real `run` (owns a `LiveRun` like `api`);
- `wirelog`   reads a wire log back: header, child scripts, side inputs, decisions.

Nothing is imported here: importing one part does not import the others.
"""
