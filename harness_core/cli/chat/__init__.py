"""`harness chat`: one session, a turn per prompt, its keys, `/` commands and words.

Layer: CLI command group; imports no other command group; knows no concrete provider.
"""
