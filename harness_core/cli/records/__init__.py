"""Recorded runs read back for a person: a run's details and the reports of `runs` and `show`; the lines saying
what an undo did.

Layer: CLI base, below the command groups; knows the run store and the event models, no concrete provider.
"""
