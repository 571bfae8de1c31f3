"""Replay: a recorded child played back (`recorded_child`) and a recorded run fed through the provider's real `run`
(`run`: `open_replay`, `replay`), both reading the wire log `_run.wirelog` owns.

Imports nothing: importing one part does not import the others.
"""
