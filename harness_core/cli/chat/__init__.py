"""`harness chat`: one session, a turn per prompt, its keys, `/` commands and words.

Layer: CLI command group; knows no concrete provider.
"""
