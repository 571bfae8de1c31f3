"""The options several commands share (spec, tool, scenario, `-o`, number, output and `--runs-dir` flags), each
option's click definition and the checks of its values.

Layer: CLI base, below the command groups; knows the spec's field names, no command and no provider.
"""
