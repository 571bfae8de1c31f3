"""Reading what a command does from its text, the way the app-server's commandActions would say it."""

from __future__ import annotations

import pytest

from harness_codex_exec.commands import classify_command, unwrap_shell


@pytest.mark.parametrize(
    ("command", "kind", "title", "path"),
    [
        ("/bin/bash -lc 'cat notes.txt'", "read", "Reading file", "notes.txt"),
        ("bash -lc 'sed -n 1,200p src/app.py'", "read", "Reading file", "src/app.py"),
        ("head -n 20 README.md", "read", "Reading file", "README.md"),
        ("tail -5 log.txt", "read", "Reading file", "log.txt"),
        ("/bin/bash -lc 'ls -la'", "search", "Listing files", None),
        ("ls src", "search", "Listing files", "src"),
        ("rg -n TODO .", "search", "Searching", None),
        ("/bin/bash -lc 'grep -R alpha .'", "search", "Searching", None),
        ("git grep foo", "search", "Searching", None),
        ("cat a.txt b.txt", "shell", "Running command", None),
        ("/bin/bash -lc 'cat somefile.txt && echo hello > hello.txt'", "shell", "Running command", None),
        ("sed -i s/a/b/ x.txt", "shell", "Running command", None),
        ("cat x | head", "shell", "Running command", None),
        ("echo harness-ok", "shell", "Running command", None),
        ("bash -lc 'unterminated", "shell", "Running command", None),
    ],
)
def test_classify(command: str, kind: str, title: str, path: str | None) -> None:
    action = classify_command(command)
    assert (action.kind.value, action.title, action.path) == (kind, title, path)


def test_unwrap_shell() -> None:
    assert unwrap_shell("/bin/bash -lc 'echo hi'") == "echo hi"
    assert unwrap_shell("zsh -c 'ls'") == "ls"
    assert unwrap_shell("python -c 'print(1)'") == "python -c 'print(1)'"
