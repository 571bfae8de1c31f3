"""A run or a session driven in this terminal: played live and rendered, approvals asked here, `--offline`'s
workspace, the untrusted-project notice; shared by `run`, `chat`, `attach`, `replay` and `approve`.

Layer: CLI base, below the command groups; knows the run API and the renderer, no concrete provider.
"""
