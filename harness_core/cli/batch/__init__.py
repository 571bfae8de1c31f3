"""`harness batch`: many tasks through `harness_core.batch`, with a progress view; `harness report`: what they came to.

Layer: CLI command group; knows no concrete provider nor executor.
"""
