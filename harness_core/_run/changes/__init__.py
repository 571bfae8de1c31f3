"""A run's file changes: what it changed (`tracker`: `files_changed`), unified diffs of one file (`diffs`), and
putting the files back (`undo`).

Imports nothing: importing one part does not import the others.
"""
