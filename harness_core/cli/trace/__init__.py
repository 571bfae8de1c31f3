"""`harness trace`: a run's OpenTelemetry GenAI span tree, printed from its log (no tracing backend needed).

Layer: CLI command group; the tree comes from `harness_core.spans`, as harness-otel exports it.
"""
