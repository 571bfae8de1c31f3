"""What is installed and how to try it: `providers`, `doctor`, `schema`, `scenarios`, `demo`.

Layer: CLI command group; knows providers only through the plugin host.
"""
