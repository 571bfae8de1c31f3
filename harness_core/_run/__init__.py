"""The runner, in parts: what turns a provider's `run` into a well-formed, logged, bounded event stream.

Layer: core runtime (private; the public run API is exported by `harness_core`). Knows the provider interface
and the plugin host; knows nothing of any concrete provider, wire protocol or rendering. Nothing is imported
here: importing one part does not import the others. The parts, one job each: docs/runs.md.
"""
