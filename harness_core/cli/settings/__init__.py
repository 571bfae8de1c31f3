"""The settings files (user config.toml, project .harness.toml): loaded, checked against what is installed,
laid under the command line; a provider's options as the keys that set them.

Layer: CLI base, below the command groups; no click commands, no concrete provider.
"""
