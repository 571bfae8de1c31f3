"""`harness config`: the settings files (user config.toml, project .harness.toml), loaded, checked, shown.

Layer: CLI command group; knows no concrete provider.
"""
